#pragma once

// Hands out producer ids for InitProducerId from blocks the metadata store reserves, so a
// restart never reuses an id (the store persists the block before any id of it is used).
//
// Threading: thread-safe (a mutex around the current block; InitProducerId is rare).

#include "broker/metadata/store.h"
#include "common/result.h"

#include <cstdint>
#include <mutex>

namespace spool::broker::handlers {

class producer_id_allocator {
public:
    explicit producer_id_allocator(metadata::store& store, int32_t block_size = 1000)
        : _store(store), _block_size(block_size) {}

    result<int64_t> next() {
        std::lock_guard lock(_mutex);
        if (_next >= _end) {
            SPOOL_TRY(block, _store.allocate_producer_ids(_block_size));
            _next = block.first;
            _end = block.first + block.count;
        }
        return _next++;
    }

private:
    metadata::store& _store;
    int32_t _block_size;
    std::mutex _mutex;
    int64_t _next = 0;
    int64_t _end = 0;
};

}  // namespace spool::broker::handlers
