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
    int in_flight = 0;
    bool finish_when_idle = false;
    std::promise<void> finished;

    void probe_done(int32_t node) {
        probing.erase(node);
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
    suspect_on(_state, node);
}

void dead_broker_probe::suspect_on(const std::shared_ptr<state>& st, int32_t node) {
    if (st->stopped.load(std::memory_order_acquire)) {
        return;
    }
    asio::post(st->executor, [st, node] {
        if (st->stopped.load(std::memory_order_acquire) || st->probing.contains(node)) {
            return;
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
            suspect_on(st, node);
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
        if (st->in_flight == 0) {
            st->finished.set_value();
        } else {
            st->finish_when_idle = true;
        }
    });
    done.wait();
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
    connect_outcome last = connect_outcome::inconclusive;
    int refused = 0;
    if (where) {
        for (; refused < o.refusals && !st->stopped.load(std::memory_order_acquire); ++refused) {
            if (refused > 0) {
                co_await sleep_for(st->executor, o.interval);
            }
            last = co_await connect_once(st->executor, *where, o.connect_timeout);
            if (last != connect_outcome::refused) {
                break;
            }
        }
    }
    if (!where || refused < o.refusals || st->stopped.load(std::memory_order_acquire)) {
        if (where) {
            logger()->debug("broker {} at {}:{}: connect {}; left to its session lease", node,
                            where->host, where->port, outcome_text(last));
        }
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
