#pragma once

// A broker's membership of the cluster: its registration P/brokers/<node id> under a lease of
// its own, kept alive while the process runs, and the fencing that follows from it.
//
// Registration: grant a lease of ceil(session timeout / 1 s), then txn absent(P/brokers/<id>) ->
// put the registration under it. When the key exists: the same log_dir_id means a previous life
// of this data directory (the log dir lock proves that process is dead), so it is replaced (CAS
// on its mod_revision) and its lease revoked; any other owner is a live broker with the same
// node.id, and start() refuses with
//   "node.id N is already registered by a live broker (incarnation X at host:port); each broker
//    needs its own node.id".
// log_dir_id is a uuid kept in <log dir>/spool-dir-id, created on first start.
//
// Incarnations (cluster_state.h): with start_fenced, every registration is fenced, and this
// broker's own "recovered" false until mark_recovered() (the logs are open); the registration
// also says whether this incarnation started without the clean-shutdown marker and whether the
// log directory differs from the one P/broker_dirs/<id> remembers for this node id (the key is
// then rewritten). The controller unfences the registration; observe() (each snapshot) notices,
// and may_lead() stays false until then. A registration after an expiry is fenced again (as
// Kafka fences a broker whose session lapsed), but no longer unclean: this process lost nothing.
//
// Keep-alive every heartbeat interval. may_lead() = registered AND unfenced AND (the last
// renewal etcd confirmed (a keep-alive or the registration) was sent less than a session timeout
// ago, counted from the send: etcd renewed the lease at some moment after it; OR the followers
// vouch for this broker: vouched_until(), set by cluster::leadership_vouch, which also needs
// etcd to have stopped answering this broker before the lapse and still not answer after it,
// session_lease::etcd_unreachable_across_lapse). So a process that was
// paused (SIGSTOP) longer than that stops leading the moment it resumes, until a keep-alive
// confirms its lease; and a broker cut off from etcd while the rest of the cluster is not stops
// leading when its lease may have run out, before the controller can elect anyone in its place
// (its stale high watermark would otherwise go on answering ListOffsets and Fetch). When etcd is
// down for everyone, no leader can change, and the followers, which go on fetching at this
// broker's epoch, vouch for it (leadership_vouch.h says when).
// A keep-alive answered lease_not_found means etcd expired the session: may_lead() turns false,
// the session registers again under a new lease (logged once each way), and the lease listeners
// hear 0 and then the new lease id (the controller campaigns under it).
//
// Lifecycle: construct on the etcd store's thread -> start() (registers; once) -> run() (the
// keep-alive loop) -> stop() (ends the loop and revokes the lease, so the cluster sees this
// broker leave at once instead of after a session timeout).
// Threading: everything but may_lead()/lease()/vouched_until()/lease_id()/registered() runs on
// the client's executor; those are atomics, safe from any thread.

#include "broker/etcd/client.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "broker/metadata/store.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct broker_session_options {
    // node_id, rack, endpoints; incarnation_id empty = a new random one; log_dir_id is read from
    // (or created in) log_dir.
    broker_registration self;
    std::filesystem::path log_dir;
    std::chrono::milliseconds session_timeout{9000};
    std::chrono::milliseconds heartbeat_interval{2000};
    // Register fenced until the controller unfences (a broker process); false: registered
    // unfenced, as before incarnations existed (the store's own tests, tools).
    bool start_fenced = false;
    // The log dir's clean-shutdown marker was missing at start (registration's unclean_shutdown).
    bool unclean_shutdown = false;
};

// The uuid in <log_dir>/spool-dir-id, created (durably) when missing. A file that holds anything
// else is an error: silently replacing it would let a second broker take this one's identity.
result<std::string> load_log_dir_id(const std::filesystem::path& log_dir);

class broker_session {
public:
    // Called on the client's executor with the new lease id, 0 while unregistered.
    using lease_listener = std::function<void(int64_t lease_id)>;

    broker_session(etcd::client& client, boost::asio::any_io_executor ex, etcd_layout::keys keys,
                   broker_session_options options);
    broker_session(const broker_session&) = delete;
    broker_session& operator=(const broker_session&) = delete;

    // Registers. On refusal (another live broker holds the node id) the error is
    // std::errc::address_in_use and *why says so in the words above; etcd errors otherwise.
    boost::asio::awaitable<result<void>> start(std::string* why);
    // Spawns the keep-alive loop on the executor.
    void run();
    // Ends the loop and revokes the lease (bounded by the client's request timeout).
    boost::asio::awaitable<void> stop();

    bool may_lead() const;
    // The lease as may_lead() judges it (any thread).
    session_lease lease() const;
    // Followers vouch for this broker's leadership until `until` (any thread).
    void vouched_until(std::chrono::steady_clock::time_point until);
    // The logs are open and recovered: the registration says so (the controller may unfence
    // it from then on). On the client's executor.
    boost::asio::awaitable<void> mark_recovered();
    // Each published snapshot, on the client's executor: notices the controller's unfencing of
    // this incarnation's registration.
    void observe(const cluster_state& state);
    // Unfenced by the controller (always true without start_fenced). Any thread.
    bool unfenced() const { return _unfenced.load(std::memory_order_acquire); }
    bool registered() const { return _registered.load(std::memory_order_acquire); }
    int64_t lease_id() const { return _lease.load(std::memory_order_acquire); }
    // etcd dropped this session's lease and it has not registered again yet. Any thread.
    bool expired() const { return _expired.load(std::memory_order_relaxed); }
    // Registrations after an expiry (the metrics' flapping signal). Any thread.
    uint64_t reregistrations() const { return _reregistrations.load(std::memory_order_relaxed); }
    // This broker as registered (log_dir_id and incarnation_id filled in by start()).
    const broker_registration& self() const { return _self; }
    void on_lease_change(lease_listener l) { _lease_listeners.push_back(std::move(l)); }
    // Called on the client's executor after every etcd request of the session: {} or its error
    // (the store's reachability follows it, so a frozen etcd shows even when nothing else asks).
    using outcome_listener = std::function<void(std::error_code)>;
    void on_request_outcome(outcome_listener l) { _outcome_listener = std::move(l); }

private:
    enum class outcome { registered, refused, failed };
    boost::asio::awaitable<outcome> register_once(std::string* why, std::error_code* error);
    boost::asio::awaitable<void> note_directory();
    static boost::asio::awaitable<void> keep_alive_loop(broker_session* self);
    boost::asio::awaitable<void> keep_alive_once();
    void set_lease(int64_t id);
    void mark_renewed(int64_t sent_ns);
    void report(std::error_code e) const;
    std::string refusal(const std::optional<broker_registration>& holder) const;

    etcd::client& _client;
    boost::asio::any_io_executor _ex;
    etcd_layout::keys _keys;
    broker_session_options _options;
    broker_registration _self;
    std::vector<lease_listener> _lease_listeners;
    outcome_listener _outcome_listener;
    boost::asio::steady_timer _timer;
    bool _stopping = false;
    bool _loop_running = false;
    std::atomic<bool> _registered{false};
    std::atomic<bool> _unfenced{true};
    std::atomic<int64_t> _lease{0};
    std::atomic<bool> _expired{false};
    std::atomic<uint64_t> _reregistrations{0};
    // steady_clock nanoseconds when the last keep-alive etcd answered (or the registration)
    // was sent.
    std::atomic<int64_t> _last_renewed{0};
    // steady_clock nanoseconds when the first of the current run of keep-alives etcd did not
    // answer was sent, and the latest of them; 0 when etcd answered the last one.
    std::atomic<int64_t> _unanswered_since{0};
    std::atomic<int64_t> _last_unanswered{0};
    // steady_clock nanoseconds when the keep-alive in flight was sent; 0 when none is. One
    // outstanding for a heartbeat interval counts as unanswered already (an etcd that hangs
    // rather than refuses answers only at the request timeout).
    std::atomic<int64_t> _in_flight_sent{0};
    // steady_clock nanoseconds until which the followers vouch (vouched_until).
    std::atomic<int64_t> _followers_vouch_until{0};
};

}  // namespace spool::broker::metadata
