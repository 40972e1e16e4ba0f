#include "protocol/messages/list_offsets.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/partition_call.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::list_offsets_response;
using partition_response = response::list_offsets_topic_response::list_offsets_partition_response;

// Kafka's special timestamps the handler itself looks at.
constexpr int64_t latest = -1;
constexpr int64_t earliest = -2;
constexpr int64_t max_timestamp = -3;

// Kafka's replica ids: a consumer's request, and a debugging tool's (which may ask a follower).
constexpr int32_t consumer_replica_id = -1;
constexpr int32_t debugging_replica_id = -2;

// The partition's door answers (partition::offset_for: leadership, epoch fencing, the bound the
// request's isolation gives, KIP-207); this turns its answer into Kafka's fields.
partition_response lookup(replication::partition* part, int16_t version,
                          const replication::partition::offset_query& q) {
    partition_response out;
    if (part == nullptr) {
        // Led here per metadata, but the log is not open yet: retriable.
        out.error_code = code(error_code::not_leader_or_follower);
        return out;
    }
    auto r = part->offset_for(q);
    if (!r) {
        // KIP-207's answer is OFFSET_NOT_AVAILABLE from v5, LEADER_NOT_AVAILABLE before.
        out.error_code = r.error() == replication::errc::offset_not_available && version < 5
                             ? code(error_code::leader_not_available)
                             : code(to_kafka_error(r.error()));
        return out;
    }
    const auto& found = r.value();
    if (!found) {
        out.offset = -1;
        out.timestamp = -1;
    } else {
        out.offset = found->offset.value();
        out.timestamp =
            (q.timestamp == latest || q.timestamp == earliest) ? -1 : found->ts.value();
        out.leader_epoch = found->epoch ? found->epoch->value() : -1;
    }
    if (version == 0) {
        // v0 answers a list of offsets (at most max_num_offsets; clients ask for one).
        out.old_style_offsets = {out.offset >= 0 ? out.offset : 0};
    }
    return out;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::list_offsets_request& req) {
    auto& svc = ctx.svc;
    response resp;
    if (!charge_items<partition_response>(ctx, partitions_named(req.topics)) ||
        !charge_items<response::list_offsets_topic_response>(ctx, req.topics.size())) {
        co_return resp;
    }
    auto snap = svc.store.snapshot();
    const bool may_lead = svc.store.may_lead();
    // Kafka: Describe on each topic, checked before the topic is looked up.
    request_authz authz(ctx, *snap);
    for (const auto& t : req.topics) {
        auto& tr = resp.topics.emplace_back();
        tr.name = t.name;
        const auto* topic = snap->find(t.name);
        const bool denied = !authz.topic(security::acl_operation::describe, t.name);
        for (const auto& p : t.partitions) {
            if (denied) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = p.partition_index;
                pr.error_code = code(error_code::topic_authorization_failed);
                continue;
            }
            if (topic == nullptr || !topic->has_partition(p.partition_index)) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = p.partition_index;
                pr.error_code = code(error_code::unknown_topic_or_partition);
                continue;
            }
            if (auto e = leadership_error(svc, may_lead, topic->partitions[p.partition_index]);
                e != error_code::none) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = p.partition_index;
                pr.error_code = code(e);
                continue;
            }
            if (p.timestamp == max_timestamp && ctx.version() < 7) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = p.partition_index;
                pr.error_code = code(error_code::unsupported_version);
                continue;
            }
            int16_t version = ctx.version();
            // Kafka's isolation: a consumer's (v1+) request reads below the high watermark, or
            // the last stable offset with read_committed (v2+); a follower's or a debugging
            // tool's has none and reaches the log end. v0 keeps the high watermark.
            const bool consumer = version >= 1 && req.replica_id == consumer_replica_id;
            replication::partition::offset_query q;
            q.timestamp = p.timestamp;
            q.current_leader_epoch = p.current_leader_epoch;
            q.consumer = consumer;
            q.leader_only = req.replica_id != debugging_replica_id;
            if (consumer && version >= 2 && req.isolation_level == 1) {
                q.bound = replication::partition::offset_bound::last_stable;
            } else if (version >= 1 && !consumer) {
                q.bound = replication::partition::offset_bound::log_end;
            }
            model::topic_partition tp{t.name, model::partition_id(p.partition_index)};
            std::function<partition_response(replication::partition*)> fn =
                [version, q](replication::partition* part) { return lookup(part, version, q); };
            auto pr = co_await on_partition<partition_response>(svc.partitions, tp, fn);
            pr.partition_index = p.partition_index;
            tr.partitions.push_back(std::move(pr));
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_list_offsets(request_ctx& ctx) {
    return typed_handler<protocol::list_offsets_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
