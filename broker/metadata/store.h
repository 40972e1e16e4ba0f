#pragma once

// The metadata store interface: the single writer of cluster_state. An embedded implementation
// (one broker, a file in the data directory) and an etcd one (a cluster of brokers; see
// etcd_store.h) sit behind it. Placement is the store's: the embedded store places every
// partition on its own broker; in a cluster only the controller places partitions, and
// create_topic/create_partitions return once the controller has placed them.
// Every mutation is validated, persisted, and only then visible in snapshot(): a failed write
// changes nothing. Mutations are coroutines: the caller's shard keeps serving while the change is
// written and made durable elsewhere, and when the mutation returns every shard's snapshot()
// already shows it (read-your-writes from any connection).
//
// Lifecycle: open/load, then serve.
// Threading: every method may be called from any thread or coroutine; snapshot() is cheap (a
// shared_ptr copy, lock-free on a shard) and the returned state never changes.

#include "broker/metadata/cluster_state.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/reassignment_request.h"
#include "broker/security/acl.h"
#include "common/result.h"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::metadata {

struct new_topic {
    std::string name;
    int32_t partitions = 1;
    int16_t replication_factor = 1;
    config::topic_overrides configs;
    // CreateTopics' manual assignment: each partition's replicas (leader first), checked by the
    // handler against the registered brokers; empty: placement picks them (the controller's).
    std::vector<std::vector<int32_t>> assignments;
};

// The most partitions a manual assignment may name: they are written with the topic record in
// one etcd transaction (its 128-op limit), so the controller never places one of them itself.
inline constexpr size_t max_manual_assignment_partitions = 100;

// A leader's ISR change (REPLICATION.md #3), against the record it read: the record's revision
// and its leader and partition epochs then.
struct isr_update {
    std::string topic;
    int32_t partition = 0;
    int32_t leader_epoch = 0;
    int32_t partition_epoch = 0;
    int64_t record_revision = 0;
    std::vector<int32_t> isr;
};

struct producer_id_block {
    int64_t first = 0;
    int32_t count = 0;
};

// This broker's cluster session as its leaderships see it (etcd: broker_session.h).
struct session_lease {
    // Registered and unfenced: whether it may lead at all, whatever the lease's age.
    bool standing = true;
    // When the last renewal etcd confirmed was sent: the lease holds at least until
    // renewed_at + timeout.
    std::chrono::steady_clock::time_point renewed_at;
    std::chrono::milliseconds timeout{0};
    // Renewals etcd did not answer (unreachable or timed out; not "lease not found"): when the
    // first of the current run of them was sent, and the latest; both epoch (none) once etcd
    // answers again.
    std::chrono::steady_clock::time_point unanswered_since;
    std::chrono::steady_clock::time_point last_unanswered;

    bool lapsed(std::chrono::steady_clock::time_point now) const {
        return now >= renewed_at + timeout;
    }
    // etcd stopped answering this broker while it ran, before the lease lapsed, and still did
    // not answer a renewal sent after it lapsed. A process that was merely paused (SIGSTOP)
    // past its lease has no such run: its first renewal after resuming is answered (with "lease
    // not found"), and one in flight across the pause was sent before the lapse.
    bool etcd_unreachable_across_lapse() const {
        const auto lapse = renewed_at + timeout;
        return unanswered_since != std::chrono::steady_clock::time_point{} &&
               unanswered_since < lapse && last_unanswered >= lapse;
    }
};

class store {
public:
    virtual ~store() = default;

    template <class T>
    using op = boost::asio::awaitable<result<T>>;

    virtual cluster_snapshot snapshot() const = 0;

    // Creates a topic with a fresh random topic id; returns it once its partitions are placed
    // (leader epoch 0). errc::unavailable when the store cannot commit now (retriable).
    virtual op<topic_metadata> create_topic(new_topic t) = 0;
    virtual op<void> delete_topic(std::string name) = 0;
    // Grows a topic to `total` partitions (never shrinks); returns once the new ones are placed.
    virtual op<topic_metadata> create_partitions(std::string name, int32_t total) = 0;
    // Replaces a topic's overrides as a whole.
    virtual op<void> set_topic_configs(std::string name, config::topic_overrides c) = 0;
    // Replaces the dynamic configs of one broker entity ("" = cluster default).
    virtual op<void> set_broker_configs(std::string entity,
                                        std::map<std::string, std::string> c) = 0;
    // Replaces the dynamic configs of one group as a whole (empty: the group has none left).
    virtual op<void> set_group_configs(std::string group,
                                       std::map<std::string, std::string> c) = 0;
    // CreateAcls: adds the bindings (each one security::invalid_binding accepts) that are not
    // there yet; DeleteAcls: removes those of `bindings` that are there. Both return once every
    // shard's snapshot shows the change (cluster_state::acls); errc::unavailable when the store
    // cannot commit now.
    virtual op<void> create_acls(std::vector<security::acl_binding> bindings) = 0;
    virtual op<void> delete_acls(std::vector<security::acl_binding> bindings) = 0;
    // Replaces the SCRAM credentials of one user as a whole (mechanism -> credential text;
    // empty: the user has none left).
    virtual op<void> set_user_scram_credentials(std::string user,
                                                std::map<std::string, std::string> c) = 0;
    // UpdateFeatures: stores `next` (features.h check_update's outcome) if the finalized levels
    // are still `current` (the record's epoch, and in etcd its revision); returns once every
    // shard's snapshot shows it. errc::stale_features when another write came first.
    virtual op<void> write_features(finalized_features current, finalized_features next) = 0;
    // Hands out `count` producer ids that no other call (before or after a restart) gets.
    virtual op<producer_id_block> allocate_producer_ids(int32_t count) = 0;
    // The leader's ISR change: committed only if the record still has record_revision (etcd) and
    // the same leader_epoch and partition_epoch, and only from the partition's leader while its
    // registration lives; bumps partition_epoch and returns the new state (record_revision =
    // the write's revision), visible on every shard. errc::stale_partition when a compare failed
    // (retry from a newer snapshot), errc::invalid_isr / ineligible_replica when the change
    // does not fit (isr_update_check.h), errc::unavailable when etcd is unreachable.
    virtual op<partition_state> alter_isr(isr_update u) = 0;
    // Controlled shutdown: asks the controller to move every leadership off this broker and take
    // it out of every ISR it is not the last member of; returns once the snapshot shows it leads
    // nothing it could hand over (controlled_shutdown.h) or `timeout` passed (then false). The
    // embedded store returns true at once (one broker: nobody to hand over to).
    virtual boost::asio::awaitable<bool> shut_down_gracefully(std::chrono::milliseconds timeout) {
        (void)timeout;
        co_return true;
    }

    // ElectLeaders: hands the controller the elections of request (each partition one the
    // controller may carry out, controller_elections.h) and returns the first snapshot, visible
    // on every shard, in which the controller has handled them (it elected what it still could),
    // or errc::timed_out when it had not within `timeout` (the request is withdrawn),
    // errc::unavailable when the cluster store cannot take it now. The embedded store has
    // nothing to hand over (one broker: every partition's one replica leads it): the snapshot.
    virtual op<cluster_snapshot> elect_leaders(election_request request,
                                               std::chrono::milliseconds timeout) {
        (void)request;
        (void)timeout;
        co_return snapshot();
    }
    // AlterPartitionReassignments for one partition (reassignment_request.h): writes the target
    // (or clears it: cancel) into the partition's record with a compare-and-swap and returns once
    // every shard sees it; the controller then moves the replicas. The embedded store (one
    // broker) can only be asked for the replicas it has: that, and cancels, are answered from the
    // snapshot.
    virtual op<void> alter_reassignment(reassignment_request r) {
        auto s = snapshot();
        auto change = apply_reassignment_request(*s, r);
        if (!change) {
            co_return change.error();
        }
        if (!change.value().unchanged) {
            co_return errc::invalid_replica_assignment;
        }
        co_return success();
    }
    // Decommission (decommission.h): marks `broker` in P/decommission/<id> and reassigns every
    // partition with a replica on it to a replacement placement picks; errc::unknown_broker
    // when it is neither registered nor marked, errc::invalid_replica_assignment when some
    // partition has no replacement (nothing is written then). Again for a marked broker: moves
    // what has been placed on it since. The embedded store has no other broker to move to.
    virtual op<void> start_decommission(int32_t broker) {
        co_return snapshot()->is_live(broker) ? errc::invalid_replica_assignment
                                              : errc::unknown_broker;
    }
    // Cancels the reassignments the decommission started that are still under way (the
    // controller reverts them) and clears the mark; errc::unknown_broker when none is marked.
    virtual op<void> cancel_decommission(int32_t broker) {
        (void)broker;
        co_return errc::unknown_broker;
    }

    // Whether this broker may act as leader right now: false while its cluster session may have
    // expired (a paused process, a lease etcd reports gone) until it has registered again. Cheap
    // (an atomic load); the produce path checks it. The embedded store always may.
    virtual bool may_lead() const { return true; }
    // The session behind may_lead(); nullopt for a store without one (embedded: always may).
    virtual std::optional<session_lease> lease() const { return std::nullopt; }
    // After its lease lapsed, this broker may lead until `until` on its followers' word
    // (cluster::leadership_vouch). A store without a session ignores it.
    virtual void vouched_until(std::chrono::steady_clock::time_point until) { (void)until; }
    // Ends the cluster session of broker `node` while it still holds lease `lease` (its
    // registration as the caller saw it): for a broker whose process is known to be gone
    // (cluster::dead_broker_probe), so its registration, and with it its leaderships and a
    // controller key it held, go now instead of when the lease runs out. A newer registration of
    // the node (another lease) is left alone; a lease already gone is success. The embedded
    // store has no other broker: success.
    virtual op<void> end_session_of(int32_t node, int64_t lease) {
        (void)node;
        (void)lease;
        co_return success();
    }
    // This broker's logs are open and recovered: a cluster store tells the controller, which may
    // unfence this incarnation from then on (cluster_state.h). Returns at once.
    virtual void logs_recovered() {}
    // Why the store cannot serve metadata changes now (e.g. "etcd unreachable since ..."), for
    // /readyz; nullopt when it can.
    virtual std::optional<std::string> unready_reason() const { return std::nullopt; }

    // Called after every change becomes visible in snapshot(), whatever made it (this broker's
    // mutation, or another broker's seen through the cluster store's watch), in commit order,
    // on the store's own thread: keep it short and hop to shards for real work. Subscribe before
    // the store starts publishing (attach()); listeners live as long as the store.
    // Thread-safe: the etcd store publishes from its watch as soon as it is open, while the
    // composition root still subscribes its services from the main thread.
    using change_listener =
        std::function<void(const cluster_snapshot& before, const cluster_snapshot& after)>;
    void subscribe(change_listener listener) {
        std::lock_guard lock(_listeners_mutex);
        _listeners.push_back(std::move(listener));
    }

protected:
    void notify_listeners(const cluster_snapshot& before, const cluster_snapshot& after) const {
        std::lock_guard lock(_listeners_mutex);  // uncontended but at a subscription
        for (const auto& l : _listeners) {
            l(before, after);
        }
    }

private:
    mutable std::mutex _listeners_mutex;
    std::vector<change_listener> _listeners;
};

namespace detail {
template <class T>
boost::asio::awaitable<void> store_into(boost::asio::awaitable<T> work, std::optional<T>* out) {
    out->emplace(co_await std::move(work));
}
}  // namespace detail

// Runs a store mutation to completion on the calling thread, blocking it: for tests and for
// start-up code on the main thread, never on a shard.
template <class T>
T wait_for(boost::asio::awaitable<T> work) {
    boost::asio::io_context io;
    std::optional<T> out;
    boost::asio::co_spawn(io, detail::store_into(std::move(work), &out), boost::asio::detached);
    io.run();
    return std::move(*out);
}

// Kafka's topic name rules: 1..249 chars of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(std::string_view name);

}  // namespace spool::broker::metadata
