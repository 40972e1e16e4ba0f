#include "protocol/messages/delete_topics.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::delete_topics_response;

// A topic named (or an id given) more than once is deleted by none of its entries: Kafka's
// ControllerApis answers one INVALID_REQUEST "Duplicate topic name." for it instead.
struct target {
    std::optional<std::string> name;
    protocol::uuid id;
    bool duplicate = false;
};

std::vector<target> unique_targets(const protocol::delete_topics_request& req) {
    std::vector<target> out;
    auto add = [&out](std::optional<std::string> name, const protocol::uuid& id) {
        for (auto& t : out) {
            if (name ? t.name == name : (!t.name && t.id == id)) {
                t.duplicate = true;
                return;
            }
        }
        out.push_back({std::move(name), id, false});
    };
    // v0-5 name topics; v6 names or ids.
    for (const auto& n : req.topic_names) {
        add(n, protocol::uuid{});
    }
    for (const auto& t : req.topics) {
        add(t.name, t.name ? protocol::uuid{} : t.topic_id);
    }
    return out;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::delete_topics_request& req) {
    auto& svc = ctx.svc;
    response resp;
    std::vector<target> targets = unique_targets(req);
    // Kafka (ControllerApis.deleteTopics): Delete on the cluster allows every topic; otherwise a
    // topic needs Describe (else TOPIC_AUTHORIZATION_FAILED, whether it exists or not), then
    // exists (else UNKNOWN_TOPIC_OR_PARTITION: Describe may learn that), then Delete.
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    const bool cluster_delete = authz.cluster(security::acl_operation::remove);
    auto may = [&](security::acl_operation op, const std::string& name) {
        return cluster_delete || authz.topic(op, name);
    };
    for (const auto& target : targets) {
        auto& r = resp.responses.emplace_back();
        r.name = target.name;
        r.topic_id = target.id;
        if (target.duplicate) {
            r.error_code = code(error_code::invalid_request);
            r.error_message = target.name ? "Duplicate topic name." : "Duplicate topic id.";
            continue;
        }
        if (!target.name) {
            const auto* t = snap->find(target.id);
            if (t == nullptr) {
                r.error_code = code(error_code::unknown_topic_id);
                continue;
            }
            if (!may(security::acl_operation::describe, t->name)) {
                r.error_code = code(error_code::topic_authorization_failed);
                continue;
            }
            r.name = t->name;
        } else if (!may(security::acl_operation::describe, *r.name)) {
            r.error_code = code(error_code::topic_authorization_failed);
            continue;
        } else if (snap->find(*r.name) == nullptr) {
            r.error_code = code(error_code::unknown_topic_or_partition);
            continue;
        }
        if (!may(security::acl_operation::remove, *r.name)) {
            r.error_code = code(error_code::topic_authorization_failed);
            continue;
        }
        auto out = co_await delete_topic(svc, *r.name);
        r.error_code = code(out.error);
        r.error_message = out.message;
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
