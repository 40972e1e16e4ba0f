#pragma once

// What the share coordinator keeps for one share-partition (a share group on one partition of a
// topic), Kafka's ShareGroupOffset: the start offset, the epochs and the state batches of the
// records in flight that are not simply new (AVAILABLE after a delivery, ACKNOWLEDGED, ARCHIVED,
// with their delivery counts). Acquisitions are not kept: a record ACQUIRED when the state was
// written is AVAILABLE in it.

#include "protocol/wire/uuid.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spool::broker::share {

// Kafka's SharePartitionKey: which group, which topic (by id) and partition.
struct share_key {
    std::string group;
    protocol::uuid topic_id;
    int32_t partition = 0;

    // Kafka's coordinator key, "group:topicId:partition" (the topic id in Kafka's base64 form),
    // which picks the __share_group_state partition.
    [[nodiscard]] std::string coordinator_key() const;
    friend bool operator<(const share_key& a, const share_key& b) {
        if (a.group != b.group) {
            return a.group < b.group;
        }
        if (a.topic_id != b.topic_id) {
            return a.topic_id < b.topic_id;
        }
        return a.partition < b.partition;
    }
    friend bool operator==(const share_key&, const share_key&) = default;
};

struct state_batch {
    int64_t first_offset = 0;
    int64_t last_offset = 0;
    int8_t delivery_state = 0;  // 0 AVAILABLE, 2 ACKNOWLEDGED, 4 ARCHIVED
    int16_t delivery_count = 0;
    friend bool operator==(const state_batch&, const state_batch&) = default;
};

struct share_state {
    int32_t state_epoch = 0;
    int32_t leader_epoch = -1;
    int64_t start_offset = -1;  // -1: not initialized
    int32_t delivery_complete_count = -1;
    int32_t snapshot_epoch = 0;
    int64_t create_timestamp = 0;
    int64_t write_timestamp = 0;
    std::vector<state_batch> batches;
    friend bool operator==(const share_state&, const share_state&) = default;
};

}  // namespace spool::broker::share
