#pragma once

// Builds v2 record batches (layout in batch_format.h): for tests, for the group coordinator's
// __consumer_offsets records and for transaction markers. Offset deltas are the record indices;
// the first record's timestamp is the batch's base timestamp.
//
// Lifecycle: add() records, then build() once; reset() starts a new batch reusing the staging
// buffer. The builder copies record bytes into its staging buffer as they are added, so the
// caller's key/value/header bytes need only live through add(). Not thread-safe.

#include "protocol/records/batch_format.h"
#include "protocol/records/compression.h"
#include "protocol/records/record_reader.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

namespace spool::protocol::records {

struct header_data {
    std::string_view key;
    nullable_bytes value;
};

struct record_data {
    int64_t timestamp = 0;
    nullable_bytes key;
    nullable_bytes value;
    std::span<const header_data> headers;
};

struct batch_options {
    compression codec = compression::none;
    compress_options codec_options;
    int64_t base_offset = 0;
    int32_t partition_leader_epoch = -1;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    bool transactional = false;
    bool control = false;
    timestamp_type ts_type = timestamp_type::create_time;
    // For LogAppendTime batches: the max_timestamp to write (-1: the records' maximum).
    int64_t log_append_time = -1;
};

class batch_builder {
public:
    explicit batch_builder(const batch_options& options = {}) : _options(options) {}

    void add(const record_data& record);
    void add(int64_t timestamp, nullable_bytes key, nullable_bytes value,
             std::span<const header_data> headers = {}) {
        add(record_data{timestamp, key, value, headers});
    }

    int32_t record_count() const { return _count; }
    // Bytes of the encoded (uncompressed) records so far.
    size_t records_size() const { return _records.size(); }

    // Appends the finished batch to out.
    [[nodiscard]] std::error_code build(std::vector<uint8_t>& out) const;
    [[nodiscard]] std::vector<uint8_t> build() const;

    void reset(const batch_options& options);

private:
    batch_options _options;
    std::vector<uint8_t> _records;
    int32_t _count = 0;
    int64_t _base_timestamp = -1;
    int64_t _max_timestamp = -1;
};

// Transaction markers: a control batch with one record whose key is (version int16 = 0,
// type int16) and whose value is (version int16 = 0, coordinator_epoch int32).
enum class control_type : int16_t { abort = 0, commit = 1 };

struct control_marker {
    control_type type = control_type::abort;
    int32_t coordinator_epoch = 0;
};

struct control_batch_options {
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t coordinator_epoch = 0;
    int64_t timestamp = 0;
    int64_t base_offset = 0;
    int32_t partition_leader_epoch = -1;
};

[[nodiscard]] std::error_code build_control_batch(control_type type,
                                                  const control_batch_options& options,
                                                  std::vector<uint8_t>& out);

// Decodes the marker of a control record; invalid_record if the key or value does not parse.
[[nodiscard]] std::error_code parse_control_record(const record_view& record, control_marker& out);

}  // namespace spool::protocol::records
