#include "broker/storage/txn_marker.h"

#include "broker/storage/batch_info.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/record_reader.h"

namespace spool::broker::storage {

std::optional<txn_marker> read_txn_marker(std::span<const uint8_t> batch) {
    if (batch.size() < rf::batch_header_size) {
        return std::nullopt;
    }
    auto b = batch_info::decode(batch.data());
    // Kafka never compresses a control batch.
    if (!b.is_control() || (b.attributes & rf::attribute::codec_mask) != 0 ||
        b.size() > batch.size() || b.record_count < 1) {
        return std::nullopt;
    }
    auto records = batch.subspan(rf::batch_header_size, b.size() - rf::batch_header_size);
    rf::record_reader reader(records, b.record_count);
    rf::record_view r;
    if (!reader.next(r)) {
        return std::nullopt;
    }
    rf::control_marker m;
    if (rf::parse_control_record(r, m)) {
        return std::nullopt;
    }
    return txn_marker{m.type == rf::control_type::commit, m.coordinator_epoch};
}

}  // namespace spool::broker::storage
