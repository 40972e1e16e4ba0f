#pragma once

// One record batch of a transactional (or idempotent) producer, stamped with the wall clock as
// markers are (a gap past segment.ms would roll the segment): what tests that play the producer
// send with a raw Produce.

#include "protocol/records/batch_builder.h"

#include <chrono>
#include <string>
#include <vector>

namespace spool::tests {

inline std::vector<uint8_t> producer_batch(int64_t pid, int16_t epoch, int32_t seq,
                                           const std::vector<std::string>& values,
                                           bool transactional = true) {
    namespace rec = protocol::records;
    rec::batch_options o;
    o.producer_id = pid;
    o.producer_epoch = epoch;
    o.base_sequence = seq;
    o.transactional = transactional;
    rec::batch_builder b(o);
    const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
    for (const auto& v : values) {
        b.add(now, rec::nullable_bytes::null(), rec::nullable_bytes::of(v));
    }
    return b.build();
}

}  // namespace spool::tests
