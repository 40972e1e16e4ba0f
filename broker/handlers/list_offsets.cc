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

// Kafka's special timestamps.
constexpr int64_t latest = -1;
constexpr int64_t earliest = -2;
constexpr int64_t max_timestamp = -3;
constexpr int64_t earliest_local = -4;
constexpr int64_t latest_tiered = -5;

// Kafka's replica id of a consumer's request (a follower's id, or -2 for a debugging tool,
// otherwise).
constexpr int32_t consumer_replica_id = -1;

// KIP-207, as Kafka's Partition.fetchOffsetForTimestamp: a leader whose high watermark is still
// below the start offset of its leader epoch (a new leader whose followers have not caught up yet)
// may not answer what its consumers could read: "latest", and a timestamp lookup whose record is
// not below the high watermark, fail with OFFSET_NOT_AVAILABLE (v5+; LEADER_NOT_AVAILABLE
// before), both retriable; "earliest" is answered. Only for clients' requests (v1+, replica id
// -1: those with an isolation level; Kafka's v0 path has no such check).
struct lagging_check {
    bool client = false;  // the request is a consumer's (v1+, replica id -1)
    int16_t version = 0;
    // A consumer's isolation_level 1 (v2+): "latest" and timestamp lookups end at the last
    // stable offset instead of the high watermark (Kafka's lastFetchableOffset).
    bool read_committed = false;
};

partition_response lookup(replication::partition* part, int16_t version, int32_t current_epoch,
                          int32_t our_epoch, int64_t ts, lagging_check check) {
    partition_response out;
    if (part == nullptr) {
        // Led here per metadata, but the log is not open yet: retriable.
        out.error_code = code(error_code::not_leader_or_follower);
        return out;
    }
    storage::partition_log* plog = &part->log();
    if (current_epoch >= 0 && current_epoch != our_epoch) {
        out.error_code = code(current_epoch > our_epoch ? error_code::unknown_leader_epoch
                                                        : error_code::fenced_leader_epoch);
        return out;
    }
    if (ts == latest_tiered) {
        // No tiered storage: nothing is tiered.
        out.offset = -1;
        out.timestamp = -1;
        return out;
    }
    const auto hw = plog->high_watermark();
    const auto epoch_start = part->leader_epoch_start();
    const bool lagging = check.client && epoch_start && *epoch_start > hw;
    const auto not_available = [&] {
        partition_response e;
        e.error_code = code(check.version >= 5 ? error_code::offset_not_available
                                               : error_code::leader_not_available);
        return e;
    };
    if (ts == earliest_local) {
        ts = earliest;
    }
    if (lagging && ts == latest) {
        return not_available();
    }
    const auto bound = check.read_committed ? plog->last_stable_offset() : hw;
    auto r = plog->offset_for_timestamp(model::timestamp(ts), bound);
    if (!r) {
        out.error_code = code(to_kafka_error(r.error()));
        return out;
    }
    auto found = r.value();
    if (found && ts != latest && ts != earliest && found->offset >= bound) {
        found.reset();  // not readable yet: as if nothing qualified (Kafka: offset -1)
    }
    if (!found && lagging && ts != earliest) {
        return not_available();
    }
    if (!found) {
        out.offset = -1;
        out.timestamp = -1;
    } else {
        out.offset = found->offset.value();
        out.timestamp = (ts == latest || ts == earliest) ? -1 : found->ts.value();
        if (found->epoch) {
            out.leader_epoch = found->epoch->value();
        } else {
            out.leader_epoch = our_epoch;
        }
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
            int32_t our_epoch = topic->partitions[p.partition_index].leader_epoch;
            int16_t version = ctx.version();
            int32_t current = p.current_leader_epoch;
            int64_t ts = p.timestamp;
            const bool client = version >= 1 && req.replica_id == consumer_replica_id;
            lagging_check check{client, version,
                                client && version >= 2 && req.isolation_level == 1};
            model::topic_partition tp{t.name, model::partition_id(p.partition_index)};
            std::function<partition_response(replication::partition*)> fn =
                [version, current, our_epoch, ts, check](replication::partition* part) {
                    return lookup(part, version, current, our_epoch, ts, check);
                };
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
