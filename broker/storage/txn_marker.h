#pragma once

// A transaction marker as the log sees it: what the one record of a control batch says (Kafka's
// EndTransactionMarker: key = version int16 0 | type int16 (0 abort, 1 commit), value = version
// int16 0 | coordinator_epoch int32). The bytes are built and parsed by protocol/records.

#include <cstdint>
#include <optional>
#include <span>

namespace spool::broker::storage {

struct txn_marker {
    bool commit = false;
    int32_t coordinator_epoch = 0;
};

// The marker of one stored control batch (exactly one batch's bytes); nullopt when the batch is
// not a control batch or its record does not parse as a marker (compressed, another type).
std::optional<txn_marker> read_txn_marker(std::span<const uint8_t> batch);

}  // namespace spool::broker::storage
