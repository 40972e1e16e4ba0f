#include "protocol/messages/produce.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/txn/partition_verifier.h"
#include "broker/metadata/internal_topics.h"
#include "broker/metrics/topic_probe.h"
#include "broker/replication/errc.h"
#include "broker/runtime/async_event.h"
#include "broker/runtime/asio.h"
#include "broker/storage/errc.h"
#include "common/log.h"
#include "protocol/records/batch_parser.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <set>
#include <string_view>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::produce_response;
using partition_response = response::topic_produce_response::partition_produce_response;
namespace rec = protocol::records;

// One partition's batches on their way to the owner shard and back.
struct append_item {
    model::topic_partition tp;
    std::span<uint8_t> bytes;
    int32_t leader_epoch = 0;
    uint64_t records = 0;    // per the batch headers, for the traffic metrics
    int32_t min_insync = 1;  // the topic's effective min.insync.replicas
    partition_response* out = nullptr;
    // Set by the append: what the partition's second stage (replicated()) waits for.
    storage::append_result appended;
    // KIP-890 part 1: the producer of the partition's first transactional batch (pid -1: none)
    // and the verification its append presents (nullopt: none asked).
    int64_t txn_pid = -1;
    int16_t txn_epoch = -1;
    int32_t txn_first_seq = -1;
    storage::verification_guard guard;
};

// What every partition of one request shares.
struct produce_params {
    int16_t acks = 1;
    // acks=-1: the request's timeout_ms from its arrival.
    replication::steady_time deadline;
};

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Checks the batches of one partition the way Kafka's LogValidator does before anything is
// written: sizes, CRC, codec, records, timestamps. Returns NONE or the partition's error, and
// counts the records the batch headers declare.
error_code validate(const request_ctx& ctx, std::span<const uint8_t> bytes,
                    const config::topic_settings& topic, std::optional<std::string>& message,
                    uint64_t& records) {
    if (bytes.empty()) {
        return error_code::invalid_record;
    }
    rec::validate_options opts;
    opts.origin = rec::batch_origin::client;
    opts.max_batch_size = static_cast<size_t>(topic.max_message_bytes);
    thread_local rec::decompress_buffer scratch;
    rec::batch_walker walker(bytes, opts, scratch);
    int64_t now = now_ms();
    while (!walker.done()) {
        auto info = walker.next();
        if (!info) {
            auto e = to_kafka_error(info.error());
            if (e == error_code::message_too_large && bytes.size() > size_t(topic.segment_bytes)) {
                e = error_code::record_list_too_large;
            }
            message = info.error().message();
            return e;
        }
        const auto& b = info.value();
        records += static_cast<uint64_t>(std::max(b.record_count, 0));
        if (b.codec() == rec::compression::zstd && ctx.version() < 7) {
            return error_code::unsupported_compression_type;
        }
        if (b.size > size_t(topic.segment_bytes)) {
            return error_code::record_list_too_large;
        }
        if (!topic.log_append_time && b.ts_type() == rec::timestamp_type::create_time) {
            int64_t ts = b.max_timestamp;
            const auto before = topic.timestamp_before_max_ms;
            const auto after = topic.timestamp_after_max_ms;
            if ((before != before.max() && ts < now - before.count()) ||
                (after != after.max() && ts > now + after.count())) {
                message = "Timestamp out of range";
                return error_code::invalid_timestamp;
            }
        }
    }
    return error_code::none;
}

// Kafka's ProduceRequest.hasTransactionalRecords: the first batch of some partition has the
// transactional bit (a producer's batches in one request are all transactional or none).
bool has_transactional_records(const protocol::produce_request& req) {
    for (const auto& td : req.topic_data) {
        for (const auto& pd : td.partition_data) {
            auto bytes = pd.records.bytes();
            if (bytes.size() >= rec::batch_header_size &&
                (rec::load_be16(bytes.data() + rec::batch_offset::attributes) &
                 rec::attribute::transactional) != 0) {
                return true;
            }
        }
    }
    return false;
}

// The append of one partition as its leader; records where the batches ended.
void append_as_leader(cluster::partition_manager* pm, const produce_params& params,
                      append_item* item) {
    auto* p = pm->partition_here(item->tp);
    if (p == nullptr) {
        // The metadata says this broker leads it, but its log is not open yet (the snapshot
        // arrived before replica_sync opened it) or is being removed: retriable.
        item->out->error_code = code(error_code::not_leader_or_follower);
        return;
    }
    auto r = p->append_as_leader(item->bytes, params.acks, item->min_insync, item->guard);
    if (!r) {
        item->out->error_code = code(to_kafka_error(r.error()));
        if (r.error() == replication::errc::not_enough_replicas) {
            item->out->error_message = fmt::format(
                "The size of the current ISR {} is insufficient to satisfy the min.isr "
                "requirement of {} for partition {}",
                p->isr().size(), p->capped_min_insync(item->min_insync), item->tp.dir_name());
        } else {
            item->out->error_message = r.error().message();
        }
        return;
    }
    item->out->base_offset = r.value().base_offset.value();
    item->out->log_append_time_ms = r.value().log_append_time.value();
    item->out->log_start_offset = r.value().log_start_offset.value();
    item->appended = r.value();
}

// Runs on the owner shard of every item: every append first, so a later partition's batches
// never wait for an earlier one's replication, then the waits (flush.messages; acks=-1 until
// the high watermark covers the batches, Kafka's produce purgatory).
boost::asio::awaitable<int> append_on_shard(cluster::partition_manager* pm, produce_params params,
                                            std::vector<append_item*> items) {
    for (auto* item : items) {
        append_as_leader(pm, params, item);
    }
    for (auto* item : items) {
        if (item->out->error_code != 0 ||
            !replication::partition::waits(item->appended, params.acks)) {
            continue;  // acks=0/1 without a flush policy: no coroutine frame per partition
        }
        // Looked up again: an earlier item's wait may have outlived this partition.
        auto* p = pm->partition_here(item->tp);
        auto ec = p == nullptr ? make_error_code(replication::errc::not_leader_or_follower)
                               : co_await p->replicated(item->appended, params.acks,
                                                        params.deadline, item->min_insync);
        if (ec) {
            item->out->error_code = code(to_kafka_error(ec));
        }
    }
    co_return 0;
}

// Appends on every owner shard at once and waits for all of them. Once the appends are queued
// the next request of the connection may start: each shard runs its queue in order, so a later
// request's batches still land after these on every partition (what idempotent producers with
// several requests in flight rely on), while reading the socket overlaps with the disk writes.
boost::asio::awaitable<void> append_on_all_shards(
    request_ctx& ctx, const produce_params& params,
    std::map<size_t, std::vector<append_item*>>& by_shard) {
    namespace asio = boost::asio;
    auto& svc = ctx.svc;
    auto here = co_await asio::this_coro::executor;
    size_t remaining = by_shard.size();
    std::exception_ptr failure;
    runtime::async_event all_done(here);
    const auto home = runtime::shard_pool::current_shard();
    auto finished = [&](std::exception_ptr e) {
        if (e && !failure) {
            failure = e;
        }
        if (--remaining == 0) {
            all_done.notify();
        }
    };
    for (auto& [shard, batch] : by_shard) {
        auto append = append_on_shard(&svc.partitions, params, std::move(batch));
        if (!home || shard == *home) {
            asio::co_spawn(
                svc.shards.executor(shard), std::move(append),
                asio::bind_executor(here, [&](std::exception_ptr e, int) { finished(e); }));
            continue;
        }
        // To another shard through its mailbox, as run_on hops (shard_pool.h): one queue per
        // target, so these appends stay in order with the connection's other requests there.
        svc.shards.spawn_between(*home, shard, std::move(append),
                                 [&finished](std::exception_ptr e, int) { finished(e); });
    }
    ctx.net.mark_ordered();
    while (remaining > 0) {
        co_await all_done.wait();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

// The producer of the first transactional batch of each partition (Kafka's handleProduceAppend
// reads every batch; a producer's batches in one request share it). False when two producers
// share the request (Kafka's "Transactional records contained more than one producer ID").
bool find_txn_producers(const std::vector<std::unique_ptr<append_item>>& items) {
    std::optional<std::pair<int64_t, int16_t>> seen;
    bool one = true;
    for (const auto& item : items) {
        auto bytes = item->bytes;
        size_t pos = 0;
        // validate() walked these batches already: every length is in bounds.
        while (bytes.size() - pos >= rec::batch_header_size) {
            const uint8_t* h = bytes.data() + pos;
            const auto attrs = rec::load_be16(h + rec::batch_offset::attributes);
            const auto pid = static_cast<int64_t>(rec::load_be64(h + rec::batch_offset::producer_id));
            const auto epoch =
                static_cast<int16_t>(rec::load_be16(h + rec::batch_offset::producer_epoch));
            if ((attrs & rec::attribute::transactional) != 0 && pid >= 0) {
                if (item->txn_pid < 0) {
                    item->txn_pid = pid;
                    item->txn_epoch = epoch;
                    // Kafka: the sequence of the partition's first batch.
                    item->txn_first_seq = static_cast<int32_t>(
                        rec::load_be32(bytes.data() + rec::batch_offset::base_sequence));
                }
                one = one && (!seen || *seen == std::pair{pid, epoch});
                seen = std::pair{pid, epoch};
            }
            pos += rec::log_overhead + rec::load_be32(h + rec::batch_offset::batch_length);
        }
    }
    return one;
}

// On one owner shard: Kafka's maybeStartTransactionVerification of each item.
boost::asio::awaitable<int> start_verification_on_shard(cluster::partition_manager* pm,
                                                        std::vector<append_item*> items) {
    for (auto* item : items) {
        auto* p = pm->partition_here(item->tp);
        if (p == nullptr) {
            item->out->error_code = code(error_code::not_leader_or_follower);
            continue;
        }
        auto guard = p->start_txn_verification(model::producer_id(item->txn_pid),
                                               model::sequence(item->txn_first_seq),
                                               model::producer_epoch(item->txn_epoch));
        if (!guard) {
            item->out->error_code = code(to_kafka_error(guard.error()));
            continue;
        }
        item->guard = guard.value();
    }
    co_return 0;
}

// Kafka's ReplicaManager.postVerificationCallback: how a verification failure reaches the
// producer. Retriable coordinator errors become NOT_ENOUGH_REPLICAS, which every client retries
// without a metadata refresh.
void refuse_unverified(partition_response& pr, error_code e) {
    switch (e) {
        case error_code::invalid_txn_state:
            pr.error_code = code(e);
            pr.error_message = "Partition was not added to the transaction";
            return;
        case error_code::concurrent_transactions:
        case error_code::network_exception:
        case error_code::coordinator_load_in_progress:
        case error_code::coordinator_not_available:
        case error_code::not_coordinator:
            pr.error_code = code(error_code::not_enough_replicas);
            pr.error_message = fmt::format(
                "Unable to verify the partition has been added to the transaction. Underlying "
                "error: {}",
                protocol::name(e));
            return;
        default:
            pr.error_code = code(e);
            return;
    }
}

// KIP-890 part 1 before the append (Kafka's handleProduceAppend): each partition whose producer
// has no transaction open there gets a guard from its leader, the coordinator is asked about
// those partitions at once, and the refused ones leave by_shard with their error. The others
// append presenting their guard (0 where a transaction was already open).
boost::asio::awaitable<void> verify_transaction(
    request_ctx& ctx, const std::string& transactional_id,
    const std::vector<std::unique_ptr<append_item>>& items,
    std::map<size_t, std::vector<append_item*>>& by_shard) {
    auto& svc = ctx.svc;
    std::map<size_t, std::vector<append_item*>> starting;
    for (const auto& item : items) {
        if (item->txn_pid >= 0) {
            starting[svc.partitions.shard_of(item->tp)].push_back(item.get());
        }
    }
    for (auto& [shard, batch] : starting) {
        auto start = start_verification_on_shard(&svc.partitions, std::move(batch));
        co_await runtime::run_on(svc.shards.executor(shard), std::move(start));
    }
    verify_request req;
    req.transactional_id = transactional_id;
    // Produce v12+ is transaction.version 2: the leader adds the partition on the producer's
    // behalf (KIP-890 part 2) where v11 and below only verify it.
    req.add = ctx.version() >= 12;
    std::vector<append_item*> asked;
    for (const auto& item : items) {
        if (item->txn_pid >= 0 && item->out->error_code == 0 && item->guard.value_or(0) != 0) {
            req.producer_id = item->txn_pid;
            req.producer_epoch = item->txn_epoch;
            req.partitions.emplace_back(item->tp.topic, item->tp.partition.value());
            asked.push_back(item.get());
        }
    }
    if (!asked.empty()) {
        auto outcome = co_await svc.txn_verifier->verify(req);
        for (auto* item : asked) {
            auto e = outcome[{item->tp.topic, item->tp.partition.value()}];
            if (e != error_code::none) {
                refuse_unverified(*item->out, e);
            }
        }
    }
    for (auto& kv : by_shard) {
        std::erase_if(kv.second, [](const append_item* i) { return i->out->error_code != 0; });
    }
    std::erase_if(by_shard, [](const auto& kv) { return kv.second.empty(); });
}

// The snapshot this request was checked against can be ahead of the local logs: replica_sync
// brings them in line a round later, which under load takes a second or more, so a partition
// the snapshot says this broker leads may not be open yet, or not leading here yet. Refusing
// it now (NOT_LEADER_OR_FOLLOWER) and taking the connection's next request once the logs caught
// up would let an idempotent producer's later batch in before its first: a producer new to the
// partition is taken at any sequence, as Kafka does, and the retried first batch then fails
// OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout. So the topics are brought in line
// here, before the connection's next request may start. Nothing is done while the logs follow
// the snapshot, the usual case.
boost::asio::awaitable<void> catch_up_logs(services& svc, const metadata::cluster_state& snap,
                                           const std::vector<std::unique_ptr<append_item>>& items) {
    if (items.empty() || snap.version <= svc.partitions.logs_version()) {
        co_return;
    }
    std::set<std::string_view> done;
    for (const auto& item : items) {
        if (!done.insert(item->tp.topic).second) {
            continue;
        }
        const auto* topic = snap.find(item->tp.topic);
        if (topic == nullptr) {
            continue;
        }
        metadata::topic_metadata t = *topic;
        // An error leaves the partition missing: its append answers NOT_LEADER_OR_FOLLOWER.
        (void)co_await svc.partitions.catch_up(std::move(t));
    }
}

// Bytes and records in, per topic, for the appends that succeeded.
void count_appended(metrics::topic_probe* traffic,
                    const std::vector<std::unique_ptr<append_item>>& items) {
    if (traffic == nullptr) {
        return;
    }
    for (const auto& item : items) {
        if (item->out->error_code == 0) {
            traffic->cached(item->tp.topic).produced(item->bytes.size(), item->records);
        }
    }
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::produce_request& req) {
    auto& svc = ctx.svc;
    response resp;
    auto snap = svc.store.snapshot();
    const bool may_lead = svc.store.may_lead();
    leader_hints hints;
    bool bad_acks = req.acks != 0 && req.acks != 1 && req.acks != -1;
    std::map<size_t, std::vector<append_item*>> by_shard;
    std::vector<std::unique_ptr<append_item>> items;
    std::map<std::string, config::topic_settings> settings;
    // Kafka's handleProduceRequest: a request with transactional records needs a transactional
    // id and Write on it (every partition fails otherwise, with or without an authorizer), then
    // Write on each topic, checked before the topic is looked up, so an unauthorized caller
    // cannot tell which topics exist.
    request_authz authz(ctx, *snap);
    const bool txn_records = has_transactional_records(req);
    const bool txn_denied =
        txn_records &&
        (!req.transactional_id ||
         !authz.allowed(security::acl_operation::write, security::resource_type::transactional_id,
                        *req.transactional_id));

    resp.responses.reserve(req.topic_data.size());
    for (auto& td : req.topic_data) {
        auto& tr = resp.responses.emplace_back();
        tr.name = td.name;
        tr.partition_responses.reserve(td.partition_data.size());
        const auto* topic = snap->find(td.name);
        const auto denied = txn_denied ? error_code::transactional_id_authorization_failed
                            : !authz.topic(security::acl_operation::write, td.name)
                                ? error_code::topic_authorization_failed
                                : error_code::none;
        for (auto& pd : td.partition_data) {
            auto& pr = tr.partition_responses.emplace_back();
            pr.index = pd.index;
            pr.base_offset = -1;
            if (denied != error_code::none) {
                pr.error_code = code(denied);
                continue;
            }
            if (bad_acks) {
                pr.error_code = code(error_code::invalid_required_acks);
                continue;
            }
            if (topic == nullptr || !topic->has_partition(pd.index)) {
                pr.error_code = code(error_code::unknown_topic_or_partition);
                continue;
            }
            const auto& partition = topic->partitions[pd.index];
            if (auto e = leadership_error(svc, may_lead, partition); e != error_code::none) {
                pr.error_code = code(e);
                // KIP-951: where the client should go instead (v10+ carries it).
                pr.current_leader.leader_id = partition.leader;
                pr.current_leader.leader_epoch = partition.leader_epoch;
                if (partition.leader != svc.node_id) {
                    hints.add(partition.leader);
                }
                continue;
            }
            // Kafka's ReplicaManager: only the broker itself appends to internal topics.
            if (metadata::is_internal_topic(td.name)) {
                pr.error_code = code(error_code::invalid_topic_exception);
                pr.error_message = fmt::format("Cannot append to internal topic {}", td.name);
                continue;
            }
            auto sit = settings.find(td.name);
            if (sit == settings.end()) {
                sit = settings.emplace(td.name, config::resolve_topic(svc.config, topic->configs))
                          .first;
            }
            auto bytes = pd.records.bytes();
            uint64_t records = 0;
            auto err = validate(ctx, bytes, sit->second, pr.error_message, records);
            if (err != error_code::none) {
                pr.error_code = code(err);
                continue;
            }
            auto item = std::make_unique<append_item>();
            item->tp = {td.name, model::partition_id(pd.index)};
            // The records view the request frame, which this request owns until it completes;
            // the log rewrites offsets in place, so no copy is needed.
            item->bytes = {const_cast<uint8_t*>(bytes.data()), bytes.size()};
            item->leader_epoch = partition.leader_epoch;
            item->records = records;
            // Kafka's appendRecordsToLeader checks it (acks=-1) against the partition's ISR.
            item->min_insync = static_cast<int32_t>(sit->second.min_insync_replicas);
            // Stable: both response vectors were reserved to their final sizes.
            item->out = &pr;
            items.push_back(std::move(item));
            by_shard[svc.partitions.shard_of(items.back()->tp)].push_back(items.back().get());
        }
    }
    if (ctx.version() >= 10) {
        resp.node_endpoints =
            hints.endpoints<response::node_endpoint>(svc, *snap, ctx.net.connection().listener);
    }
    co_await catch_up_logs(svc, *snap, items);
    // A v12+ transactional write is added to its transaction here whatever the verification
    // setting: a TV2 producer sends no AddPartitionsToTxn.
    if (txn_records && !txn_denied && svc.txn_verifier != nullptr &&
        (svc.config.get(config::keys::transaction_partition_verification_enable) ||
         ctx.version() >= 12) &&
        !items.empty()) {
        if (!find_txn_producers(items)) {
            for (auto& item : items) {
                item->out->error_code = code(error_code::invalid_producer_id_mapping);
                item->out->error_message =
                    "Transactional records contained more than one producer ID";
            }
            by_shard.clear();
        } else {
            co_await verify_transaction(ctx, *req.transactional_id, items, by_shard);
        }
    }
    produce_params params;
    params.acks = req.acks;
    params.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, req.timeout_ms));
    co_await append_on_all_shards(ctx, params, by_shard);
    if (!items.empty()) {
        svc.partitions.notify_data_arrived();
    }
    count_appended(svc.topic_traffic, items);
    if (req.acks == 0) {
        bool failed = false;
        for (const auto& tr : resp.responses) {
            for (const auto& pr : tr.partition_responses) {
                failed = failed || pr.error_code != 0;
            }
        }
        // acks=0 producers learn about errors only by the connection closing.
        ctx.outcome = failed ? net::request_outcome::close : net::request_outcome::no_response;
    }
    co_return resp;
}

}  // namespace

handler_result handle_produce(request_ctx& ctx) {
    return typed_handler<protocol::produce_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
