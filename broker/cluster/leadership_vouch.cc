#include "broker/cluster/leadership_vouch.h"

#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <future>

namespace spool::broker::cluster {

namespace asio = boost::asio;
using steady_clock = std::chrono::steady_clock;

struct leadership_vouch::state {
    state(metadata::store& s, partition_manager& pm, int32_t id, leadership_vouch_options o)
        : store(s), partitions(pm), self(id), options(o), timer(pm.pool().executor(0)) {}

    metadata::store& store;
    partition_manager& partitions;
    int32_t self;
    leadership_vouch_options options;
    asio::steady_timer timer;  // shard 0
    std::atomic<bool> stopped{false};
    std::promise<void> finished;
    bool started = false;
    // Shard 0 only: what the last check concluded, to log each change once.
    enum class standing { renewed, lapsed, vouched } last = standing::renewed;
};

namespace {

bool contains(const std::vector<int32_t>& v, int32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

leadership_vouch::leadership_vouch(metadata::store& store, partition_manager& partitions,
                                   int32_t self, leadership_vouch_options options)
    : _state(std::make_shared<state>(store, partitions, self, options)) {}

leadership_vouch::~leadership_vouch() {
    stop();
}

void leadership_vouch::start() {
    _state->started = true;
    asio::co_spawn(_state->timer.get_executor(), loop(_state), asio::detached);
}

void leadership_vouch::stop() {
    auto st = _state;
    if (!st->started || st->stopped.exchange(true)) {
        return;
    }
    asio::post(st->timer.get_executor(), [st] { st->timer.cancel(); });
    st->finished.get_future().wait();
}

asio::awaitable<bool> leadership_vouch::followers_vouch(const metadata::session_lease& lease,
                                                        steady_clock::time_point now) {
    return check(*_state, lease, now);
}

asio::awaitable<bool> leadership_vouch::check(state& st, metadata::session_lease lease,
                                              steady_clock::time_point now) {
    const auto since = lease.renewed_at + 2 * lease.timeout + st.options.margin;
    if (now < since || !lease.etcd_unreachable_across_lapse()) {
        co_return false;
    }
    const auto snap = st.store.snapshot();
    const auto fresh = st.options.freshness;
    const int32_t self = st.self;
    // A named local, not a temporary in the co_await expression: GCC 12 may destroy such a
    // temporary twice (handlers/partition_call.h).
    partition_manager::led_predicate vouches = [snap, since, now, fresh,
                                                self](const replication::partition& p) {
        // Who the controller could elect in this broker's place: the ISR and, by KIP-966,
        // the eligible leader replicas.
        std::vector<int32_t> electable = p.isr();
        if (const auto* t = snap->find(p.ntp().topic)) {
            if (t->has_partition(p.ntp().partition.value())) {
                for (int32_t r : t->partitions[p.ntp().partition.value()].elr) {
                    if (!contains(electable, r)) {
                        electable.push_back(r);
                    }
                }
            }
        }
        for (int32_t r : electable) {
            if (r == self) {
                continue;
            }
            const auto& followers = p.followers();
            auto f = std::find_if(followers.begin(), followers.end(),
                                  [r](const auto& x) { return x.replica == r; });
            if (f == followers.end() || f->log_end.value() < 0 || f->last_fetch < since ||
                now - f->last_fetch > fresh) {
                return false;
            }
        }
        return true;
    };
    const bool all = co_await st.partitions.every_led_partition(vouches);
    co_return all;
}

asio::awaitable<void> leadership_vouch::loop(std::shared_ptr<state> st) {
    while (!st->stopped.load(std::memory_order_acquire)) {
        boost::system::error_code ec;
        st->timer.expires_after(st->options.interval);
        co_await st->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (st->stopped.load(std::memory_order_acquire)) {
            break;
        }
        auto lease = st->store.lease();
        if (!lease || !lease->standing) {
            continue;
        }
        const auto now = steady_clock::now();
        if (!lease->lapsed(now)) {
            if (st->last != state::standing::renewed) {
                log::get("cluster")->info("node {}: etcd renewed this broker's session again",
                                          st->self);
            }
            st->last = state::standing::renewed;
            continue;
        }
        const bool vouched = co_await check(*st, *lease, now);
        if (vouched) {
            st->store.vouched_until(now + 2 * st->options.interval);
        }
        const auto now_standing = vouched ? state::standing::vouched : state::standing::lapsed;
        if (now_standing != st->last) {
            const auto ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(now - lease->renewed_at)
                    .count();
            if (vouched) {
                log::get("cluster")->warn(
                    "node {}: etcd has not renewed this broker's session for {} ms, but every "
                    "follower still fetches at its leader epochs (etcd is down for them too): "
                    "leading on their word",
                    st->self, ms);
            } else {
                log::get("cluster")->warn(
                    "node {}: etcd has not renewed this broker's session for {} ms: not leading "
                    "until it does, or until the followers vouch for it",
                    st->self, ms);
            }
            st->last = now_standing;
        }
    }
    st->finished.set_value();
}

}  // namespace spool::broker::cluster
