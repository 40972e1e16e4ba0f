#include "broker/cluster/partition_isr_writer.h"

#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

namespace spool::broker::cluster {

namespace asio = boost::asio;

namespace {

using done_fn = std::function<void(std::error_code)>;

asio::awaitable<void> alter(metadata::store* s, metadata::isr_update update,
                            const runtime::shard_pool* pool, size_t owner, done_fn done) {
    std::error_code ec;
    try {
        auto r = co_await s->alter_isr(std::move(update));
        if (!r) {
            ec = r.error();
        }
    } catch (const std::exception& e) {
        // A boundary: the store's coroutine must not take the writer's thread down.
        log::get("cluster")->error("alter_isr failed: {}", e.what());
        ec = make_error_code(metadata::errc::unavailable);
    }
    pool->post(owner, [done = std::move(done), ec] { done(ec); });
}

}  // namespace

partition_isr_writer::partition_isr_writer(metadata::store& s, runtime::shard_pool& pool)
    : _store(s), _pool(pool) {}

partition_isr_writer::~partition_isr_writer() {
    _thread.stop();
}

void partition_isr_writer::write(replication::isr_change change, done_fn done) {
    metadata::isr_update u;
    u.topic = change.tp.topic;
    u.partition = change.tp.partition.value();
    u.leader_epoch = change.leader_epoch;
    u.partition_epoch = change.partition_epoch;
    u.record_revision = change.record_revision;
    u.isr = std::move(change.new_isr);
    // Partitions call from their owner shard, where the outcome goes back.
    auto owner = runtime::shard_pool::current_shard().value_or(0);
    // Spawned from the writer's own thread: no shard takes its scheduler lock.
    _thread.post([this, u = std::move(u), owner, done = std::move(done)]() mutable {
        asio::co_spawn(_thread.executor(),
                       alter(&_store, std::move(u), &_pool, owner, std::move(done)),
                       asio::detached);
    });
}

}  // namespace spool::broker::cluster
