#pragma once

// One replica fetcher: on one shard, the partitions of that shard this broker follows from one
// leader broker, pulled over one connection with Kafka's own requests (Kafka's
// ReplicaFetcherThread; Redpanda's replicate_entries_stm is the push-based counterpart).
//
// Each followed partition is in one of three states:
//
//   truncating --OffsetForLeaderEpoch answered, log truncated (truncation.h)--> fetching
//   fetching   --Fetch answered: whole batches appended, HW followed--------> fetching
//                (with flush.messages reached, only once the appended records are synced)
//   any        --FENCED_LEADER_EPOCH--> paused (until follow() brings a newer epoch)
//
// follow() at a new epoch (and a partition whose needs_truncation() is set) starts truncating.
// NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH and other partition errors retry that partition
// after replica.fetch.backoff.ms (the leader may not have applied the epoch the metadata
// already gave us); OFFSET_OUT_OF_RANGE restarts at the leader's log start when we are below it
// (partition::restart_at), else truncates again. A lost connection backs off and reconnects.
// A partition that is gone, no longer a follower, or follows another leader is dropped.
//
// The partition objects belong to the partition manager: the fetcher looks each up (lookup)
// again after every suspension and never keeps the pointer across one.
//
// Lifecycle: construct -> start() -> follow()/drop()... -> co_await stop() (closes the
// connection, the loop ends) -> destroy. Threading: every method on the owner shard.

#include "broker/metrics/replica_fetcher_probe.h"
#include "broker/model/ids.h"
#include "broker/replication/leader_client.h"
#include "broker/replication/partition.h"
#include "broker/replication/truncation.h"
#include "broker/runtime/asio.h"
#include "broker/runtime/async_event.h"
#include "protocol/errors.h"
#include "protocol/messages/fetch.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace spool::broker::replication {

struct fetcher_options {
    int32_t self = -1;                                 // node.id: the Fetch's replica_id
    std::chrono::milliseconds max_wait{500};           // replica.fetch.wait.max.ms
    int32_t min_bytes = 1;                             // replica.fetch.min.bytes
    int32_t partition_max_bytes = 1048576;             // replica.fetch.max.bytes
    int32_t response_max_bytes = 10485760;             // replica.fetch.response.max.bytes
    std::chrono::milliseconds backoff{1000};           // replica.fetch.backoff.ms
    std::chrono::milliseconds socket_timeout{30000};   // replica.socket.timeout.ms
    std::chrono::milliseconds connect_timeout{10000};  // socket.connection.setup.timeout.ms
    // A leader may exceed the response bound by one batch (the first one is always whole):
    // message.max.bytes, plus headers.
    int32_t max_batch_bytes = 1048588;
    // TLS and SASL towards leaders (the inter-broker listener's protocol); default: plaintext.
    leader_security security;
    // Called on the fetcher's shard with the leader's node id whenever the connection to it
    // could not be made or was lost (refused, reset, closed, timed out; not at stop()): a dead
    // leader's kernel closes its sockets at once, so this is the first sign of its death
    // (cluster::dead_broker_probe tells death from a pause). Empty: nobody listens.
    std::function<void(int32_t leader)> leader_lost;
};

// The partition manager's partition_here(): the calling (owner) shard's partition, or nullptr.
using partition_lookup = std::function<partition*(const model::topic_partition&)>;
// A broker's address for inter-broker traffic from the current metadata, or nullopt (not live).
using endpoint_resolver = std::function<std::optional<leader_endpoint>(int32_t node)>;

class replica_fetcher {
public:
    replica_fetcher(boost::asio::io_context::executor_type shard, int32_t leader,
                    fetcher_options options, partition_lookup lookup, endpoint_resolver resolve,
                    std::shared_ptr<metrics::replica_fetcher_probe::fetcher> probe);
    ~replica_fetcher();
    replica_fetcher(const replica_fetcher&) = delete;
    replica_fetcher& operator=(const replica_fetcher&) = delete;

    void start();
    // Follows tp from this leader at leader_epoch: truncate first, then fetch.
    void follow(const model::topic_partition& tp, int32_t leader_epoch);
    void drop(const model::topic_partition& tp);
    [[nodiscard]] bool follows(const model::topic_partition& tp) const {
        return _partitions.contains(tp);
    }
    [[nodiscard]] size_t size() const { return _partitions.size(); }
    [[nodiscard]] int32_t leader() const { return _leader; }
    // Closes the connection and waits for the loop to end; follow() afterwards does nothing.
    boost::asio::awaitable<void> stop();

private:
    enum class state { truncating, fetching, paused };
    struct followed {
        int32_t leader_epoch = 0;
        state st = state::truncating;
        steady_time retry_at{};   // not before this (an error's backoff)
        int64_t leader_hw = -1;   // from the last Fetch answer, for the lag
        uint64_t generation = 0;  // bumped by follow(): an answer to an older request is stale
    };

    static boost::asio::awaitable<void> run(replica_fetcher* self);
    // The partition if we still follow it from this leader; drops it otherwise.
    partition* usable(const model::topic_partition& tp);
    // When the loop has something to send next (now, or the earliest retry), nullopt: nothing.
    [[nodiscard]] std::optional<steady_time> next_work() const;
    // The partitions in state st whose retry time has come, in order.
    [[nodiscard]] std::vector<model::topic_partition> due_in(state st) const;
    boost::asio::awaitable<void> sleep_until(steady_time t);
    boost::asio::awaitable<bool> ensure_connected();
    boost::asio::awaitable<void> truncate_round();
    boost::asio::awaitable<void> fetch_round();
    // Waits (bounded by the socket timeout) until the log of tp is synced up to end.
    boost::asio::awaitable<void> wait_until_synced(model::topic_partition tp, model::offset end);
    using fetch_answer = leader_response<protocol::fetch_response>;
    using fetched_partition = protocol::fetch_response::fetchable_topic_response::partition_data;
    // One partition of a Fetch answer (fetch_round), the request sent at fetch_offset.
    void apply_fetched(fetch_answer& resp, const model::topic_partition& tp,
                       const fetched_partition& data, model::offset fetch_offset);
    // Truncates to the decision for the leader's answer; the next state.
    void truncate_to(partition& p, followed& f, leader_epoch_end answer);
    // Truncates to decision.offset and moves to the state it says; false (retry later) when the
    // log refused.
    bool truncate_at(partition& p, followed& f, truncation_decision decision);
    void retry_later(followed& f);
    // A partition error the leader answered (logged: warn for a refused authorization).
    void log_partition_error(const model::topic_partition& tp, const char* what,
                             protocol::error_code code);
    // A failed request: everything waits replica.fetch.backoff.ms, the connection is closed.
    void request_failed(std::error_code ec, const char* what);
    void update_gauges();

    boost::asio::io_context::executor_type _shard;
    int32_t _leader;
    fetcher_options _options;
    partition_lookup _lookup;
    endpoint_resolver _resolve;
    std::shared_ptr<metrics::replica_fetcher_probe::fetcher> _probe;
    leader_client _client;
    std::map<model::topic_partition, followed> _partitions;
    // Partitions whose flush.messages started a sync in this round's appends, with the log end
    // it covers: fetch_round waits for them before the next Fetch reports that end.
    std::vector<std::pair<model::topic_partition, model::offset>> _sync_before_fetch;
    boost::asio::steady_timer _wake;  // the loop sleeps on it; follow()/drop()/stop() cancel it
    steady_time _connect_after{};     // reconnect backoff
    bool _stopping = false;
    bool _running = false;
    runtime::async_event _exited;  // run() ended (stop() waits for it)
};

}  // namespace spool::broker::replication
