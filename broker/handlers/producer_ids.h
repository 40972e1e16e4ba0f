#pragma once

// Hands out producer ids for InitProducerId from blocks the metadata store reserves, so a
// restart never reuses an id (the store persists the block before any id of it is used).
//
// Each shard draws from its own block: no lock, and an InitProducerId flood costs one store
// commit per block and shard. While a shard's block is being refilled (the commit runs on the
// store's writer thread; the shard keeps serving), other requests on that shard wait for the
// refill instead of each asking the store for a block of their own.
//
// Threading: next() from any coroutine; per-shard state is touched on its shard only. Off a
// shard (tests) every call reserves a block of one id.

#include "broker/metadata/store.h"
#include "broker/runtime/async_event.h"
#include "broker/runtime/shard_pool.h"
#include "common/result.h"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace spool::broker::handlers {

class producer_id_allocator {
public:
    producer_id_allocator(metadata::store& store, runtime::shard_pool& pool,
                          int32_t block_size = 1000)
        : _store(store), _pool(pool), _block_size(block_size) {
        for (size_t i = 0; i < pool.shard_count(); ++i) {
            _shards.push_back(std::make_unique<shard_block>(pool.executor(i)));
        }
    }

    boost::asio::awaitable<result<int64_t>> next() {
        auto shard = runtime::shard_pool::current_shard();
        if (!shard || runtime::shard_pool::current_pool() != &_pool) {
            auto op = _store.allocate_producer_ids(1);
            auto one = co_await std::move(op);
            if (!one) {
                co_return one.error();
            }
            co_return one.value().first;
        }
        auto& b = *_shards[*shard];
        while (b.next >= b.end) {
            if (b.refilling) {
                co_await b.refilled.wait();
                continue;
            }
            b.refilling = true;
            auto op = _store.allocate_producer_ids(_block_size);
            auto block = co_await std::move(op);
            b.refilling = false;
            b.refilled.notify();
            if (!block) {
                co_return block.error();
            }
            b.next = block.value().first;
            b.end = block.value().first + block.value().count;
        }
        co_return b.next++;
    }

private:
    struct alignas(64) shard_block {
        explicit shard_block(boost::asio::io_context::executor_type ex) : refilled(ex) {}
        int64_t next = 0;
        int64_t end = 0;
        bool refilling = false;
        runtime::async_event refilled;
    };

    metadata::store& _store;
    runtime::shard_pool& _pool;
    int32_t _block_size;
    std::vector<std::unique_ptr<shard_block>> _shards;
};

}  // namespace spool::broker::handlers
