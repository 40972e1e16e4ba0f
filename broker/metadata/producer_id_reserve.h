#pragma once

// The producer ids a store has reserved (persisted as taken) but not yet handed out.
//
// Why: a store commit is expensive (the embedded store rewrites and fsyncs its whole file and
// publishes a snapshot to every shard; the etcd store runs a transaction and waits for its watch).
// With one commit per block of 1,000 ids, an InitProducerId flood made 83 commits a second, and
// their bursts on the metadata writer kept the shards' cores busy in short slices: p99 produce
// latency went from 0.8 ms to over 20 ms (issue #14, item 7). Stores instead reserve a large
// chunk per commit and hand blocks out of it from memory.
//
// A restart forgets the unused rest of a chunk: those ids are skipped, never reused (producer ids
// are int64; a million per restart would take 10^13 restarts to matter).
//
// Threading: any thread; a mutex guards two integers and is taken once per block a shard draws
// (handlers/producer_ids.h keeps per-shard blocks), not per request.

#include "broker/metadata/store.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>

namespace spool::broker::metadata {

class producer_id_reserve {
public:
    static constexpr int32_t default_chunk = 1'000'000;

    explicit producer_id_reserve(int32_t chunk = default_chunk) : _chunk(chunk) {}

    // count ids from the reserved range, or nullopt when it holds fewer (reserve a chunk).
    std::optional<producer_id_block> take(int32_t count) {
        std::lock_guard lock(_mutex);
        if (count <= 0 || _end - _next < count) {
            return std::nullopt;
        }
        producer_id_block block{_next, count};
        _next += count;
        return block;
    }

    // How many ids to reserve in the store for a request of count.
    int32_t chunk_for(int32_t count) const { return std::max(_chunk, count); }

    // A chunk just reserved in the store: the caller's count ids come from its start, and the
    // rest becomes the range to hand out, unless a chunk reserved concurrently reaches further
    // (then this one's rest is skipped; the two never overlap, so nothing is handed out twice).
    producer_id_block install(producer_id_block chunk, int32_t count) {
        std::lock_guard lock(_mutex);
        const int64_t chunk_end = chunk.first + chunk.count;
        if (chunk_end > _end) {
            _next = chunk.first + count;
            _end = chunk_end;
        }
        return {chunk.first, count};
    }

private:
    const int32_t _chunk;
    std::mutex _mutex;
    int64_t _next = 0;
    int64_t _end = 0;
};

}  // namespace spool::broker::metadata
