#include "broker/metadata/controller/plan/decommission.h"

#include "broker/metadata/controller/plan/placement.h"

#include <algorithm>
#include <set>

namespace spool::broker::metadata {

namespace {

constexpr size_t max_stuck_listed = 10;

bool contains(const std::vector<int32_t>& v, int32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

}  // namespace

decommission_plan plan_decommission(const cluster_state& state, int32_t broker) {
    decommission_plan out;
    // Placement never picks a decommissioning broker: count this one as one already.
    std::optional<placement_load> load;
    for (const auto& [name, topic] : state.topics) {
        for (const auto& p : topic.partitions) {
            const auto& base = p.target_replicas.empty() ? p.replicas : p.target_replicas;
            if (!p.placed() || !contains(base, broker)) {
                continue;  // not on it, or already moving off it
            }
            if (!load) {
                cluster_state marked = state;
                marked.decommissioning[broker];
                load.emplace(placement_load::of(marked));
            }
            std::vector<int32_t> keep;
            std::copy_if(base.begin(), base.end(), std::back_inserter(keep),
                         [broker](int32_t r) { return r != broker; });
            // Current replicas (a move under way's) are no candidates either.
            std::vector<int32_t> exclude = keep;
            for (int32_t r : p.replicas) {
                if (!contains(exclude, r)) {
                    exclude.push_back(r);
                }
            }
            auto replacement = load->replacement(exclude);
            if (!replacement) {
                if (out.stuck.size() < max_stuck_listed) {
                    out.stuck.emplace_back(name, p.partition);
                } else {
                    out.stuck.emplace_back();  // counted, not named
                }
                continue;
            }
            decommission_move m{name, p.partition, base};
            std::replace(m.target.begin(), m.target.end(), broker, *replacement);
            out.moves.push_back(std::move(m));
        }
    }
    return out;
}

decommission_progress progress_of(const cluster_state& state, int32_t broker) {
    decommission_progress out;
    auto mark = state.decommissioning.find(broker);
    out.marked = mark != state.decommissioning.end();
    std::set<std::pair<std::string, int32_t>> counted;
    auto count = [&](const std::string& topic, const partition_state& p) {
        if (!counted.emplace(topic, p.partition).second) {
            return;
        }
        if (!p.adding_replicas.empty() || !p.removing_replicas.empty() ||
            !p.target_replicas.empty()) {
            ++out.moving;
        } else if (contains(p.replicas, broker)) {
            ++out.remaining;
        } else {
            ++out.done;
        }
    };
    if (out.marked) {
        for (const auto& [topic, partition] : mark->second) {
            const auto* t = state.find(topic);
            if (t == nullptr || !t->has_partition(partition)) {
                counted.emplace(topic, partition);
                ++out.done;  // deleted meanwhile: nothing left on the broker
                continue;
            }
            count(topic, t->partitions[static_cast<size_t>(partition)]);
        }
    }
    for (const auto& [name, topic] : state.topics) {
        for (const auto& p : topic.partitions) {
            if (contains(p.replicas, broker)) {
                count(name, p);
            }
        }
    }
    return out;
}

}  // namespace spool::broker::metadata
