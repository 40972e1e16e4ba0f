#include "protocol/records/batch_rewrite.h"

#include "protocol/records/crc32c.h"
#include "protocol/records/errc.h"

namespace spool::protocol::records {

std::error_code set_base_offset(std::span<uint8_t> batch, int64_t base_offset) {
    if (batch.size() < batch_header_size) {
        return errc::corrupt_message;
    }
    store_be64(batch.data() + batch_offset::base_offset, static_cast<uint64_t>(base_offset));
    return {};
}

std::error_code set_partition_leader_epoch(std::span<uint8_t> batch, int32_t epoch) {
    if (batch.size() < batch_header_size) {
        return errc::corrupt_message;
    }
    store_be32(batch.data() + batch_offset::partition_leader_epoch, static_cast<uint32_t>(epoch));
    return {};
}

std::error_code update_crc(std::span<uint8_t> batch) {
    if (batch.size() < batch_header_size) {
        return errc::corrupt_message;
    }
    uint32_t crc = crc32c(std::span<const uint8_t>(batch).subspan(batch_offset::attributes));
    store_be32(batch.data() + batch_offset::crc, crc);
    return {};
}

std::error_code set_log_append_time(std::span<uint8_t> batch, int64_t append_time) {
    if (batch.size() < batch_header_size) {
        return errc::corrupt_message;
    }
    uint8_t* p = batch.data();
    auto attributes =
        static_cast<uint16_t>(load_be16(p + batch_offset::attributes) | attribute::log_append_time);
    store_be16(p + batch_offset::attributes, attributes);
    store_be64(p + batch_offset::max_timestamp, static_cast<uint64_t>(append_time));
    return update_crc(batch);
}

}  // namespace spool::protocol::records
