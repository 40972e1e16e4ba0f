#include "broker/replication/fetched_records.h"

#include "protocol/records/batch_format.h"

namespace spool::broker::replication {

size_t whole_batches_size(std::span<const uint8_t> records) {
    namespace rec = protocol::records;
    size_t at = 0;
    while (records.size() - at >= rec::log_overhead) {
        const uint8_t* p = records.data() + at + rec::batch_offset::batch_length;
        const int32_t length =
            static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                                 (uint32_t{p[2]} << 8) | uint32_t{p[3]});
        if (length < rec::min_batch_length ||
            static_cast<size_t>(length) > records.size() - at - rec::log_overhead) {
            break;
        }
        at += rec::log_overhead + static_cast<size_t>(length);
    }
    return at;
}

}  // namespace spool::broker::replication
