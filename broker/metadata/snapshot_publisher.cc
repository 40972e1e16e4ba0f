#include "broker/metadata/snapshot_publisher.h"

#include <boost/asio/post.hpp>

#include <utility>

namespace spool::broker::metadata {

namespace asio = boost::asio;

void snapshot_publisher::attach(runtime::shard_pool& pool,
                                std::optional<asio::any_io_executor> release_on) {
    _release_on = std::move(release_on);
    auto initial = latest();
    _shard_copies = std::make_unique<shard_copy[]>(pool.shard_count());
    for (size_t i = 0; i < pool.shard_count(); ++i) {
        _shard_copies[i].state = initial;
    }
    _pool = &pool;
}

cluster_snapshot snapshot_publisher::snapshot() const {
    if (_pool != nullptr && runtime::shard_pool::current_pool() == _pool) {
        const size_t shard = *runtime::shard_pool::current_shard();
        const auto& copy = _shard_copies[shard].state;
        if (!copy || copy->version < _latest_version.load(std::memory_order_acquire)) {
            // Published, its install not yet run here: take it now (this shard's copy only).
            const_cast<snapshot_publisher*>(this)->install(shard, latest());
        }
        return _shard_copies[shard].state;
    }
    return latest();
}

cluster_snapshot snapshot_publisher::latest() const {
    std::lock_guard lock(_latest_mutex);
    return _latest;
}

void snapshot_publisher::publish(cluster_snapshot s) {
    {
        std::lock_guard lock(_latest_mutex);
        _latest = s;
    }
    if (s) {
        _latest_version.store(s->version, std::memory_order_release);
    }
    if (_pool == nullptr) {
        return;
    }
    for (size_t i = 0; i < _pool->shard_count(); ++i) {
        _pool->post(i, [this, i, s] { install(i, s); });
    }
}

void snapshot_publisher::install(size_t shard, const cluster_snapshot& s) {
    auto& copy = _shard_copies[shard].state;
    if (!s || (copy && copy->version >= s->version)) {
        return;
    }
    auto old = std::exchange(copy, s);
    if (old && _release_on) {
        // Usually the last reference once every shard moved on (handlers rarely keep one).
        asio::post(*_release_on, [old = std::move(old)]() mutable { old.reset(); });
    }
}

asio::awaitable<int> snapshot_publisher::install_on_shard(snapshot_publisher* self, size_t shard,
                                                          cluster_snapshot s) {
    self->install(shard, s);
    co_return 0;
}

asio::awaitable<void> snapshot_publisher::wait_visible(cluster_snapshot s) {
    if (_pool == nullptr) {
        co_return;
    }
    // publish() already posted s to every shard; visiting each one (after those posts, or
    // installing it ourselves) is what lets the caller answer knowing every shard sees it.
    for (size_t i = 0; i < _pool->shard_count(); ++i) {
        auto visit = runtime::run_on(_pool->executor(i), install_on_shard(this, i, s));
        (void)co_await std::move(visit);
    }
}

}  // namespace spool::broker::metadata
