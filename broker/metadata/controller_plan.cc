#include "broker/metadata/controller_plan.h"

#include "broker/metadata/placement.h"

#include <algorithm>
#include <optional>

namespace spool::broker::metadata {

namespace {

// The first replica (in replica order, Kafka's preference) that is in the ISR and live.
std::optional<int32_t> eligible_leader(const cluster_state& state, const partition_state& p) {
    for (int32_t r : p.replicas) {
        if (state.is_live(r) && std::find(p.isr.begin(), p.isr.end(), r) != p.isr.end()) {
            return r;
        }
    }
    return std::nullopt;
}

partition_write leadership_change(const std::string& topic, const partition_state& p,
                                  int32_t new_leader, partition_write::reason why) {
    partition_write w{topic, p, 0, why, p.leader};
    w.state.leader = new_leader;
    ++w.state.leader_epoch;
    ++w.state.partition_epoch;
    return w;
}

}  // namespace

plan_result plan(const cluster_state& state, const plan_options& options) {
    plan_result out;
    // Built lazily: a steady cluster (the common pass) has nothing to place.
    std::optional<placement_load> load;

    for (const auto& [name, topic] : state.topics) {
        bool unplaceable = false;
        for (const auto& p : topic.partitions) {
            if (!p.placed()) {
                if (unplaceable) {
                    continue;
                }
                if (!load) {
                    load.emplace(placement_load::of(state));
                }
                auto replicas = load->place_one(topic.replication_factor);
                if (!replicas) {
                    unplaceable = true;
                    out.unplaceable.push_back(name);
                    continue;
                }
                partition_write w{
                    name, {}, topic.record_revision, partition_write::reason::place, -1};
                w.state.partition = p.partition;
                w.state.replicas = std::move(replicas).value();
                w.state.isr = w.state.replicas;
                w.state.leader = w.state.replicas.front();
                w.state.record_revision = 0;
                out.writes.push_back(std::move(w));
                continue;
            }
            if (p.leader >= 0 && state.is_live(p.leader)) {
                continue;
            }
            auto next = eligible_leader(state, p);
            if (p.leader >= 0) {
                out.writes.push_back(leadership_change(name, p, next.value_or(-1),
                                                       partition_write::reason::leader_offline));
            } else if (next) {
                out.writes.push_back(
                    leadership_change(name, p, *next, partition_write::reason::leader_elected));
            }
        }
    }
    return out;
}

void apply(cluster_state& state, const std::vector<partition_write>& writes, int64_t revision) {
    for (const auto& w : writes) {
        auto it = state.topics.find(w.topic);
        if (it == state.topics.end() || !it->second.has_partition(w.state.partition)) {
            continue;
        }
        auto& p = it->second.partitions[static_cast<size_t>(w.state.partition)];
        p = w.state;
        p.record_revision = revision;
    }
    state.version = std::max(state.version, revision);
}

}  // namespace spool::broker::metadata
