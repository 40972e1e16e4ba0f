#pragma once

// The body of one request frame while it is read off the socket.
//
// A frame's size prefix is only a claim (up to socket.request.max.bytes, 100 MiB by default), so
// memory follows the bytes that actually arrived. A frame whose bytes trickle in is held in
// chunks, each filled once and never moved: growing one vector instead (as the
// reader did before) copied everything received so far at each doubling, megabytes at a time
// on the shard, which stalled every other connection of that shard (issue #14's slow trickle).
// The decoder needs the frame contiguous, so the one copy happens when the rest of the frame
// is in the socket: the chunks move into one buffer of the frame's size, a bounded step at a
// time (linearise(), so that the reader can let the shard's other connections run between
// steps), and the remaining bytes are read straight into it. A frame whose bytes are all there
// at its first read (a fast client) is read into that buffer at once and never copied.
//
//     claimed:   [----------------------- size -------------------------]
//     trickling: [chunk 0][chunk 1][chunk 2][par]                          (received + < 1 chunk)
//     last read: [ chunks 0..3 copied once   |  rest read in place      ]  (one buffer, size)
//
// Chunks are sized to the bytes the socket holds, and grow with the frame (each new chunk as
// large as the frame's chunks so far, from min_chunk_bytes up to chunk_bytes), so a frame that
// brought 16 bytes holds 4 KiB and a long trickle needs few allocations. Memory held is at most
// the bytes received plus the larger of min_chunk_bytes and min(received, chunk_bytes), until the
// rest of the frame is ready; then the frame's size (those bytes are in the socket: nothing is
// merely claimed).
//
// Threading: one connection's reader; not thread-safe. Lifecycle: one frame; release() hands
// the contiguous bytes over.

#include <boost/asio/buffer.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace spool::broker::net {

class frame_buffer {
public:
    // The largest chunk: below glibc's mmap threshold (128 KiB), so chunks come from the shard's
    // malloc arena and are reused, instead of one mmap/munmap (and its page faults) per chunk.
    static constexpr size_t chunk_bytes = 64 * 1024;
    static constexpr size_t min_chunk_bytes = 4096;
    // Buffers one prepare() returns at most: one scatter read fills no more (Asio passes at most
    // 64 iovecs to a read), so chunks are not allocated ahead of the read that fills them.
    static constexpr size_t max_buffers = 64;

    // Allocates nothing: `size` is what the frame claims.
    explicit frame_buffer(size_t size) : _size(size) {}

    size_t size() const { return _size; }
    size_t received() const { return _received; }
    size_t missing() const { return _size - _received; }
    bool complete() const { return _received == _size; }
    // Bytes allocated for the frame now (chunks, or the contiguous buffer).
    size_t allocated_bytes() const;
    // Bytes copied from chunks into the contiguous buffer (zero for a frame read at once).
    size_t copied_bytes() const { return _copied; }

    // True when the next `ready` bytes end the frame while the bytes so far are still in chunks:
    // they must first move into one contiguous buffer (linearise()).
    bool must_linearise(size_t ready) const {
        return !_is_contiguous && _received + std::min(ready, missing()) == _size;
    }
    // Copies up to `max_bytes` more of the chunks into the contiguous buffer (freeing each chunk
    // once copied); true when the frame is contiguous.
    bool linearise(size_t max_bytes);

    // Buffers for the next bytes of the frame, to read into; `ready` (> 0) is how many the
    // socket holds. They cover min(ready, missing()) bytes, at most max_buffers chunks; when
    // they reach the end of the frame the bytes so far are first moved into one contiguous
    // buffer (what linearise() has not copied yet). The buffers stay valid until the next
    // prepare() or release().
    std::vector<boost::asio::mutable_buffer> prepare(size_t ready);
    // Marks `n` bytes of the last prepare()'s buffers as read (n at most their total).
    void commit(size_t n);

    // The whole frame, contiguous; complete() must hold. The buffer is empty afterwards.
    std::vector<uint8_t> release();

private:
    struct chunk {
        std::unique_ptr<uint8_t[]> data;
        size_t capacity = 0;
    };

    size_t _size;
    size_t _received = 0;
    size_t _copied = 0;
    std::vector<chunk> _chunks;        // the bytes received, in order; the last may have room
    size_t _chunked = 0;               // sum of the chunks' capacities
    size_t _fill = 0;                  // the chunk the next byte goes to (may be past the end)
    size_t _fill_start = 0;            // the frame offset of that chunk's first byte
    size_t _linearised = 0;            // chunks already copied into _contiguous (and freed)
    std::vector<uint8_t> _contiguous;  // the frame, once its end is in the socket
    bool _is_contiguous = false;
};

}  // namespace spool::broker::net
