#pragma once

// The cluster's metadata tables as plain values: topics (name, Kafka topic id, partitions with
// leader/epoch/replicas/ISR, config overrides), dynamic broker configs, and the producer id
// counter. A store hands out immutable snapshots of this; handlers read them without locks.

#include "broker/config/topic_config.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace spool::broker::metadata {

struct partition_state {
    int32_t partition = 0;
    int32_t leader = -1;
    int32_t leader_epoch = 0;
    std::vector<int32_t> replicas;
    std::vector<int32_t> isr;

    bool operator==(const partition_state&) const = default;
};

struct topic_metadata {
    std::string name;
    protocol::uuid id;
    std::vector<partition_state> partitions;  // index == partition number
    config::topic_overrides configs;

    // Whether `partition` names one of this topic's partitions (negative never does).
    bool has_partition(int32_t partition) const {
        return partition >= 0 && static_cast<size_t>(partition) < partitions.size();
    }

    bool operator==(const topic_metadata&) const = default;
};

struct cluster_state {
    std::string cluster_id;
    // Bumped on every change; lets caches notice staleness cheaply.
    int64_t version = 0;
    std::map<std::string, topic_metadata, std::less<>> topics;
    std::unordered_map<protocol::uuid, std::string> topic_names;  // id -> name
    // Dynamic broker configs: "" = cluster default, "<node id>" = one broker.
    std::map<std::string, std::map<std::string, std::string>> broker_configs;
    // Next producer id to hand out.
    int64_t next_producer_id = 0;

    const topic_metadata* find(std::string_view name) const {
        auto it = topics.find(name);
        return it == topics.end() ? nullptr : &it->second;
    }
    const topic_metadata* find(const protocol::uuid& id) const {
        auto it = topic_names.find(id);
        return it == topic_names.end() ? nullptr : find(it->second);
    }
};

using cluster_snapshot = std::shared_ptr<const cluster_state>;

}  // namespace spool::broker::metadata
