#pragma once

// marker_sender over Kafka's wire: a WriteTxnMarkers request to the leader of each partition of
// the transaction (Kafka's TransactionMarkerChannelManager), this broker included, through the
// inter-broker listener with its TLS and SASL (replication::leader_client, the replica
// fetchers' client; endpoints as cluster::leader_endpoints picks them). Each send() is one
// coroutine on the calling (coordinator's) shard that, until every partition is done:
//   - groups the partitions left by their leader in the current metadata snapshot (a partition
//     whose topic is gone is done: Kafka drops markers of deleted topics too),
//   - sends each leader one request (v1, or v0 when that is all it serves) and drops the
//     partitions it answered NONE; other errors (not leader, too few replicas, timeouts, an
//     unreachable broker, a broker that does not serve WriteTxnMarkers yet) are retried after a
//     backoff doubling from 100 ms to 2 s;
//   - gives up with an error when the coordinator lost the partition (still_ours false), the
//     sender stops, or a leader answers INVALID_PRODUCER_EPOCH / TRANSACTION_COORDINATOR_FENCED
//     (a newer producer epoch or coordinator owns the transaction now, as in Kafka).
// Connections are opened per request and closed after it: markers are per transaction, not per
// record, and this keeps no per-destination state to invalidate when brokers move.
//
// Threading: send() on a shard of `pool`; done runs on that shard. Lifecycle: outlives the
// txn_service; stop() makes the coroutines give up at their next step.

#include "broker/metadata/store.h"
#include "broker/replication/leader_client.h"
#include "broker/runtime/shard_pool.h"
#include "broker/txn/marker_sender.h"

#include <atomic>
#include <memory>
#include <string>

namespace spool::broker::txn {

class network_marker_sender final : public marker_sender {
public:
    network_marker_sender(const metadata::store& store, runtime::shard_pool& pool,
                          replication::leader_client_options options, std::string listener);
    void send(marker_request request, std::function<bool()> still_ours,
              std::function<void(std::error_code)> done) override;
    void stop() { _stopped->store(true, std::memory_order_release); }

private:
    struct job;
    static boost::asio::awaitable<void> run(std::shared_ptr<job> j);

    const metadata::store& _store;
    runtime::shard_pool& _pool;
    replication::leader_client_options _options;
    std::string _listener;
    std::shared_ptr<std::atomic<bool>> _stopped = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace spool::broker::txn
