// WriteTxnMarkers (API 27): the transaction coordinator asks the leaders of a transaction's
// partitions to end it. Per marker and partition, Kafka's handleWriteTxnMarkersRequest:
//   - Alter on the Cluster (KIP-664: Admin.abortTransaction, `kafka-transactions abort`, sends
//     this request to a partition's leader), else ClusterAction on the Cluster, else every
//     partition CLUSTER_AUTHORIZATION_FAILED;
//   - a partition with no replica here (or unknown) UNKNOWN_TOPIC_OR_PARTITION;
//   - one not led here NOT_LEADER_OR_FOLLOWER;
//   - else a control batch (commit or abort, with the coordinator epoch) appended with
//     acks=-1 and answered once committed (the high watermark covers it): the log's
//     INVALID_PRODUCER_EPOCH (an epoch older than the producer's), TRANSACTION_COORDINATOR_FENCED
//     (an older coordinator epoch), NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT.
// A committed marker on a __consumer_offsets partition is handed to the group coordinator
// (coordinator_service::on_transaction_marker), as Kafka's onTransactionCompleted.
//
// Every partition's append runs first (on its owner shard), then the waits, so the markers of
// one request replicate together.

#include "protocol/messages/write_txn_markers.h"

#include "broker/config/topic_config.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/partition_call.h"
#include "broker/metadata/internal_topics.h"
#include "broker/replication/errc.h"

#include <chrono>
#include <memory>
#include <vector>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using request = protocol::write_txn_markers_request;
using response = protocol::write_txn_markers_response;
using marker_result = response::writable_txn_marker_result;
using topic_result = marker_result::writable_txn_marker_topic_result;
using partition_result = topic_result::writable_txn_marker_partition_result;

// How long a marker may wait for its replication: Kafka's request.timeout.ms default, which its
// WriteTxnMarkers handler passes to appendRecords.
constexpr std::chrono::milliseconds marker_timeout{30000};

// One partition's marker, from its append to its answer.
struct marker_item {
    model::topic_partition tp;
    model::producer_id pid;
    model::producer_epoch epoch;
    bool commit = false;
    int32_t coordinator_epoch = 0;
    int32_t min_insync = 1;
    partition_result* out = nullptr;
    storage::append_result appended;
};

struct append_outcome {
    error_code error = error_code::none;
    storage::append_result appended;
};

boost::asio::awaitable<std::error_code> wait_committed(cluster::partition_manager* pm,
                                                       model::topic_partition tp,
                                                       storage::append_result appended,
                                                       replication::steady_time deadline,
                                                       int32_t min_insync) {
    auto* p = pm->partition_here(tp);
    if (p == nullptr) {
        co_return make_error_code(replication::errc::not_leader_or_follower);
    }
    co_return co_await p->replicated(appended, -1, deadline, min_insync);
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    auto& svc = ctx.svc;
    response resp;
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    const bool denied = !authz.cluster(security::acl_operation::alter) &&
                        !authz.cluster(security::acl_operation::cluster_action);
    const bool may_lead = svc.store.may_lead();
    std::vector<std::unique_ptr<marker_item>> items;

    size_t partitions = 0;
    for (const auto& m : req.markers) {
        for (const auto& t : m.topics) {
            partitions += t.partition_indexes.size();
        }
    }
    if (!charge_items<partition_result>(ctx, partitions)) {
        co_return resp;
    }
    resp.markers.reserve(req.markers.size());
    for (const auto& m : req.markers) {
        auto& mr = resp.markers.emplace_back();
        mr.producer_id = m.producer_id;
        mr.topics.reserve(m.topics.size());
        for (const auto& t : m.topics) {
            auto& tr = mr.topics.emplace_back();
            tr.name = t.name;
            // Reserved to its final size: items point into it.
            tr.partitions.reserve(t.partition_indexes.size());
            const auto* topic = snap->find(t.name);
            for (int32_t index : t.partition_indexes) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = index;
                if (denied) {
                    pr.error_code = code(error_code::cluster_authorization_failed);
                    continue;
                }
                if (topic == nullptr || !topic->has_partition(index)) {
                    pr.error_code = code(error_code::unknown_topic_or_partition);
                    continue;
                }
                // Kafka: no replica here at all is UNKNOWN_TOPIC_OR_PARTITION, a replica that
                // does not lead NOT_LEADER_OR_FOLLOWER.
                if (!svc.partitions.hosts(topic->partitions[index])) {
                    pr.error_code = code(error_code::unknown_topic_or_partition);
                    continue;
                }
                auto item = std::make_unique<marker_item>();
                item->tp = {t.name, model::partition_id(index)};
                if (auto e = leadership_error(svc, may_lead, topic->partitions[index]);
                    e != error_code::none) {
                    pr.error_code = code(e);
                    continue;
                }
                item->pid = model::producer_id(m.producer_id);
                item->epoch = model::producer_epoch(m.producer_epoch);
                item->commit = m.transaction_result;
                item->coordinator_epoch = m.coordinator_epoch;
                item->min_insync = static_cast<int32_t>(
                    config::resolve_topic(svc.config, topic->configs).min_insync_replicas);
                item->out = &pr;
                items.push_back(std::move(item));
            }
        }
    }

    for (auto& item : items) {
        const marker_item* it = item.get();
        std::function<append_outcome(replication::partition*)> fn =
            [it](replication::partition* p) {
                append_outcome o;
                if (p == nullptr) {
                    o.error = error_code::not_leader_or_follower;
                    return o;
                }
                auto r = p->append_txn_marker(it->pid, it->epoch, it->commit, it->coordinator_epoch,
                                              it->min_insync);
                if (!r) {
                    o.error = to_kafka_error(r.error());
                    return o;
                }
                o.appended = r.value();
                return o;
            };
        auto o = co_await on_partition<append_outcome>(svc.partitions, item->tp, fn);
        item->out->error_code = code(o.error);
        item->appended = o.appended;
    }
    if (!items.empty()) {
        svc.partitions.notify_data_arrived();
    }
    const auto deadline = std::chrono::steady_clock::now() + marker_timeout;
    for (auto& item : items) {
        if (item->out->error_code != 0) {
            continue;
        }
        auto ex = svc.partitions.pool().executor(svc.partitions.shard_of(item->tp));
        auto tp = item->tp;
        auto appended = item->appended;
        auto min_insync = item->min_insync;
        auto ec = co_await runtime::run_on(
            ex, wait_committed(&svc.partitions, tp, appended, deadline, min_insync));
        if (ec) {
            item->out->error_code = code(to_kafka_error(ec));
            continue;
        }
        if (item->tp.topic == metadata::consumer_offsets_topic && svc.groups != nullptr) {
            svc.groups->on_transaction_marker(item->tp.partition.value(), item->pid, item->epoch,
                                              item->commit);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_write_txn_markers(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
