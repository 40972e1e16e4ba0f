// DescribeProducers (API 61, `kafka-transactions describe-producers` and find-hanging): the
// producer state of each partition as its replica here holds it (Kafka's
// Partition.activeProducerState, which answers on a follower too): per producer its epoch, last
// sequence and timestamp, the coordinator epoch of its last marker and the first offset of its
// open transaction (-1: none). Read on the topic, else TOPIC_AUTHORIZATION_FAILED; an unknown
// partition UNKNOWN_TOPIC_OR_PARTITION; one with no replica here NOT_LEADER_OR_FOLLOWER.

#include "protocol/messages/describe_producers.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/partition_call.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::describe_producers_response;
using partition_response = response::topic_response::partition_response;

partition_response describe(replication::partition* p) {
    partition_response out;
    if (p == nullptr) {
        out.error_code = code(error_code::not_leader_or_follower);
        return out;
    }
    const auto& producers = p->producers().all();
    out.active_producers.reserve(producers.size());
    for (const auto& [pid, e] : producers) {
        auto& s = out.active_producers.emplace_back();
        s.producer_id = pid.value();
        s.producer_epoch = e.epoch.value();
        s.last_sequence = e.last() ? e.last()->last_seq.value() : -1;
        s.last_timestamp = e.last_timestamp.value();
        s.coordinator_epoch = e.coordinator_epoch;
        s.current_txn_start_offset = e.current_txn_first_offset.value();
    }
    return out;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::describe_producers_request& req) {
    auto& svc = ctx.svc;
    response resp;
    uint64_t partitions = 0;
    for (const auto& t : req.topics) {
        partitions += t.partition_indexes.size();
    }
    if (!charge_items<partition_response>(ctx, partitions)) {
        co_return resp;
    }
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    for (const auto& t : req.topics) {
        auto& tr = resp.topics.emplace_back();
        tr.name = t.name;
        const auto* topic = snap->find(t.name);
        const bool denied = !authz.topic(security::acl_operation::read, t.name);
        for (int32_t index : t.partition_indexes) {
            partition_response pr;
            if (denied) {
                pr.error_code = code(error_code::topic_authorization_failed);
            } else if (topic == nullptr || !topic->has_partition(index)) {
                pr.error_code = code(error_code::unknown_topic_or_partition);
            } else if (!svc.partitions.hosts(topic->partitions[index])) {
                pr.error_code = code(error_code::not_leader_or_follower);
            } else {
                model::topic_partition tp{t.name, model::partition_id(index)};
                std::function<partition_response(replication::partition*)> fn = describe;
                pr = co_await on_partition<partition_response>(svc.partitions, tp, fn);
            }
            pr.partition_index = index;
            tr.partitions.push_back(std::move(pr));
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_producers(request_ctx& ctx) {
    return typed_handler<protocol::describe_producers_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
