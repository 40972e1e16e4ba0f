// ListPartitionReassignments (46, v0; KIP-455): the reassignments asked for or under way, from
// this broker's snapshot (reassignment_request.h view_of): the replica set, and the replicas
// being added and removed. Named partitions that do not exist are left out, as Kafka does.

#include "protocol/messages/list_partition_reassignments.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"

namespace spool::broker::handlers {

namespace {

using request = protocol::list_partition_reassignments_request;
using response = protocol::list_partition_reassignments_response;
using ongoing_topic = response::ongoing_topic_reassignment;

void add_if_reassigning(ongoing_topic& out, const metadata::partition_state& p) {
    auto v = metadata::view_of(p);
    if (!v) {
        return;
    }
    auto& op = out.partitions.emplace_back();
    op.partition_index = p.partition;
    op.replicas = std::move(v->replicas);
    op.adding_replicas = std::move(v->adding);
    op.removing_replicas = std::move(v->removing);
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    resp.error_message = std::nullopt;  // Kafka's null: no error
    auto snap = ctx.svc.store.snapshot();
    // Kafka: Describe on the cluster.
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::describe)) {
        resp.error_code = code(protocol::error_code::cluster_authorization_failed);
        co_return resp;
    }
    if (req.topics) {
        uint64_t named = 0;
        for (const auto& t : *req.topics) {
            named += t.partition_indexes.size();
        }
        if (!charge_items<ongoing_topic::ongoing_partition_reassignment>(ctx, named)) {
            co_return resp;
        }
        for (const auto& t : *req.topics) {
            const auto* topic = snap->find(t.name);
            if (topic == nullptr) {
                continue;
            }
            ongoing_topic out;
            out.name = t.name;
            for (int32_t p : t.partition_indexes) {
                if (topic->has_partition(p)) {
                    add_if_reassigning(out, topic->partitions[static_cast<size_t>(p)]);
                }
            }
            if (!out.partitions.empty()) {
                resp.topics.push_back(std::move(out));
            }
        }
        co_return resp;
    }
    for (const auto& [name, topic] : snap->topics) {
        ongoing_topic out;
        out.name = name;
        for (const auto& p : topic.partitions) {
            add_if_reassigning(out, p);
        }
        if (!out.partitions.empty()) {
            resp.topics.push_back(std::move(out));
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_list_partition_reassignments(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
