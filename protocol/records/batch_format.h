#pragma once

// Record batch v2 (magic 2) layout, shared by the parser, the builder and the rewrites.
//
//   offset  size  field                 notes
//   0       8     base_offset           int64; a producer sends 0, the leader assigns it
//   8       4     batch_length          int32; bytes after this field (total = length + 12)
//   12      4     partition_leader_epoch int32; set by the leader, NOT covered by the CRC
//   16      1     magic                 int8; 2 (0 and 1 are the retired message sets)
//   17      4     crc                   uint32; CRC-32C over bytes 21..end
//   21      2     attributes            int16; see below
//   23      4     last_offset_delta     int32
//   27      8     base_timestamp        int64
//   35      8     max_timestamp         int64; the broker sets it for LogAppendTime
//   43      8     producer_id           int64; -1 when not idempotent
//   51      2     producer_epoch        int16; -1
//   53      4     base_sequence         int32; -1
//   57      4     records_count         int32
//   61      ...   records               one compressed block when the codec is not none
//
//   attributes: bits 0-2 codec (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), bit 3 timestamp type
//   (1 = LogAppendTime), bit 4 transactional, bit 5 control, bit 6 delete horizon set.
//
//   record (all varints zig-zag):
//     length varint | attributes int8 | timestamp_delta varlong | offset_delta varint |
//     key_length varint (-1 = null) | key | value_length varint (-1 = null) | value |
//     header_count varint | headers
//   header: key_length varint (>= 0) | key (UTF-8) | value_length varint (-1 = null) | value
//
// All integers in the fixed header are big-endian.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace spool::protocol::records {

namespace batch_offset {
inline constexpr size_t base_offset = 0;
inline constexpr size_t batch_length = 8;
inline constexpr size_t partition_leader_epoch = 12;
inline constexpr size_t magic = 16;
inline constexpr size_t crc = 17;
inline constexpr size_t attributes = 21;
inline constexpr size_t last_offset_delta = 23;
inline constexpr size_t base_timestamp = 27;
inline constexpr size_t max_timestamp = 35;
inline constexpr size_t producer_id = 43;
inline constexpr size_t producer_epoch = 51;
inline constexpr size_t base_sequence = 53;
inline constexpr size_t records_count = 57;
inline constexpr size_t records = 61;
}  // namespace batch_offset

// Bytes before batch_length's coverage starts (base_offset + batch_length).
inline constexpr size_t log_overhead = 12;
// Fixed header size, and the smallest legal batch_length value.
inline constexpr size_t batch_header_size = batch_offset::records;
inline constexpr int32_t min_batch_length = static_cast<int32_t>(batch_header_size - log_overhead);
inline constexpr int8_t current_magic = 2;

enum class compression : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };
inline constexpr uint8_t max_codec_id = 4;
std::string_view to_string(compression c) noexcept;

enum class timestamp_type : uint8_t { create_time = 0, log_append_time = 1 };

namespace attribute {
inline constexpr int16_t codec_mask = 0x07;
inline constexpr int16_t log_append_time = 0x08;
inline constexpr int16_t transactional = 0x10;
inline constexpr int16_t control = 0x20;
inline constexpr int16_t delete_horizon = 0x40;
}  // namespace attribute

// A possibly-null byte string as records carry it (length -1 = null). Views caller-owned bytes.
struct nullable_bytes {
    std::span<const uint8_t> bytes;
    bool is_null = true;

    static nullable_bytes null() { return {}; }
    static nullable_bytes of(std::span<const uint8_t> b) { return {b, false}; }
    static nullable_bytes of(std::string_view s) {
        return {{reinterpret_cast<const uint8_t*>(s.data()), s.size()}, false};
    }
    std::string_view as_string() const {
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }
    size_t size() const { return bytes.size(); }
};

// Big-endian helpers for fixed header fields of a buffer the caller has bounds-checked.
inline uint64_t load_be64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) {
        v = (v << 8) | p[i];
    }
    return v;
}
inline uint32_t load_be32(const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
inline uint16_t load_be16(const uint8_t* p) {
    return static_cast<uint16_t>((p[0] << 8) | p[1]);
}
inline void store_be64(uint8_t* p, uint64_t v) {
    for (int i = 7; i >= 0; --i) {
        p[i] = static_cast<uint8_t>(v);
        v >>= 8;
    }
}
inline void store_be32(uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}
inline void store_be16(uint8_t* p, uint16_t v) {
    p[0] = static_cast<uint8_t>(v >> 8);
    p[1] = static_cast<uint8_t>(v);
}

}  // namespace spool::protocol::records
