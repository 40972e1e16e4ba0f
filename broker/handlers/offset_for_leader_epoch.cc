#include "protocol/messages/offset_for_leader_epoch.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/partition_call.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::offset_for_leader_epoch_response;
using epoch_end_offset = response::offset_for_leader_topic_result::epoch_end_offset;

boost::asio::awaitable<response> run(request_ctx& ctx,
                                     protocol::offset_for_leader_epoch_request& req) {
    auto& svc = ctx.svc;
    response resp;
    auto snap = svc.store.snapshot();
    const bool may_lead = svc.store.may_lead();
    // Kafka (KIP-320): ClusterAction on the cluster (followers), else Describe on each topic
    // (consumers checking for truncation).
    request_authz authz(ctx, *snap);
    const bool cluster_action = authz.cluster(security::acl_operation::cluster_action);
    for (const auto& t : req.topics) {
        auto& tr = resp.topics.emplace_back();
        tr.topic = t.topic;
        const auto* topic = snap->find(t.topic);
        const bool denied =
            !cluster_action && !authz.topic(security::acl_operation::describe, t.topic);
        for (const auto& p : t.partitions) {
            epoch_end_offset out;
            out.partition = p.partition;
            if (denied) {
                out.error_code = code(error_code::topic_authorization_failed);
                tr.partitions.push_back(out);
                continue;
            }
            if (topic == nullptr || !topic->has_partition(p.partition)) {
                out.error_code = code(error_code::unknown_topic_or_partition);
                tr.partitions.push_back(out);
                continue;
            }
            if (auto e = leadership_error(svc, may_lead, topic->partitions[p.partition]);
                e != error_code::none) {
                out.error_code = code(e);
                tr.partitions.push_back(out);
                continue;
            }
            int32_t asked = p.leader_epoch;
            int32_t current = p.current_leader_epoch;
            model::topic_partition tp{t.topic, model::partition_id(p.partition)};
            // Answered by the partition itself: a follower truncating (KIP-101/279) must hear
            // the epochs of the leader it will fetch from, not of a metadata snapshot that the
            // partition has not applied yet.
            std::function<epoch_end_offset(replication::partition*)> fn =
                [asked, current](replication::partition* part) {
                    epoch_end_offset e;
                    if (part == nullptr) {
                        // Led here per metadata, but the log is not open yet: retriable.
                        e.error_code = code(error_code::not_leader_or_follower);
                        return e;
                    }
                    auto entry = part->end_offset_for_epoch(model::leader_epoch(asked), current);
                    if (!entry) {
                        e.error_code = code(to_kafka_error(entry.error()));
                        return e;
                    }
                    e.leader_epoch = entry.value().epoch.value();
                    e.end_offset = entry.value().start_offset.value();
                    return e;
                };
            auto found = co_await on_partition<epoch_end_offset>(svc.partitions, tp, fn);
            found.partition = p.partition;
            tr.partitions.push_back(found);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_offset_for_leader_epoch(request_ctx& ctx) {
    return typed_handler<protocol::offset_for_leader_epoch_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
