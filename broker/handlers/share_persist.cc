#include "broker/handlers/share_persist.h"

#include "broker/handlers/error_mapping.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_partitions.h"
#include "broker/handlers/share_state_client.h"
#include "common/log.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <map>
#include <memory>
#include <vector>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
namespace asio = boost::asio;

// The coroutines waiting for a write of (partition, group) in flight, per shard: each shard is
// one thread, and only coroutines on the partition's owner shard touch its entries.
using waiters = std::map<std::string, std::vector<std::weak_ptr<asio::steady_timer>>>;
thread_local waiters t_waiters;

std::string waiter_key(const share_state_key& key, const std::string& group) {
    return key.tp.dir_name() + "/" + group;
}

asio::awaitable<void> wait_for_write(const std::string& key) {
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor,
                                                      asio::steady_timer::time_point::max());
    t_waiters[key].push_back(timer);
    boost::system::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void wake(const std::string& key) {
    auto it = t_waiters.find(key);
    if (it == t_waiters.end()) {
        return;
    }
    auto woken = std::move(it->second);
    t_waiters.erase(it);
    for (auto& w : woken) {
        if (auto t = w.lock()) {
            t->cancel();
        }
    }
}

// The rest run on the partition's owner shard.

asio::awaitable<error_code> persist_here(services* svc, share_state_key key, std::string group,
                                         uint64_t target) {
    const auto wkey = waiter_key(key, group);
    for (;;) {
        auto* p = svc->partitions.partition_here(key.tp);
        if (p == nullptr) {
            co_return error_code::not_leader_or_follower;
        }
        auto v = p->share_persist_begin(group, target);
        if (!v) {
            co_return to_kafka_error(v.error());
        }
        if (!v.value()) {
            co_return error_code::none;  // no state here (forgotten meanwhile)
        }
        auto view = std::move(*v.value());
        // From here on, the change this call waits for: the state as the first look found it.
        target = view.target;
        if (view.settled) {
            co_return static_cast<error_code>(*view.settled);
        }
        if (view.busy) {
            co_await wait_for_write(wkey);
            continue;
        }
        auto e = co_await write_share_state(*svc, group, key, view.leader_epoch,
                                            std::move(view.state));
        if (auto* again = svc->partitions.partition_here(key.tp)) {
            // Settles the acknowledgements the write carried (rolled back when it failed)
            // before any other write can take the state.
            again->share_persist_end(group, view.version, static_cast<int16_t>(e));
        }
        wake(wkey);
        // The next look reads how the write carrying `target` ended.
    }
}

asio::awaitable<error_code> ensure_here(services* svc, share_state_key key, std::string group,
                                        bool create) {
    auto* p = svc->partitions.partition_here(key.tp);
    if (p == nullptr) {
        co_return error_code::not_leader_or_follower;
    }
    if (p->share_state(group) != nullptr) {
        co_return error_code::none;
    }
    const int32_t epoch = p->leader_epoch();
    auto read = co_await read_share_state(*svc, group, key, epoch);
    if (read.error != error_code::none) {
        co_return read.error;
    }
    if (!read.state && !create) {
        co_return error_code::none;
    }
    p = svc->partitions.partition_here(key.tp);
    if (p == nullptr || p->leader_epoch() != epoch) {
        co_return error_code::not_leader_or_follower;
    }
    auto restored = p->share_restore(group, read.state, read.state_epoch, share_limits_of(*svc, group));
    if (!restored) {
        co_return to_kafka_error(restored.error());
    }
    if (restored.value() && !read.state) {
        // Where the group starts here, so a later leader starts there too.
        co_return co_await persist_here(svc, key, std::move(group), 0);
    }
    co_return error_code::none;
}

asio::awaitable<error_code> reinitialize_here(services* svc, share_state_key key,
                                              std::string group, int64_t start_offset) {
    if (auto e = co_await ensure_here(svc, key, group, false); e != error_code::none) {
        co_return e;
    }
    auto* p = svc->partitions.partition_here(key.tp);
    if (p == nullptr) {
        co_return error_code::not_leader_or_follower;
    }
    if (auto r = p->share_initialize(group, start_offset); !r) {
        co_return to_kafka_error(r.error());
    }
    co_return co_await persist_here(svc, key, std::move(group), 0);
}

asio::awaitable<error_code> forget_here(services* svc, share_state_key key, std::string group) {
    // The state epoch to go past: the state here, else the coordinator's.
    auto* p = svc->partitions.partition_here(key.tp);
    if (p == nullptr) {
        co_return error_code::not_leader_or_follower;
    }
    int32_t epoch = 0;
    if (const auto* s = p->share_state(group)) {
        epoch = s->state_epoch();
    } else {
        auto read = co_await read_share_state(*svc, group, key, p->leader_epoch());
        if (read.error != error_code::none) {
            co_return read.error;
        }
        if (!read.state) {
            co_return error_code::none;  // nothing kept anywhere
        }
        epoch = read.state_epoch;
    }
    p = svc->partitions.partition_here(key.tp);
    if (p == nullptr) {
        co_return error_code::not_leader_or_follower;
    }
    const int32_t leader_epoch = p->leader_epoch();
    if (auto r = p->share_delete(group); !r) {
        co_return to_kafka_error(r.error());
    }
    replication::share_persisted none;
    none.state_epoch = epoch + 1;
    none.start_offset = -1;
    co_return co_await write_share_state(*svc, std::move(group), key, leader_epoch,
                                         std::move(none));
}

asio::any_io_executor owner_of(services& svc, const share_state_key& key) {
    return svc.partitions.pool().executor(svc.partitions.shard_of(key.tp));
}

}  // namespace

asio::awaitable<error_code> share_ensure_state(services& svc, share_state_key key,
                                               std::string group, bool create) {
    auto ex = owner_of(svc, key);
    co_return co_await runtime::run_on(ex, ensure_here(&svc, std::move(key), std::move(group),
                                                       create));
}

asio::awaitable<error_code> share_persist(services& svc, share_state_key key, std::string group,
                                          uint64_t target) {
    auto ex = owner_of(svc, key);
    co_return co_await runtime::run_on(
        ex, persist_here(&svc, std::move(key), std::move(group), target));
}

asio::awaitable<error_code> share_reinitialize(services& svc, share_state_key key,
                                               std::string group, int64_t start_offset) {
    auto ex = owner_of(svc, key);
    co_return co_await runtime::run_on(
        ex, reinitialize_here(&svc, std::move(key), std::move(group), start_offset));
}

asio::awaitable<error_code> share_forget(services& svc, share_state_key key, std::string group) {
    auto ex = owner_of(svc, key);
    co_return co_await runtime::run_on(ex, forget_here(&svc, std::move(key), std::move(group)));
}

}  // namespace spool::broker::handlers
