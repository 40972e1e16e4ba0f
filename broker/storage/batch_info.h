#pragma once

// The fixed-header fields of a stored record batch that the log needs (offsets, size, timestamps,
// producer fields), read at the offsets protocol/records defines. The log treats batches as opaque
// otherwise: no per-record work on append or read. Validation (CRC, lengths) is check_batch().

#include "broker/model/ids.h"
#include "protocol/records/batch_format.h"

#include <cstdint>
#include <span>

namespace spool::broker::storage {

namespace rf = spool::protocol::records;

struct batch_info {
    model::offset base_offset;
    int32_t batch_length = 0;  // bytes after the length field
    model::leader_epoch leader_epoch;
    int8_t magic = 0;
    int16_t attributes = 0;
    int32_t last_offset_delta = 0;
    model::timestamp max_timestamp;
    model::producer_id pid;
    model::producer_epoch producer_epoch;
    model::sequence base_sequence;
    int32_t record_count = 0;

    [[nodiscard]] uint32_t size() const { return uint32_t(batch_length) + rf::log_overhead; }
    [[nodiscard]] model::offset last_offset() const { return base_offset + last_offset_delta; }
    [[nodiscard]] bool is_control() const { return (attributes & rf::attribute::control) != 0; }
    [[nodiscard]] bool is_transactional() const {
        return (attributes & rf::attribute::transactional) != 0;
    }
    [[nodiscard]] bool has_producer() const { return pid.value() >= 0; }
    // Kafka's DefaultRecordBatch.lastSequence: the sequence wraps from INT32_MAX to 0.
    [[nodiscard]] model::sequence last_sequence() const {
        int64_t s = int64_t(base_sequence.value()) + last_offset_delta;
        if (s > INT32_MAX) {
            s -= int64_t(INT32_MAX) + 1;
        }
        return model::sequence(static_cast<int32_t>(s));
    }

    // Decodes the header at p (at least rf::batch_header_size readable bytes).
    static batch_info decode(const uint8_t* p) {
        namespace o = rf::batch_offset;
        batch_info b;
        b.base_offset = model::offset(static_cast<int64_t>(rf::load_be64(p + o::base_offset)));
        b.batch_length = static_cast<int32_t>(rf::load_be32(p + o::batch_length));
        b.leader_epoch =
            model::leader_epoch(static_cast<int32_t>(rf::load_be32(p + o::partition_leader_epoch)));
        b.magic = static_cast<int8_t>(p[o::magic]);
        b.attributes = static_cast<int16_t>(rf::load_be16(p + o::attributes));
        b.last_offset_delta = static_cast<int32_t>(rf::load_be32(p + o::last_offset_delta));
        b.max_timestamp =
            model::timestamp(static_cast<int64_t>(rf::load_be64(p + o::max_timestamp)));
        b.pid = model::producer_id(static_cast<int64_t>(rf::load_be64(p + o::producer_id)));
        b.producer_epoch =
            model::producer_epoch(static_cast<int16_t>(rf::load_be16(p + o::producer_epoch)));
        b.base_sequence =
            model::sequence(static_cast<int32_t>(rf::load_be32(p + o::base_sequence)));
        b.record_count = static_cast<int32_t>(rf::load_be32(p + o::records_count));
        return b;
    }

    // Header fields that make the batch unusable before its bytes are even read: wrong magic,
    // a length below the fixed header, or a negative offset delta.
    [[nodiscard]] bool plausible() const {
        return magic == rf::current_magic && batch_length >= rf::min_batch_length &&
               last_offset_delta >= 0;
    }
};

// Full check of one stored batch (bytes = exactly one batch): header plausibility and the CRC-32C,
// as Kafka's recovery does (DefaultRecordBatch.ensureValid).
bool check_batch(std::span<const uint8_t> bytes);

}  // namespace spool::broker::storage
