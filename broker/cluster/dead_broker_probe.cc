#include "broker/cluster/dead_broker_probe.h"

#include "broker/cluster/leader_endpoints.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include <atomic>
#include <future>
#include <map>
#include <optional>
#include <set>

namespace spool::broker::cluster {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

std::shared_ptr<spdlog::logger> logger() {
    static auto l = log::get("cluster");
    return l;
}

}  // namespace

connect_outcome classify_connect(const boost::system::error_code& ec) {
    if (!ec) {
        return connect_outcome::accepted;
    }
    if (ec == asio::error::connection_refused) {
        return connect_outcome::refused;
    }
    return connect_outcome::inconclusive;
}

std::optional<int64_t> session_to_end(const metadata::cluster_state& state, int32_t node,
                                      int32_t self, int64_t expected_lease) {
    if (node == self || node < 0) {
        return std::nullopt;
    }
    const auto it = state.brokers.find(node);
    if (it == state.brokers.end() || it->second.fenced || it->second.lease == 0) {
        return std::nullopt;
    }
    if (expected_lease != 0 && it->second.lease != expected_lease) {
        return std::nullopt;
    }
    return it->second.lease;
}

struct dead_broker_probe::state {
    state(metadata::store& s, asio::io_context::executor_type ex, dead_broker_probe_options o)
        : store(s), executor(ex), options(std::move(o)) {}

    metadata::store& store;
    asio::io_context::executor_type executor;
    dead_broker_probe_options options;
    std::atomic<bool> stopped{false};
    std::atomic<uint64_t> ended{0};
    // On the executor only.
    std::set<int32_t> probing;
    std::map<int32_t, std::chrono::steady_clock::time_point> alive_at;  // last probe not dead
    int in_flight = 0;
    bool finish_when_idle = false;
    std::promise<void> finished;
    std::optional<asio::steady_timer> follower_timer;  // watch_followers' loop

    void probe_done(int32_t node) {
        probing.erase(node);
        work_done();
    }
    void work_done() {
        if (--in_flight == 0 && finish_when_idle) {
            finish_when_idle = false;
            finished.set_value();
        }
    }
};

namespace {

asio::awaitable<connect_outcome> connect_once(asio::io_context::executor_type ex,
                                              replication::leader_endpoint where,
                                              std::chrono::milliseconds timeout) {
    boost::system::error_code ec;
    tcp::resolver resolver(ex);
    auto found = co_await resolver.async_resolve(where.host, std::to_string(where.port),
                                                 asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
        co_return connect_outcome::inconclusive;
    }
    // Every address the name resolves to must refuse (async_connect tries each in turn and
    // reports the last error), so a name with an unused IPv6 address is not taken for dead.
    boost::beast::tcp_stream stream(ex);
    stream.expires_after(timeout);
    co_await stream.async_connect(found, asio::redirect_error(asio::use_awaitable, ec));
    co_return classify_connect(ec);
}

asio::awaitable<void> sleep_for(asio::io_context::executor_type ex, std::chrono::milliseconds d) {
    asio::steady_timer timer(ex, d);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

const char* outcome_text(connect_outcome o) {
    switch (o) {
        case connect_outcome::refused:
            return "refused";
        case connect_outcome::accepted:
            return "accepted";
        case connect_outcome::inconclusive:
            return "neither accepted nor refused";
    }
    return "?";
}

}  // namespace

dead_broker_probe::dead_broker_probe(metadata::store& store,
                                     asio::io_context::executor_type executor,
                                     dead_broker_probe_options options)
    : _state(std::make_shared<state>(store, executor, std::move(options))) {}

dead_broker_probe::~dead_broker_probe() {
    // No wait here: the shards may have stopped already (a start that failed); a probe that
    // never resumes again never reaches the store.
    _state->stopped.store(true, std::memory_order_release);
}

void dead_broker_probe::suspect(int32_t node) {
    suspect_on(_state, node, false);
}

void dead_broker_probe::suspect_on(const std::shared_ptr<state>& st, int32_t node,
                                   bool overdue_only) {
    if (st->stopped.load(std::memory_order_acquire)) {
        return;
    }
    asio::post(st->executor, [st, node, overdue_only] {
        if (st->stopped.load(std::memory_order_acquire) || st->probing.contains(node)) {
            return;
        }
        if (overdue_only) {
            // A follower that fetches nothing (idle partitions, incremental fetch sessions)
            // stays overdue: once found alive, look again only after the cooldown. A lost
            // connection always probes.
            auto seen = st->alive_at.find(node);
            if (seen != st->alive_at.end() &&
                std::chrono::steady_clock::now() - seen->second < st->options.overdue_cooldown) {
                return;
            }
        }
        const auto snap = st->store.snapshot();
        if (!snap || !session_to_end(*snap, node, st->options.self)) {
            return;
        }
        st->probing.insert(node);
        ++st->in_flight;
        asio::co_spawn(st->executor, probe(st, node), asio::detached);
    });
}

std::function<void(int32_t)> dead_broker_probe::listener() const {
    std::weak_ptr<state> weak = _state;
    return [weak](int32_t node) {
        if (auto st = weak.lock()) {
            suspect_on(st, node, false);
        }
    };
}

void dead_broker_probe::stop() {
    auto st = _state;
    if (!st || st->stopped.exchange(true)) {
        return;
    }
    auto done = st->finished.get_future();
    asio::post(st->executor, [st] {
        if (st->follower_timer) {
            st->follower_timer->cancel();
        }
        if (st->in_flight == 0) {
            st->finished.set_value();
        } else {
            st->finish_when_idle = true;
        }
    });
    done.wait();
}

void dead_broker_probe::watch_followers(partition_manager& partitions,
                                        std::chrono::milliseconds overdue,
                                        std::chrono::milliseconds interval) {
    auto st = _state;
    asio::post(st->executor, [st, pm = &partitions, overdue, interval] {
        if (st->stopped.load(std::memory_order_acquire) || st->follower_timer) {
            return;
        }
        st->follower_timer.emplace(st->executor);
        ++st->in_flight;
        asio::co_spawn(st->executor, follower_loop(st, pm, overdue, interval), asio::detached);
    });
}

asio::awaitable<void> dead_broker_probe::follower_loop(std::shared_ptr<state> st,
                                                       partition_manager* partitions,
                                                       std::chrono::milliseconds overdue,
                                                       std::chrono::milliseconds interval) {
    const int32_t self = st->options.self;
    while (!st->stopped.load(std::memory_order_acquire)) {
        boost::system::error_code ec;
        st->follower_timer->expires_after(interval);
        co_await st->follower_timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (st->stopped.load(std::memory_order_acquire)) {
            break;
        }
        // A follower is overdue when none of its fetches of any partition this broker leads
        // is recent: fetch sessions leave idle partitions out of its requests. The shards are
        // visited one after the other, so the maps need no lock.
        std::set<int32_t> in_isr;
        std::map<int32_t, std::chrono::steady_clock::time_point> freshest;
        partition_manager::led_predicate collect = [&in_isr, &freshest,
                                                    self](const replication::partition& p) {
            for (int32_t r : p.isr()) {
                if (r != self) {
                    in_isr.insert(r);
                }
            }
            for (const auto& f : p.followers()) {
                auto& t = freshest[f.replica];
                t = std::max(t, f.last_fetch);
            }
            return true;
        };
        co_await partitions->every_led_partition(collect);
        const auto now = std::chrono::steady_clock::now();
        for (int32_t r : in_isr) {
            if (now - freshest[r] > overdue) {
                suspect_on(st, r, true);
            }
        }
    }
    st->work_done();
}

uint64_t dead_broker_probe::sessions_ended() const {
    return _state->ended.load(std::memory_order_relaxed);
}

asio::awaitable<void> dead_broker_probe::probe(std::shared_ptr<state> st, int32_t node) {
    const auto& o = st->options;
    auto snap = st->store.snapshot();
    const auto lease = session_to_end(*snap, node, o.self);
    const auto it = snap->brokers.find(node);
    const auto where = lease && it != snap->brokers.end()
                           ? inter_broker_endpoint(it->second, o.listener)
                           : std::nullopt;
    // Connects every `interval` until `refusals` in a row were refused (dead), or `window`
    // passed, or one neither accepted nor refused (no evidence either way). An accepted connect
    // does not end the probe at once: a process being killed closes its sockets one by one, so
    // its port may still accept just after a connection to it was lost.
    connect_outcome last = connect_outcome::inconclusive;
    int refused = 0;
    const auto until = std::chrono::steady_clock::now() + o.window;
    while (where && refused < o.refusals && !st->stopped.load(std::memory_order_acquire)) {
        last = co_await connect_once(st->executor, *where, o.connect_timeout);
        refused = last == connect_outcome::refused ? refused + 1 : 0;
        if (refused >= o.refusals || last == connect_outcome::inconclusive ||
            std::chrono::steady_clock::now() + o.interval > until) {
            break;
        }
        co_await sleep_for(st->executor, last == connect_outcome::refused ? o.interval
                                                                          : o.recheck_interval);
    }
    if (!where || refused < o.refusals || st->stopped.load(std::memory_order_acquire)) {
        if (where) {
            logger()->debug("broker {} at {}:{}: connect {}; left to its session lease", node,
                            where->host, where->port, outcome_text(last));
        }
        st->alive_at[node] = std::chrono::steady_clock::now();
        st->probe_done(node);
        co_return;
    }
    // Judged on the registration seen when the probe began: a node that registered again in
    // between is a new process, whatever the old one did.
    snap = st->store.snapshot();
    if (!session_to_end(*snap, node, o.self, *lease)) {
        st->probe_done(node);
        co_return;
    }
    logger()->warn(
        "broker {} refuses connections at {}:{} ({} tries, {} ms apart): its process is gone; "
        "ending its session (lease {:x}) so its leaderships move now",
        node, where->host, where->port, o.refusals, o.interval.count(), *lease);
    auto end_op = st->store.end_session_of(node, *lease);
    auto ended = co_await std::move(end_op);
    if (ended) {
        st->ended.fetch_add(1, std::memory_order_relaxed);
    } else {
        logger()->warn("could not end broker {}'s session: {}; its lease runs out instead", node,
                       ended.error().message());
    }
    st->probe_done(node);
}

}  // namespace spool::broker::cluster
