#pragma once

// Maps a share-partition to its __share_group_state partition as Kafka's
// ShareCoordinatorService.partitionFor does: abs(java String.hashCode("group:topicId:partition"))
// % partitions, with Utils.abs (Integer.MIN_VALUE -> 0).

#include "broker/coordinator/group_hash.h"
#include "broker/share/share_state.h"

#include <cstdint>

namespace spool::broker::share {

[[nodiscard]] inline int32_t share_partition_for(const share_key& key, int32_t partitions) {
    return coordinator::offsets_partition_for(key.coordinator_key(), partitions);
}

}  // namespace spool::broker::share
