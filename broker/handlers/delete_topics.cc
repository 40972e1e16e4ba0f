#include "protocol/messages/delete_topics.h"

#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::delete_topics_response;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::delete_topics_request& req) {
    auto& svc = ctx.svc;
    response resp;
    // v0-5 name topics; v6 names or ids.
    std::vector<std::pair<std::optional<std::string>, protocol::uuid>> targets;
    for (const auto& n : req.topic_names) {
        targets.emplace_back(n, protocol::uuid{});
    }
    for (const auto& t : req.topics) {
        targets.emplace_back(t.name, t.topic_id);
    }
    for (auto& [name, id] : targets) {
        auto& r = resp.responses.emplace_back();
        r.name = name;
        r.topic_id = id;
        if (!name) {
            auto snap = svc.store.snapshot();
            const auto* t = snap->find(id);
            if (t == nullptr) {
                r.error_code = code(error_code::unknown_topic_id);
                continue;
            }
            r.name = t->name;
        }
        auto out = co_await delete_topic(svc, *r.name);
        r.error_code = code(out.error);
        if (out.topic) {
            r.topic_id = out.topic->id;
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_delete_topics(request_ctx& ctx) {
    return typed_handler<protocol::delete_topics_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
