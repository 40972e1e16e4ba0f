#include "broker/storage/marker_horizon.h"

#include "broker/storage/errc.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"
#include "protocol/wire/writer.h"

namespace spool::broker::storage {

result<std::vector<uint8_t>> with_delete_horizon(std::span<const uint8_t> marker,
                                                 int64_t horizon_ms) {
    if (marker.size() < rf::batch_header_size) {
        return make_error_code(errc::corrupt_batch);
    }
    auto b = batch_info::decode(marker.data());
    if (!b.is_control() || (b.attributes & rf::attribute::codec_mask) != 0 ||
        b.size() != marker.size() || b.record_count != 1) {
        return make_error_code(errc::corrupt_batch);
    }
    const auto base_ts =
        static_cast<int64_t>(rf::load_be64(marker.data() + rf::batch_offset::base_timestamp));
    rf::record_reader reader(marker.subspan(rf::batch_header_size), 1);
    rf::record_view r;
    if (!reader.next(r) || r.key.is_null) {
        return make_error_code(errc::corrupt_batch);
    }
    std::vector<uint8_t> out(marker.begin(), marker.begin() + rf::batch_header_size);
    rf::store_be16(out.data() + rf::batch_offset::attributes,
                   static_cast<uint16_t>(b.attributes | rf::attribute::delete_horizon));
    rf::store_be64(out.data() + rf::batch_offset::base_timestamp,
                   static_cast<uint64_t>(horizon_ms));
    // The one record again, its timestamp now a delta from the horizon (Kafka's
    // MemoryRecordsBuilder with a delete horizon does the same).
    std::vector<uint8_t> body;
    protocol::wire::writer w(body);
    w.write_i8(0);
    w.write_varlong(base_ts + r.timestamp_delta - horizon_ms);
    w.write_varint(r.offset_delta);
    w.write_varint(static_cast<int32_t>(r.key.size()));
    w.write_bytes(r.key.bytes);
    if (r.value.is_null) {
        w.write_varint(-1);
    } else {
        w.write_varint(static_cast<int32_t>(r.value.size()));
        w.write_bytes(r.value.bytes);
    }
    w.write_varint(0);  // markers carry no headers
    protocol::wire::writer whole(out);
    whole.write_varint(static_cast<int32_t>(body.size()));
    out.insert(out.end(), body.begin(), body.end());
    rf::store_be32(out.data() + rf::batch_offset::batch_length,
                   static_cast<uint32_t>(out.size() - rf::log_overhead));
    if (rf::update_crc(out)) {
        return make_error_code(errc::corrupt_batch);
    }
    return out;
}

}  // namespace spool::broker::storage
