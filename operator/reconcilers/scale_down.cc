#include "operator/reconcilers/scale_down.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace spool::op::reconcilers {

namespace {

constexpr size_t max_listed = 10;  // partitions named in a message; the rest are counted

std::string partition_name(const partition_placement& p) {
    return fmt::format("{}-{}", p.topic, p.partition);
}

}  // namespace

scale_down_plan plan_scale_down(int32_t current, int32_t desired,
                                const cluster_placement& placement) {
    // For each broker being removed, the partitions it leads or hosts.
    std::map<int32_t, std::vector<std::string>> in_use;
    std::map<int32_t, int> leads;
    for (const auto& p : placement.partitions) {
        for (int32_t broker = desired; broker < current; ++broker) {
            bool hosts =
                std::find(p.replicas.begin(), p.replicas.end(), broker) != p.replicas.end();
            if (p.leader == broker) {
                ++leads[broker];
            }
            if (hosts || p.leader == broker) {
                in_use[broker].push_back(partition_name(p));
            }
        }
    }
    scale_down_plan plan;
    plan.replicas = desired;
    if (in_use.empty()) {
        return plan;
    }
    auto& [broker, partitions] = *in_use.rbegin();  // the highest busy ordinal
    std::sort(partitions.begin(), partitions.end());
    plan.replicas = broker + 1;
    plan.blocked = true;
    plan.blocking_broker = broker;
    plan.blocking_partitions = partitions;
    std::string listed;
    for (size_t i = 0; i < std::min(partitions.size(), max_listed); ++i) {
        listed += (i ? ", " : "") + partitions[i];
    }
    if (partitions.size() > max_listed) {
        listed += fmt::format(" and {} more", partitions.size() - max_listed);
    }
    plan.message = fmt::format(
        "scale-down from {} to {} brokers held at {}: broker {} still hosts {} partition "
        "replicas ({} as leader): {}; move them to brokers below {} (or delete the topics), "
        "then the scale-down continues",
        current, desired, plan.replicas, broker, partitions.size(), leads[broker], listed, desired);
    return plan;
}

std::chrono::milliseconds scale_down_backoff(std::chrono::seconds blocked_for) {
    using namespace std::chrono_literals;
    return std::clamp<std::chrono::milliseconds>(blocked_for, 5s, 5min);
}

}  // namespace spool::op::reconcilers
