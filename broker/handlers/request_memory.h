#pragma once

// The memory budget of one request: what its decoded body, the handler's per-item work and its
// encoded response may take, together, is bounded by a small multiple of its frame:
//
//     budget = floor_bytes + frame_multiple * frame size
//
// A Kafka request names entities (groups, topics, partitions, config resources) that handlers
// expand into per-item work and answers; a 5 MB DescribeGroups naming 5 million empty groups
// would otherwise build gigabytes. Three places charge it:
//   - the decoder, for every array it reserves (wire::reader::charge, exact);
//   - handlers, before expanding named items into per-item work (charge_items below);
//   - handler_util's encode(), for the response buffer before it is allocated.
// A request past its budget is refused like an oversized frame: logged once and the connection
// closed (Kafka has no answer for it; it would build the response and run out of memory).
// Data the broker holds (Metadata for all topics, a topic's configs) is bounded by the cluster,
// not the request, and is charged only where a request can repeat it.
//
// Threading: one request's, on its connection's shard.

#include <cstddef>
#include <cstdint>

namespace spool::broker::handlers {

class request_memory {
public:
    static constexpr size_t floor_bytes = 8 * 1024 * 1024;
    static constexpr size_t frame_multiple = 16;

    request_memory() = default;
    explicit request_memory(size_t frame_bytes)
        : _limit(floor_bytes + frame_multiple * frame_bytes), _left(_limit) {}

    // The decoder charges this counter directly (wire::reader::limit_memory).
    size_t* decode_budget() { return &_left; }

    [[nodiscard]] bool charge(uint64_t count, size_t element_size) {
        if (element_size != 0 && count > _left / element_size) {
            _left = 0;
            _exceeded = true;
            return false;
        }
        _left -= static_cast<size_t>(count) * element_size;
        return true;
    }
    [[nodiscard]] bool exceeded() const { return _exceeded; }
    [[nodiscard]] size_t limit() const { return _limit; }

private:
    size_t _limit = floor_bytes;
    size_t _left = floor_bytes;
    bool _exceeded = false;
};

}  // namespace spool::broker::handlers
