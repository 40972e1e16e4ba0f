#pragma once

// Record-batch codecs (gzip, snappy, lz4, zstd) from Debian's zlib, libsnappy, liblz4 and libzstd.
//
// Decompression never trusts a size the input declares. Output goes into a decompress_buffer
// that grows geometrically and never past the caller's cap (the broker passes a limit derived
// from max.message.bytes); reaching the cap with input left is errc::decompressed_too_large, so a
// compression bomb costs at most `cap` bytes of buffer, not what it claims to expand to.
//
// Codec specifics:
// - gzip: RFC 1952 stream(s); a zlib-wrapped stream is accepted too (librdkafka reads both).
// - snappy: raw blocks (librdkafka writes these) and the snappy-java "xerial" framing the Java
//   client writes:
//       magic "\x82SNAPPY\0" (8) | version int32 BE | min compatible version int32 BE |
//       { chunk_length int32 BE | raw snappy block }*
//   A raw block declares its uncompressed length up front; it is refused when larger than the
//   cap or than snappy can possibly expand the block (at most ~21x), before anything is allocated.
// - lz4: the LZ4 frame format (KIP-57), possibly several concatenated frames.
// - zstd: one or more frames; the decoder's window is limited (see compression.cc).
//
// Threading: the functions are thread-safe; codec contexts are cached per thread.

#include "protocol/records/batch_format.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <system_error>
#include <vector>

namespace spool::protocol::records {

// Reusable output buffer for decompression. Unlike std::vector it never zero-fills the space it
// grows into. Lifecycle: owned by one connection or shard and reused across batches (the memory
// stays at its high-water mark until release()); not thread-safe.
class decompress_buffer {
public:
    std::span<const uint8_t> data() const { return {_data.get(), _size}; }
    size_t size() const { return _size; }
    size_t capacity() const { return _capacity; }
    void clear() { _size = 0; }
    void release() {
        _data.reset();
        _size = _capacity = 0;
    }

    // For codecs: the writable tail, and marking n bytes of it as produced.
    uint8_t* tail() { return _data.get() + _size; }
    size_t spare() const { return _capacity - _size; }
    void commit(size_t n) { _size += n; }

    // Grows the capacity (doubling, at least 64 KiB) but never beyond cap. False when the buffer
    // already holds cap bytes.
    bool grow(size_t cap);
    // Makes room for at least n more bytes, keeping the total within cap.
    bool reserve_extra(size_t n, size_t cap);

private:
    void reallocate(size_t capacity);

    std::unique_ptr<uint8_t[]> _data;
    size_t _size = 0;
    size_t _capacity = 0;
};

// Replaces out's contents with the decompressed input. Errors: corrupt_message (undecodable),
// decompressed_too_large (would exceed cap), unsupported_compression (codec none or unknown).
[[nodiscard]] std::error_code decompress(compression codec, std::span<const uint8_t> input,
                                         decompress_buffer& out, size_t cap);

struct compress_options {
    // Codec-specific level; 0 means the library default (gzip 6, lz4 fast, zstd 3).
    int level = 0;
    // Snappy only: write the xerial framing (as the Java client does) instead of a raw block.
    bool snappy_xerial = false;
};

// Appends the compressed input to out.
[[nodiscard]] std::error_code compress(compression codec, std::span<const uint8_t> input,
                                       std::vector<uint8_t>& out,
                                       const compress_options& options = {});

}  // namespace spool::protocol::records
