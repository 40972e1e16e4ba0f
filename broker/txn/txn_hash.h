#pragma once

// Maps a transactional id to its __transaction_state partition as Kafka's
// TransactionStateManager.partitionFor does: abs(java String.hashCode(id)) % partitions, with
// Utils.abs (Integer.MIN_VALUE -> 0). The same function as the group coordinator's.

#include "broker/coordinator/group_hash.h"

#include <cstdint>
#include <string_view>

namespace spool::broker::txn {

[[nodiscard]] inline int32_t txn_partition_for(std::string_view transactional_id,
                                               int32_t partitions) noexcept {
    return coordinator::offsets_partition_for(transactional_id, partitions);
}

}  // namespace spool::broker::txn
