#include "protocol/records/batch_builder.h"

#include "protocol/records/batch_rewrite.h"
#include "protocol/records/errc.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <algorithm>

namespace spool::protocol::records {

namespace {

using wire::writer;

size_t nullable_size(const nullable_bytes& b) {
    if (b.is_null) {
        return writer::varint_size(-1);
    }
    return writer::varint_size(static_cast<int32_t>(b.size())) + b.size();
}

void write_nullable(writer& w, const nullable_bytes& b) {
    if (b.is_null) {
        w.write_varint(-1);
        return;
    }
    w.write_varint(static_cast<int32_t>(b.size()));
    w.write_bytes(b.bytes);
}

}  // namespace

void batch_builder::add(const record_data& record) {
    if (_count == 0) {
        _base_timestamp = record.timestamp;
        _max_timestamp = record.timestamp;
    }
    _max_timestamp = std::max(_max_timestamp, record.timestamp);
    const int64_t timestamp_delta = record.timestamp - _base_timestamp;
    const int32_t offset_delta = _count;

    size_t body = 1 + writer::varlong_size(timestamp_delta) + writer::varint_size(offset_delta) +
                  nullable_size(record.key) + nullable_size(record.value) +
                  writer::varint_size(static_cast<int32_t>(record.headers.size()));
    for (const auto& h : record.headers) {
        body += writer::varint_size(static_cast<int32_t>(h.key.size())) + h.key.size() +
                nullable_size(h.value);
    }
    _records.reserve(_records.size() + body + 5);
    writer w(_records);
    w.write_varint(static_cast<int32_t>(body));
    w.write_i8(0);
    w.write_varlong(timestamp_delta);
    w.write_varint(offset_delta);
    write_nullable(w, record.key);
    write_nullable(w, record.value);
    w.write_varint(static_cast<int32_t>(record.headers.size()));
    for (const auto& h : record.headers) {
        w.write_varint(static_cast<int32_t>(h.key.size()));
        w.write_raw(h.key);
        write_nullable(w, h.value);
    }
    ++_count;
}

std::error_code batch_builder::build(std::vector<uint8_t>& out) const {
    int16_t attributes = static_cast<int16_t>(_options.codec);
    if (_options.ts_type == timestamp_type::log_append_time) {
        attributes |= attribute::log_append_time;
    }
    if (_options.transactional) {
        attributes |= attribute::transactional;
    }
    if (_options.control) {
        attributes |= attribute::control;
    }
    int64_t max_timestamp = _max_timestamp;
    if (_options.ts_type == timestamp_type::log_append_time && _options.log_append_time >= 0) {
        max_timestamp = _options.log_append_time;
    }

    const size_t start = out.size();
    out.reserve(start + batch_header_size + _records.size());
    writer w(out);
    w.write_i64(_options.base_offset);
    size_t length_at = w.reserve_placeholder(4);
    w.write_i32(_options.partition_leader_epoch);
    w.write_i8(current_magic);
    (void)w.reserve_placeholder(4);  // crc, computed last
    w.write_i16(attributes);
    w.write_i32(_count == 0 ? 0 : _count - 1);
    w.write_i64(_base_timestamp);
    w.write_i64(max_timestamp);
    w.write_i64(_options.producer_id);
    w.write_i16(_options.producer_epoch);
    w.write_i32(_options.base_sequence);
    w.write_i32(_count);
    if (auto ec = compress(_options.codec, _records, out, _options.codec_options)) {
        out.resize(start);
        return ec;
    }
    const size_t total = out.size() - start;
    if (total - log_overhead > static_cast<size_t>(INT32_MAX)) {
        out.resize(start);
        return errc::message_too_large;
    }
    w.patch_i32(length_at, static_cast<int32_t>(total - log_overhead));
    return update_crc({out.data() + start, total});
}

std::vector<uint8_t> batch_builder::build() const {
    std::vector<uint8_t> out;
    if (build(out)) {
        out.clear();
    }
    return out;
}

void batch_builder::reset(const batch_options& options) {
    _options = options;
    _records.clear();
    _count = 0;
    _base_timestamp = -1;
    _max_timestamp = -1;
}

std::error_code build_control_batch(control_type type, const control_batch_options& options,
                                    std::vector<uint8_t>& out) {
    uint8_t key[4];
    store_be16(key, 0);
    store_be16(key + 2, static_cast<uint16_t>(type));
    uint8_t value[6];
    store_be16(value, 0);
    store_be32(value + 2, static_cast<uint32_t>(options.coordinator_epoch));

    batch_options batch;
    batch.base_offset = options.base_offset;
    batch.partition_leader_epoch = options.partition_leader_epoch;
    batch.producer_id = options.producer_id;
    batch.producer_epoch = options.producer_epoch;
    batch.transactional = true;
    batch.control = true;
    batch_builder builder(batch);
    builder.add(options.timestamp, nullable_bytes::of(std::span<const uint8_t>(key)),
                nullable_bytes::of(std::span<const uint8_t>(value)));
    return builder.build(out);
}

std::error_code parse_control_record(const record_view& record, control_marker& out) {
    if (record.key.is_null || record.key.size() < 4) {
        return errc::invalid_record;
    }
    wire::reader key(record.key.bytes);
    int16_t version = key.read_i16();
    int16_t type = key.read_i16();
    if (version < 0 || (type != 0 && type != 1)) {
        return errc::invalid_record;
    }
    out.type = static_cast<control_type>(type);
    out.coordinator_epoch = 0;
    if (!record.value.is_null && record.value.size() >= 6) {
        wire::reader value(record.value.bytes);
        (void)value.read_i16();
        out.coordinator_epoch = value.read_i32();
    }
    return {};
}

}  // namespace spool::protocol::records
