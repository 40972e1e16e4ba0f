#pragma once

// Cluster states for the reassignment and decommission unit tests.

#include "broker/metadata/cluster_state.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::broker::metadata::testing {

inline void add_broker(cluster_state& s, int32_t id,
                       std::optional<std::string> rack = std::nullopt) {
    s.brokers[id] = broker_registration{id,
                                        "inc-" + std::to_string(id),
                                        "dir",
                                        std::move(rack),
                                        {{"PLAINTEXT", "127.0.0.1", 9092 + id, "PLAINTEXT"}}};
}

// A topic whose partitions are placed as given, leader = first replica, ISR = replicas.
inline topic_metadata& add_placed_topic(cluster_state& s, const std::string& name,
                                        const std::vector<std::vector<int32_t>>& replicas) {
    auto& t = s.topics[name];
    t.name = name;
    t.record_revision = 5;
    t.replication_factor = static_cast<int16_t>(replicas.front().size());
    for (size_t p = 0; p < replicas.size(); ++p) {
        partition_state ps;
        ps.partition = static_cast<int32_t>(p);
        ps.leader = replicas[p].front();
        ps.leader_epoch = 3;
        ps.partition_epoch = 7;
        ps.replicas = replicas[p];
        ps.isr = replicas[p];
        ps.record_revision = 11;
        t.partitions.push_back(std::move(ps));
    }
    return t;
}

}  // namespace spool::broker::metadata::testing
