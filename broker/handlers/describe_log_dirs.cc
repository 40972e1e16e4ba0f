#include "protocol/messages/describe_log_dirs.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/partition_call.h"

#include <filesystem>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::describe_log_dirs_response;
using result_t = response::describe_log_dirs_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::describe_log_dirs_request& req) {
    auto& svc = ctx.svc;
    response resp;
    // Kafka: Describe on the cluster, or an empty answer (v3+ says why at the top level).
    if (!request_authz(ctx, *svc.store.snapshot()).cluster(security::acl_operation::describe)) {
        resp.error_code = code(protocol::error_code::cluster_authorization_failed);
        co_return resp;
    }
    auto& dir = resp.results.emplace_back();
    dir.log_dir = svc.log_dir;
    std::error_code ec;
    auto space = std::filesystem::space(svc.log_dir, ec);
    if (!ec) {
        dir.total_bytes = static_cast<int64_t>(space.capacity);
        dir.usable_bytes = static_cast<int64_t>(space.available);
    }
    auto snap = svc.store.snapshot();
    // null topics = every partition.
    std::vector<std::pair<std::string, std::vector<int32_t>>> targets;
    if (!req.topics) {
        for (const auto& [name, t] : snap->topics) {
            std::vector<int32_t> ps;
            for (const auto& p : t.partitions) {
                ps.push_back(p.partition);
            }
            targets.emplace_back(name, std::move(ps));
        }
    } else {
        for (const auto& t : *req.topics) {
            targets.emplace_back(t.topic, t.partitions);
        }
    }
    for (const auto& [name, parts] : targets) {
        const auto* t = snap->find(name);
        if (t == nullptr) {
            continue;  // Kafka leaves unknown partitions out
        }
        result_t::describe_log_dirs_topic tr;
        tr.name = name;
        for (int32_t p : parts) {
            if (!t->has_partition(p)) {
                continue;
            }
            model::topic_partition tp{name, model::partition_id(p)};
            std::function<int64_t(replication::partition*)> fn =
                [](replication::partition* part) -> int64_t {
                return part == nullptr ? -1 : static_cast<int64_t>(part->size_bytes());
            };
            int64_t size = co_await on_partition<int64_t>(svc.partitions, tp, fn);
            if (size < 0) {
                continue;
            }
            tr.partitions.push_back({p, size, 0, false, {}});
        }
        dir.topics.push_back(std::move(tr));
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_log_dirs(request_ctx& ctx) {
    return typed_handler<protocol::describe_log_dirs_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
