#include "protocol/records/batch_parser.h"

#include "protocol/records/crc32c.h"
#include "protocol/records/errc.h"
#include "protocol/records/record_reader.h"

#include <algorithm>

namespace spool::protocol::records {

namespace {

// The smallest record: a one-byte length and a six-byte body.
constexpr size_t min_record_size = 7;

std::error_code check_offsets(const batch_info& info, const validate_options& options) {
    if (info.record_count < 0) {
        return errc::invalid_record;
    }
    if (options.origin == batch_origin::client) {
        // Kafka's LogValidator: offsets are assigned by the leader, counts must be dense, and
        // only the broker writes control batches.
        if (info.base_offset != 0 || info.record_count == 0 ||
            info.last_offset_delta != info.record_count - 1 || info.is_control()) {
            return errc::invalid_record;
        }
        return {};
    }
    // Compaction can leave gaps and even empty batches, but never more records than offsets.
    if (info.last_offset_delta < 0 || info.last_offset_delta < info.record_count - 1 ||
        info.base_offset < 0 || info.base_offset > INT64_MAX - info.last_offset_delta) {
        return errc::invalid_record;
    }
    return {};
}

}  // namespace

result<batch_info> read_batch_header(std::span<const uint8_t> buffer,
                                     const validate_options& options) {
    if (buffer.size() <= batch_offset::magic) {
        return errc::corrupt_message;
    }
    const uint8_t* p = buffer.data();
    batch_info info;
    info.magic = static_cast<int8_t>(p[batch_offset::magic]);
    if (info.magic == 0 || info.magic == 1) {
        return errc::unsupported_magic;
    }
    if (info.magic != current_magic) {
        return errc::corrupt_message;
    }
    info.batch_length = static_cast<int32_t>(load_be32(p + batch_offset::batch_length));
    if (info.batch_length < min_batch_length ||
        static_cast<size_t>(info.batch_length) > buffer.size() - log_overhead) {
        return errc::corrupt_message;
    }
    info.size = static_cast<size_t>(info.batch_length) + log_overhead;
    if (info.size > options.max_batch_size) {
        return errc::message_too_large;
    }
    info.base_offset = static_cast<int64_t>(load_be64(p + batch_offset::base_offset));
    info.partition_leader_epoch =
        static_cast<int32_t>(load_be32(p + batch_offset::partition_leader_epoch));
    info.crc = load_be32(p + batch_offset::crc);
    info.attributes = static_cast<int16_t>(load_be16(p + batch_offset::attributes));
    info.last_offset_delta = static_cast<int32_t>(load_be32(p + batch_offset::last_offset_delta));
    info.base_timestamp = static_cast<int64_t>(load_be64(p + batch_offset::base_timestamp));
    info.max_timestamp = static_cast<int64_t>(load_be64(p + batch_offset::max_timestamp));
    info.producer_id = static_cast<int64_t>(load_be64(p + batch_offset::producer_id));
    info.producer_epoch = static_cast<int16_t>(load_be16(p + batch_offset::producer_epoch));
    info.base_sequence = static_cast<int32_t>(load_be32(p + batch_offset::base_sequence));
    info.record_count = static_cast<int32_t>(load_be32(p + batch_offset::records_count));
    return info;
}

result<batch_info> validate_batch(std::span<const uint8_t> buffer,
                                  const validate_options& options) {
    auto header = read_batch_header(buffer, options);
    if (!header) {
        return header.error();
    }
    batch_info info = header.value();
    if (options.verify_crc) {
        uint32_t actual =
            crc32c(buffer.subspan(batch_offset::attributes, info.size - batch_offset::attributes));
        if (actual != info.crc) {
            return errc::corrupt_message;
        }
    }
    // Attribute and count checks come after the CRC: on a damaged batch they would only report
    // the damage under a misleading name.
    if ((info.attributes & attribute::codec_mask) > max_codec_id) {
        return errc::unsupported_compression;
    }
    if (auto ec = check_offsets(info, options)) {
        return ec;
    }
    if (options.check_records && !info.is_compressed()) {
        if (auto ec = validate_records(info, records_section(buffer, info), options)) {
            return ec;
        }
    }
    return info;
}

std::error_code validate_records(batch_info& info, std::span<const uint8_t> records,
                                 const validate_options& options) {
    if (static_cast<uint64_t>(info.record_count) > records.size() / min_record_size) {
        return errc::invalid_record;
    }
    const bool client = options.origin == batch_origin::client;
    record_reader reader(records, info.record_count);
    record_view record;
    int64_t max_delta = INT64_MIN;
    int64_t expected_offset = 0;  // client: the next delta; log: one past the previous delta
    bool null_key = false;
    while (reader.next(record)) {
        if (client) {
            if (record.offset_delta != expected_offset ||
                (record.attributes & attribute::codec_mask) != 0) {
                return errc::invalid_record;
            }
        } else if (record.offset_delta < expected_offset ||
                   record.offset_delta > info.last_offset_delta) {
            return errc::invalid_record;
        }
        expected_offset = int64_t{record.offset_delta} + 1;
        max_delta = std::max(max_delta, record.timestamp_delta);
        null_key |= record.key.is_null;
    }
    if (reader.error() || reader.records_left() != 0 || reader.bytes_left() != 0) {
        return errc::invalid_record;
    }
    int64_t max_timestamp = -1;
    // A base timestamp near INT64_MAX plus a positive delta names no representable time (found by
    // records_batch_fuzz): the batch is corrupt, not a reason for undefined behaviour.
    if (info.record_count != 0 &&
        __builtin_add_overflow(info.base_timestamp, int64_t{max_delta}, &max_timestamp)) {
        return errc::invalid_record;
    }
    info.records_checked = true;
    info.has_null_key = null_key;
    info.max_record_timestamp = max_timestamp;
    return {};
}

result<batch_info> validate_batch_deep(std::span<const uint8_t> buffer,
                                       const validate_options& options,
                                       decompress_buffer& scratch) {
    auto checked = validate_batch(buffer, options);
    if (!checked) {
        return checked.error();
    }
    batch_info info = checked.value();
    if (!options.check_records || !info.is_compressed()) {
        return info;
    }
    if (auto ec = decompress(info.codec(), records_section(buffer, info), scratch,
                             options.max_decompressed_size)) {
        return ec;
    }
    if (auto ec = validate_records(info, scratch.data(), options)) {
        return ec;
    }
    return info;
}

result<std::span<const uint8_t>> batch_records(std::span<const uint8_t> buffer,
                                               const batch_info& info, decompress_buffer& scratch,
                                               size_t cap) {
    if (info.offset > buffer.size() || info.size > buffer.size() - info.offset ||
        info.size < batch_header_size) {
        return errc::corrupt_message;
    }
    auto section = records_section(buffer, info);
    if (!info.is_compressed()) {
        return section;
    }
    if (auto ec = decompress(info.codec(), section, scratch, cap)) {
        return ec;
    }
    return scratch.data();
}

result<batch_info> batch_walker::next() {
    auto rest = _buffer.subspan(std::min(_offset, _buffer.size()));
    auto info = validate_batch_deep(rest, _options, _scratch);
    if (!info) {
        _offset = _buffer.size();
        return info.error();
    }
    info.value().offset = _offset;
    _offset += info.value().size;
    return info;
}

result<batches_summary> validate_batches(std::span<const uint8_t> buffer,
                                         const validate_options& options,
                                         decompress_buffer& scratch) {
    if (buffer.empty()) {
        return errc::corrupt_message;
    }
    batches_summary summary;
    batch_walker walker(buffer, options, scratch);
    while (!walker.done()) {
        auto next = walker.next();
        if (!next) {
            return next.error();
        }
        const batch_info& info = next.value();
        if (summary.batch_count == 0) {
            summary.first = info;
        }
        summary.last = info;
        summary.record_count += info.record_count;
        ++summary.batch_count;
    }
    return summary;
}

}  // namespace spool::protocol::records
