#include "broker/metadata/controller/controller.h"

#include "broker/metadata/controller/plan/controller_elections.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <map>
#include <utility>

namespace spool::broker::metadata {

namespace asio = boost::asio;

namespace {

std::shared_ptr<spdlog::logger> logger() {
    static auto l = log::get("controller");
    return l;
}

std::string_view why_text(partition_write::reason why) {
    switch (why) {
        case partition_write::reason::leader_offline:
            return "the leader is not live";
        case partition_write::reason::controlled_shutdown:
            return "the leader is in controlled shutdown";
        case partition_write::reason::unclean_election:
            return "no in-sync replica is live: unclean election (records may be lost)";
        case partition_write::reason::leader_elected:
            return "an in-sync replica is live again";
        case partition_write::reason::preferred_election:
            return "preferred leader election";
        case partition_write::reason::reassign_start:
            return "reassignment started";
        case partition_write::reason::reassign_complete:
            return "reassignment completed";
        case partition_write::reason::reassign_cancel:
            return "reassignment cancelled";
        case partition_write::reason::place:
        case partition_write::reason::isr_shrink:
            break;
    }
    return "";
}

}  // namespace

controller::controller(asio::any_io_executor executor, etcd::client& client, store& source,
                       lease_source session_lease, controller_options options)
    : _executor(executor),
      _client(client),
      _store(source),
      _session_lease(std::move(session_lease)),
      _options(std::move(options)),
      _retry_timer(executor),
      _idle(executor),
      _imbalance_timer(executor) {}

std::shared_ptr<controller> controller::make(asio::any_io_executor executor, etcd::client& client,
                                             store& source, lease_source session_lease,
                                             controller_options options) {
    auto c = std::make_shared<controller>(executor, client, source, std::move(session_lease),
                                          std::move(options));
    // Subscribing on the store's thread orders it with the store's notifications (which run
    // there), so make() needs no particular moment after the store opened; start() posts after
    // it, so the snapshot it reads is covered by the listener from then on.
    // The store keeps its listeners for its whole life: a weak reference lets the controller go
    // first. The listener only posts.
    std::weak_ptr<controller> weak = c;
    asio::post(executor, [weak, &source] {
        source.subscribe([weak](const cluster_snapshot&, const cluster_snapshot& after) {
            if (auto self = weak.lock()) {
                asio::post(self->_executor, [self, after] { self->on_snapshot(after); });
            }
        });
    });
    return c;
}

std::shared_ptr<controller> controller::make(etcd_store& store, plan_options plan,
                                             leader_rebalance_options rebalance) {
    controller_options o;
    o.auto_leader_rebalance = rebalance.enabled;
    o.leader_imbalance_check_interval = rebalance.check_interval;
    o.node_id = store.session()->self().node_id;
    o.incarnation_id = store.session()->self().incarnation_id;
    o.keys = store.keys();
    o.plan = plan;
    auto* s = &store;
    return make(
        store.executor(), store.client(), store, [s] { return s->lease_id(); }, std::move(o));
}

void controller::start() {
    asio::post(_executor, [self = shared_from_this()] {
        self->_started = true;
        if (self->_options.auto_leader_rebalance) {
            ++self->_in_flight;
            asio::co_spawn(self->_executor, check_imbalance(self), asio::detached);
        }
        self->on_snapshot(self->_store.snapshot());
    });
}

void controller::on_snapshot(cluster_snapshot snapshot) {
    if (!_started || _stopping || !snapshot) {
        return;
    }
    // Posted notifications may arrive after a newer snapshot was taken directly (start()).
    if (_snapshot && snapshot->version < _snapshot->version) {
        return;
    }
    _snapshot = std::move(snapshot);
    evaluate();
}

void controller::evaluate() {
    if (_stopping || !_snapshot) {
        return;
    }
    const auto& s = *_snapshot;
    if (_epoch != 0 && s.version >= _epoch && s.controller_id != _options.node_id) {
        // The snapshot is at least as new as our key and no longer shows us: the key is gone
        // (lease expired, deleted) or someone else holds it.
        deposed(s.controller_id < 0 ? "the controller key is gone"
                                    : "broker " + std::to_string(s.controller_id) + " holds it");
    }
    if (_epoch == 0) {
        // No controller, or our own node id without an epoch we know (our campaign's answer was
        // lost): campaign; a failed campaign reads the holder back and adopts the key if it is
        // this incarnation's.
        if ((s.controller_id < 0 || s.controller_id == _options.node_id) && !_campaigning) {
            _campaigning = true;
            ++_in_flight;
            asio::co_spawn(_executor, campaign(shared_from_this()), asio::detached);
        }
        return;
    }
    request_pass();
}

void controller::request_pass() {
    if (_pass_running) {
        _pass_queued = true;
        return;
    }
    _pass_running = true;
    ++_in_flight;
    asio::co_spawn(_executor, run_passes(shared_from_this()), asio::detached);
}

void controller::retry_later() {
    if (_retry_armed || _stopping) {
        return;
    }
    _retry_armed = true;
    ++_in_flight;
    asio::co_spawn(_executor, retry_after_backoff(shared_from_this()), asio::detached);
}

asio::awaitable<void> controller::retry_after_backoff(std::shared_ptr<controller> self) {
    self->_retry_timer.expires_after(self->_options.retry_backoff);
    boost::system::error_code ec;
    co_await self->_retry_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    self->_retry_armed = false;
    self->work_done();
    self->evaluate();
}

asio::awaitable<void> controller::check_imbalance(std::shared_ptr<controller> self) {
    while (!self->_stopping) {
        self->_imbalance_timer.expires_after(self->_options.leader_imbalance_check_interval);
        boost::system::error_code ec;
        co_await self->_imbalance_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (!self->_stopping && self->_epoch != 0) {
            self->_rebalance_due = true;
            self->request_pass();
        }
    }
    self->work_done();
}

void controller::etcd_failed(const std::string& what) {
    // Once per outage at warn: retries every retry_backoff would flood the log otherwise.
    if (!_etcd_failing) {
        _etcd_failing = true;
        logger()->warn("{}; retrying every {} ms", what, _options.retry_backoff.count());
    } else {
        logger()->debug("{}", what);
    }
    retry_later();
}

void controller::etcd_answered() {
    if (_etcd_failing) {
        _etcd_failing = false;
        logger()->info("etcd answers the controller again");
    }
}

void controller::work_done() {
    if (--_in_flight == 0 && _stopping) {
        _idle.cancel();
    }
}

void controller::become_controller(int64_t epoch, std::string_view how) {
    _epoch = epoch;
    logger()->info("broker {} is controller (epoch {}, {})", _options.node_id, epoch, how);
}

void controller::deposed(std::string_view why) {
    logger()->info("broker {} is no longer controller (epoch {}): {}", _options.node_id, _epoch,
                   why);
    _epoch = 0;
    _pass_queued = false;
}

asio::awaitable<void> controller::campaign(std::shared_ptr<controller> self) {
    const int64_t lease = self->_session_lease();
    if (lease == 0) {
        // Not registered (yet, or again): the registration's own change brings a new snapshot.
        self->_campaigning = false;
        self->work_done();
        co_return;
    }
    const etcd_layout::controller_record me{self->_options.node_id, self->_options.incarnation_id};
    // Named locals, not temporaries, in co_await expressions: GCC 12 may destroy those twice.
    auto request = campaign_txn(self->_options.keys, me, lease);
    auto call = self->_client.txn(std::move(request));
    auto r = co_await std::move(call);
    self->_campaigning = false;
    if (self->_stopping) {
        if (r && r.value().succeeded) {
            // Won while stopping: stop() (waiting for work_done below) resigns this epoch.
            self->_epoch = r.value().revision;
        }
        self->work_done();
        co_return;
    }
    self->work_done();
    if (!r) {
        self->etcd_failed(fmt::format("campaign for controller failed: {}", r.error().message()));
        co_return;
    }
    self->etcd_answered();
    if (r.value().succeeded) {
        // The key was absent, so the put created it: its create_revision is the txn's revision.
        self->_stats->elections_won.fetch_add(1, std::memory_order_relaxed);
        self->become_controller(r.value().revision, "elected");
        self->request_pass();
        co_return;
    }
    const auto& ranges = r.value().ranges;
    if (ranges.empty() || ranges.front().kvs.empty()) {
        // Deleted right after the compare: the deletion's snapshot starts the next campaign.
        co_return;
    }
    const auto& kv = ranges.front().kvs.front();
    auto holder = etcd_layout::decode_controller(kv.value);
    if (holder && holder.value() == me) {
        self->become_controller(kv.create_revision, "adopted this incarnation's key");
        self->request_pass();
        co_return;
    }
    logger()->debug("campaign lost: P/controller is held by {} (epoch {})",
                    holder ? std::to_string(holder.value().node_id) : "an unreadable record",
                    kv.create_revision);
}

asio::awaitable<void> controller::run_passes(std::shared_ptr<controller> self) {
    // A pass that stopped early (compare failure, etcd error) still runs the queued one: the
    // snapshot that queued it may be the one the failed compare was waiting for.
    do {
        self->_pass_queued = false;
        co_await self->one_pass();
    } while (self->_pass_queued && self->_epoch != 0 && !self->_stopping);
    self->_pass_running = false;
    self->work_done();
}

// The txns of one pass, shared by the writers that take them in turn.
struct controller::pass_writes {
    explicit pass_writes(asio::any_io_executor ex) : all_done(ex) {}
    plan_result planned;
    std::vector<controller_txn> txns;
    int64_t epoch = 0;
    int64_t snapshot_version = 0;
    size_t next = 0;
    size_t writers = 0;
    bool stop = false;
    asio::steady_timer all_done;  // cancelled when the last writer ends
};

asio::awaitable<void> controller::one_pass() {
    if (_epoch == 0 || _stopping) {
        co_return;
    }
    auto snapshot = _snapshot;
    if (snapshot->version < _written_revision) {
        // Our last writes are still on their way through the watch; that change queues the
        // next pass.
        co_return;
    }
    auto pass = std::make_shared<pass_writes>(_executor);
    auto options = _options.plan;
    options.rebalance_leaders = std::exchange(_rebalance_due, false);
    pass->planned = plan(*snapshot, options);
    log_unplaceable(pass->planned.unplaceable);
    if (pass->planned.writes.empty() && pass->planned.elections_done.empty() &&
        pass->planned.unfence.empty()) {
        co_return;
    }
    pass->epoch = _epoch;
    pass->snapshot_version = snapshot->version;
    pass->txns = controller_txns(_options.keys, pass->epoch, pass->planned.writes);
    for (auto& t :
         election_cleanup_txns(_options.keys, pass->epoch, pass->planned.elections_done)) {
        pass->txns.push_back(std::move(t));
    }
    for (const auto& b : pass->planned.unfence) {
        pass->txns.push_back(unfence_txn(_options.keys, pass->epoch, b));
    }
    pass->writers = std::min(std::max<size_t>(_options.txns_in_flight, 1), pass->txns.size());
    for (size_t w = 0; w < pass->writers; ++w) {
        asio::co_spawn(_executor, write_txns(shared_from_this(), pass), asio::detached);
    }
    // The writers start only once this coroutine suspends, so the count is checked before any
    // could have ended.
    while (pass->writers > 0) {
        pass->all_done.expires_at(asio::steady_timer::time_point::max());
        boost::system::error_code ec;
        co_await pass->all_done.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
}

asio::awaitable<void> controller::write_txns(std::shared_ptr<controller> self,
                                             std::shared_ptr<pass_writes> pass) {
    while (!pass->stop && pass->next < pass->txns.size()) {
        if (self->_stopping || self->_epoch != pass->epoch) {
            break;
        }
        auto& txn = pass->txns[pass->next++];
        auto call = self->_client.txn(std::move(txn.request));
        auto r = co_await std::move(call);
        if (!self->txn_done(*pass, txn, r)) {
            pass->stop = true;
        }
    }
    if (--pass->writers == 0) {
        pass->all_done.cancel();
    }
}

bool controller::txn_done(pass_writes& pass, const controller_txn& txn,
                          const result<etcd::txn_result>& r) {
    if (!r) {
        etcd_failed(fmt::format("controller write of {} partition records failed: {}", txn.count,
                                r.error().message()));
        return false;
    }
    etcd_answered();
    if (!r.value().succeeded) {
        _stats->txn_compare_failures.fetch_add(1, std::memory_order_relaxed);
        const auto& ranges = r.value().ranges;
        const bool still_ours = !ranges.empty() && !ranges.front().kvs.empty() &&
                                ranges.front().kvs.front().create_revision == pass.epoch;
        if (!still_ours) {
            if (_epoch == pass.epoch) {
                deposed("a write found the controller key gone or re-created");
            }
            return false;
        }
        logger()->debug(
            "controller write of {} partition records lost a compare (snapshot {} is stale); "
            "waiting for the next snapshot",
            txn.count, pass.snapshot_version);
        return false;
    }
    // Concurrent txns commit in any order: the pass is visible once the latest one is.
    _written_revision = std::max(_written_revision, r.value().revision);
    _records_written += txn.count;
    _stats->txns_committed.fetch_add(1, std::memory_order_relaxed);
    _stats->preferred_elections.fetch_add(
        static_cast<uint64_t>(std::count_if(
            pass.planned.writes.begin() + static_cast<std::ptrdiff_t>(txn.first),
            pass.planned.writes.begin() + static_cast<std::ptrdiff_t>(txn.first + txn.count),
            [](const partition_write& w) {
                return w.why == partition_write::reason::preferred_election;
            })),
        std::memory_order_relaxed);
    log_committed(pass.planned.writes, txn.first, txn.count);
    if (txn.unfences >= 0) {
        logger()->info("broker {} unfenced: its logs are recovered and it leads nothing",
                       txn.unfences);
    }
    return true;
}

void controller::log_committed(const std::vector<partition_write>& writes, size_t first,
                               size_t count) {
    // Placements: one line per topic and txn; leadership moves: one line each.
    std::map<std::string_view, int> placed;
    for (size_t i = first; i < first + count; ++i) {
        const auto& w = writes[i];
        if (w.why == partition_write::reason::place) {
            ++placed[w.topic];
            logger()->debug("placed {}-{} on {} (leader {})", w.topic, w.state.partition,
                            fmt::join(w.state.replicas, ","), w.state.leader);
            continue;
        }
        if (w.why == partition_write::reason::reassign_start ||
            w.why == partition_write::reason::reassign_complete ||
            w.why == partition_write::reason::reassign_cancel) {
            logger()->info(
                "{}-{} {}: replicas {} (adding {}, removing {}), leader {}, ISR {}", w.topic,
                w.state.partition, why_text(w.why), fmt::join(w.state.replicas, ","),
                fmt::join(w.state.adding_replicas, ","), fmt::join(w.state.removing_replicas, ","),
                w.state.leader, fmt::join(w.state.isr, ","));
            continue;
        }
        if (w.why == partition_write::reason::isr_shrink) {
            logger()->info("{}-{} ISR -> {} (partition epoch {}): brokers gone or shutting down",
                           w.topic, w.state.partition, fmt::join(w.state.isr, ","),
                           w.state.partition_epoch);
            continue;
        }
        logger()->info("{}-{} leader {} -> {} (leader epoch {}, ISR {}): {}", w.topic,
                       w.state.partition, w.previous_leader, w.state.leader, w.state.leader_epoch,
                       fmt::join(w.state.isr, ","), why_text(w.why));
    }
    for (const auto& [topic, n] : placed) {
        logger()->info("placed {} partition(s) of {}", n, topic);
    }
}

void controller::log_unplaceable(const std::vector<std::string>& topics) {
    std::set<std::string> now(topics.begin(), topics.end());
    for (const auto& t : now) {
        if (!_unplaceable_logged.contains(t)) {
            logger()->warn(
                "cannot place topic {}: its replication factor exceeds the {} live broker(s); "
                "it stays unplaced until enough brokers are live",
                t, _snapshot->brokers.size());
        }
    }
    _unplaceable_logged = std::move(now);
}

asio::awaitable<void> controller::stop() {
    _stopping = true;
    _pass_queued = false;
    _retry_timer.cancel();
    _imbalance_timer.cancel();
    while (_in_flight > 0) {
        _idle.expires_at(asio::steady_timer::time_point::max());
        boost::system::error_code ec;
        co_await _idle.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (_epoch == 0) {
        co_return;
    }
    const int64_t epoch = _epoch;
    _epoch = 0;
    auto request = resign_txn(_options.keys, epoch);
    auto call = _client.txn(std::move(request));
    auto r = co_await std::move(call);
    if (!r) {
        logger()->warn(
            "broker {} could not resign as controller (epoch {}): {}; the key goes with the "
            "session lease",
            _options.node_id, epoch, r.error().message());
    } else if (r.value().succeeded) {
        logger()->info("broker {} resigned as controller (epoch {})", _options.node_id, epoch);
    } else {
        logger()->info("broker {} was no longer controller at stop (epoch {})", _options.node_id,
                       epoch);
    }
}

namespace {
asio::awaitable<void> stop_controller(std::shared_ptr<controller> c) {
    co_await c->stop();
}
}  // namespace

void controller::stop_blocking(std::chrono::milliseconds bound) {
    auto done = asio::co_spawn(_executor, stop_controller(shared_from_this()), asio::use_future);
    // Bounded: a store thread that no longer runs (stopped first, against the lifecycle) must
    // not hang the broker's shutdown; the key then goes with the session lease.
    if (done.wait_for(bound) != std::future_status::ready) {
        logger()->warn("broker {} did not finish stopping its controller within {} ms",
                       _options.node_id, bound.count());
    }
}

}  // namespace spool::broker::metadata
