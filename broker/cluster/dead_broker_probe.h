#pragma once

// Failover in well under a second when a broker's process dies (issue #36): tells a dead broker
// from a silent one by its listening port, and ends a dead one's session at once.
//
// A broker's registration lives under a lease of broker.session.timeout.ms (9 s); a process
// killed -9 stops renewing it but etcd keeps it until it runs out, and only then does the
// controller move the broker's leaderships. Its kernel, though, closes every socket of the
// process the moment it dies: the followers' fetch connections to it end at once
// (replication::fetcher_options::leader_lost), and its listening port refuses connections from
// then on. A process that is merely paused (SIGSTOP, a GC or disk stall) or slow under load
// keeps its listening socket: the kernel still completes connects to it. So a refused connect
// to a broker's inter-broker endpoint is evidence of death that no timer has to guess, and a
// paused broker can never produce it (a 1 s pause moves nothing; a longer silence still moves
// leadership after the session timeout, by the lease as before).
//
// When a fetcher loses its leader, suspect(node) probes that broker: TCP connects, `interval`
// apart for up to `window`, to the endpoint the fetchers use (leader_endpoints.h). `refusals`
// in a row refused,
// and the snapshot still showing the registration seen when the probe began: it asks the store
// to end that registration's session (metadata::store::end_session_of, an etcd lease revoke),
// which deletes the registration, and the controller's usual pass elects from the ISR (or ELR)
// at leader epoch + 1: the same election code as a lease expiry, nothing of its own. Any connect
// that times out or fails otherwise (host unreachable: maybe a network partition, not a dead
// process) ends the probe with nothing done, and so does a window of accepted connects: the
// lease decides then.
//
// The leader's side (watch_followers): a dead follower still in the ISR holds the high watermark,
// and with it every acks=all produce, until it leaves the ISR. A follower that is in the ISR of
// a partition this broker leads and has not fetched for `overdue` (a live one re-fetches at the
// latest when its long poll, replica.fetch.wait.max.ms, ends) is probed the same way. Overdue is
// only the reason to look: a slow or paused follower accepts the connect and nothing happens
// (and, found alive, it is not probed for being overdue again for `overdue_cooldown`).
//
// Not probed: this broker itself; a broker not registered (already gone); a fenced
// registration (a process that just restarted may register before its listener opens, and it
// leads nothing, so its death costs no stall). At most one probe per broker at a time.
//
// Lifecycle: construct (before the replica fetchers, which are given listener());
// watch_followers() once the partitions are open; stop() after the fetchers stopped and before
// the partitions close, while the shards still run (waits for a probe in flight: each step is
// bounded by connect_timeout, the store's call by etcd's request timeout). Threading:
// suspect() and listener()'s function from any thread; the probes run on `executor` (shard 0).

#include "broker/cluster/partition_manager.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/store.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace spool::broker::cluster {

struct dead_broker_probe_options {
    int32_t self = -1;     // node.id: never probed
    std::string listener;  // inter.broker.listener.name ("" when unset)
    // Refused connects in a row that prove a broker dead, `interval` apart: the second rules out
    // a refusal from a port in the middle of being re-bound; a dead process refuses every one.
    // Short: every millisecond here is a millisecond of the producers' stall (bench/replicated.sh
    // failover: the session ends 0.1-0.2 s after the kill and the new leader leads 20 ms later;
    // the rest of the producer's stall, about 1 s in all, is librdkafka learning of the new
    // leader: 25 or 100 ms here, replica.fetch.backoff.ms 1000 or 100, all gave 1.02-1.05 s).
    int refusals = 2;
    std::chrono::milliseconds interval{25};
    // How long a probe goes on connecting while its connects are accepted (a killed process
    // closes its sockets one by one: its port may accept just after a connection was lost),
    // one connect every recheck_interval.
    std::chrono::milliseconds window{1000};
    std::chrono::milliseconds recheck_interval{100};
    std::chrono::milliseconds connect_timeout{1000};
    // After a probe found a broker alive, how long an overdue follower is not probed again.
    std::chrono::milliseconds overdue_cooldown{5000};
};

// What one connect says of the process behind the port.
enum class connect_outcome {
    refused,       // ECONNREFUSED: nothing listens there (the process is gone)
    accepted,      // something listens: alive, perhaps paused
    inconclusive,  // timed out, unreachable, unresolvable: says nothing of the process
};
connect_outcome classify_connect(const boost::system::error_code& ec);

// The lease whose session may be ended for `node` judged dead on `state`: its registration's,
// when it is registered, unfenced, not `self`, and (expected_lease != 0) still holds
// expected_lease, the lease seen when the probe began; nullopt otherwise.
std::optional<int64_t> session_to_end(const metadata::cluster_state& state, int32_t node,
                                      int32_t self, int64_t expected_lease = 0);

class dead_broker_probe {
public:
    dead_broker_probe(metadata::store& store, boost::asio::io_context::executor_type executor,
                      dead_broker_probe_options options);
    ~dead_broker_probe();
    dead_broker_probe(const dead_broker_probe&) = delete;
    dead_broker_probe& operator=(const dead_broker_probe&) = delete;

    // Any thread: this broker lost its connection to `node` (or could not make one).
    void suspect(int32_t node);
    // Every `interval` from now on (on the executor, until stop()): suspects each member of the
    // ISR of a partition this broker leads that has not fetched for `overdue`. Once.
    void watch_followers(partition_manager& partitions, std::chrono::milliseconds overdue,
                         std::chrono::milliseconds interval = std::chrono::milliseconds(250));
    // suspect() as a function the replica fetchers may keep (fetcher_options::leader_lost):
    // valid after this object is gone, then it does nothing.
    std::function<void(int32_t)> listener() const;
    // Stops probing and waits for the probes in flight; the executor must still run.
    // Idempotent. Destruction without stop() only stops probing.
    void stop();
    // Sessions this probe ended (any thread).
    uint64_t sessions_ended() const;

private:
    struct state;
    static void suspect_on(const std::shared_ptr<state>& st, int32_t node, bool overdue_only);
    static boost::asio::awaitable<void> probe(std::shared_ptr<state> st, int32_t node);
    static boost::asio::awaitable<void> follower_loop(std::shared_ptr<state> st,
                                                      partition_manager* partitions,
                                                      std::chrono::milliseconds overdue,
                                                      std::chrono::milliseconds interval);

    std::shared_ptr<state> _state;
};

}  // namespace spool::broker::cluster
