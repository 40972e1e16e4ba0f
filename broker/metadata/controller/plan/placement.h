#pragma once

// Replica placement for new partitions: which live brokers hold a partition's replicas, and which
// of them is its preferred leader (the first replica). Pure and deterministic: the same brokers
// and the same load always give the same lists, so a controller that fails over mid-way and a
// unit test both see exactly what the next pass would write.
//
// Rules (Kafka's rack-aware assignment, with the leader chosen by load instead of a random start):
// - the leader is the broker with the fewest leaders, then the fewest replicas, then the lowest
//   node id: placing topics one after another keeps leader counts within one of each other, and
//   inside one topic this is a round robin over the brokers;
// - each further replica goes to a rack the partition does not use yet while any is left (so a
//   partition spans min(RF, racks) racks), then to the broker with the fewest replicas, then the
//   lowest node id. Brokers without a rack count as one rack of their own;
// - a replication factor above the number of live brokers cannot be placed (errc::
//   invalid_replication_factor); the CreateTopics handler refuses those before they get here.
//
// Threading: none; a placement_load is a plain value owned by its caller.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct placement_broker {
    int32_t node_id = -1;
    std::optional<std::string> rack;
};

// The leaders and replicas each live broker already carries. Leaders count preferred leaders
// (replicas[0]), not current ones: placement is long-lived, leadership moves with every outage,
// and a broker that is briefly away should not attract the next topics when it returns.
class placement_load {
public:
    // The live brokers of `state` (in node id order) with the load of every placed partition.
    static placement_load of(const cluster_state& state);
    // Live brokers with no load yet.
    explicit placement_load(std::vector<placement_broker> brokers);

    // Replica lists (leader first) for `count` new partitions of replication factor `rf`, adding
    // them to the load as it goes.
    result<std::vector<std::vector<int32_t>>> place(int32_t count, int16_t rf);
    // One partition's replica list (leader first), added to the load.
    result<std::vector<int32_t>> place_one(int16_t rf);

    // The broker to take over one replica of a partition whose other replicas are `keep`
    // (decommission): not in keep, on a rack keep does not use while any is left, then the
    // fewest replicas, then the lowest node id; added to the load. nullopt: no broker is left.
    std::optional<int32_t> replacement(const std::vector<int32_t>& keep);

    // Records an existing replica list (e.g. one read back from the store).
    void add(const std::vector<int32_t>& replicas);

    size_t broker_count() const { return _brokers.size(); }
    int32_t leaders(int32_t node_id) const;
    int32_t replicas(int32_t node_id) const;

private:
    struct slot {
        placement_broker broker;
        int32_t rack_index = 0;  // dense index of the broker's rack (nullopt is one rack too)
        int32_t leaders = 0;
        int32_t replicas = 0;
    };
    slot* find(int32_t node_id);
    const slot* find(int32_t node_id) const;

    std::vector<slot> _brokers;  // sorted by node id
    int32_t _rack_count = 0;
};

}  // namespace spool::broker::metadata
