#pragma once

// Validation of v2 record batches as a Produce request, a replica fetch or a log segment carries
// them (layout in batch_format.h). The checks, in order, and the error each one gives:
//
//   batch shorter than its fixed header, batch_length < 49 or past the buffer  corrupt_message
//   magic 0 or 1                                                     unsupported_magic
//   any other magic than 2                                           corrupt_message
//   batch bigger than options.max_batch_size                         message_too_large
//   CRC-32C over attributes..end differs                             corrupt_message
//   codec id 5..7                                                    unsupported_compression
//   records_count < 0; last_offset_delta inconsistent with the count invalid_record
//   client batches: base_offset != 0, empty, control batch           invalid_record
//   records (uncompressed, or after decompression): a record that
//   does not parse exactly, fewer/more records than the count,
//   offset deltas not 0..n-1 (client) or not increasing (log),
//   compression bits on an inner record (client)                     invalid_record
//
// Validating an uncompressed batch allocates nothing; compressed batches decompress into a
// caller-owned decompress_buffer that is reused from batch to batch.
//
// Threading: free functions over caller-owned bytes.

#include "common/result.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/compression.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <system_error>

namespace spool::protocol::records {

// Where a batch comes from decides how strict the offset checks are.
enum class batch_origin : uint8_t {
    // A producer: base offset 0, at least one record, offset deltas exactly 0..n-1, no control
    // batches (those are written by the broker only).
    client,
    // The log or a replica fetch: offsets assigned, compaction may have left gaps or no records.
    log,
};

struct validate_options {
    batch_origin origin = batch_origin::client;
    bool verify_crc = true;
    // max.message.bytes: a larger batch (total bytes) is message_too_large.
    size_t max_batch_size = std::numeric_limits<size_t>::max();
    // Walk every record. For a compressed batch this needs validate_batch_deep().
    bool check_records = true;
    // Cap for decompressed records (validate_batch_deep only).
    size_t max_decompressed_size = 64 * 1024 * 1024;
};

// What validation learned about one batch.
struct batch_info {
    int64_t base_offset = 0;
    int32_t batch_length = 0;
    int32_t partition_leader_epoch = -1;
    int8_t magic = 0;
    uint32_t crc = 0;
    int16_t attributes = 0;
    int32_t last_offset_delta = 0;
    int64_t base_timestamp = 0;
    int64_t max_timestamp = 0;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    int32_t record_count = 0;
    // Byte span of the whole batch (base_offset included) within the buffer that was parsed.
    size_t offset = 0;
    size_t size = 0;

    // Filled when the records were walked (records_checked).
    bool records_checked = false;
    bool has_null_key = false;
    // Largest base_timestamp + timestamp_delta over the records (-1 if none).
    int64_t max_record_timestamp = -1;

    compression codec() const {
        return static_cast<compression>(attributes & attribute::codec_mask);
    }
    timestamp_type ts_type() const {
        return (attributes & attribute::log_append_time) ? timestamp_type::log_append_time
                                                         : timestamp_type::create_time;
    }
    bool is_compressed() const { return codec() != compression::none; }
    bool is_transactional() const { return (attributes & attribute::transactional) != 0; }
    bool is_control() const { return (attributes & attribute::control) != 0; }
    bool has_producer_id() const { return producer_id >= 0; }
    int64_t last_offset() const { return base_offset + last_offset_delta; }
};

// The records section of a batch the buffer holds (uncompressed bytes or the compressed block).
inline std::span<const uint8_t> records_section(std::span<const uint8_t> buffer,
                                                const batch_info& info) {
    return buffer.subspan(info.offset + batch_header_size, info.size - batch_header_size);
}

// The uncompressed records section of a batch that passed validate_batch: the batch's own bytes
// when uncompressed, otherwise scratch after decompressing into it (at most cap bytes). For
// readers of the log (the group coordinator loading __consumer_offsets, fetch down-conversion).
[[nodiscard]] result<std::span<const uint8_t>> batch_records(std::span<const uint8_t> buffer,
                                                             const batch_info& info,
                                                             decompress_buffer& scratch,
                                                             size_t cap);

// Reads the fixed header of the batch at the start of buffer and checks only what is needed to
// find the next batch: length, magic and the size limit. No CRC, codec, offset or record checks
// (a damaged header would make those report the wrong error). info.offset is 0.
[[nodiscard]] result<batch_info> read_batch_header(std::span<const uint8_t> buffer,
                                                   const validate_options& options);

// Header, CRC and, for an uncompressed batch with check_records, every record.
[[nodiscard]] result<batch_info> validate_batch(std::span<const uint8_t> buffer,
                                                const validate_options& options);

// Checks the records of a batch: records is the uncompressed records section. Updates info's
// record fields.
[[nodiscard]] std::error_code validate_records(batch_info& info, std::span<const uint8_t> records,
                                               const validate_options& options);

// validate_batch, then for a compressed batch decompresses into scratch (at most
// options.max_decompressed_size bytes) and checks the records. Afterwards scratch holds the
// decompressed records of a compressed batch.
[[nodiscard]] result<batch_info> validate_batch_deep(std::span<const uint8_t> buffer,
                                                     const validate_options& options,
                                                     decompress_buffer& scratch);

// Walks a buffer of concatenated batches (a Produce partition's records, a fetched range, a
// segment). Each next() validates one batch with validate_batch_deep; info.offset is relative to
// the whole buffer. Trailing bytes too short to be a batch are corrupt_message.
//
// Lifecycle: views the buffer, which must outlive it; one thread.
class batch_walker {
public:
    batch_walker(std::span<const uint8_t> buffer, const validate_options& options,
                 decompress_buffer& scratch)
        : _buffer(buffer), _options(options), _scratch(scratch) {}

    bool done() const { return _offset >= _buffer.size(); }
    [[nodiscard]] result<batch_info> next();

private:
    std::span<const uint8_t> _buffer;
    validate_options _options;
    decompress_buffer& _scratch;
    size_t _offset = 0;
};

struct batches_summary {
    size_t batch_count = 0;
    int64_t record_count = 0;
    batch_info first;
    batch_info last;
};

// Validates every batch in buffer (which must hold at least one).
[[nodiscard]] result<batches_summary> validate_batches(std::span<const uint8_t> buffer,
                                                       const validate_options& options,
                                                       decompress_buffer& scratch);

}  // namespace spool::protocol::records
