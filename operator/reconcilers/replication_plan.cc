#include "operator/reconcilers/replication_plan.h"

#include <algorithm>
#include <map>

namespace spool::op::reconcilers {

std::vector<partition_move> plan_replication_factor(const std::string& topic, int32_t rf,
                                                    const cluster_placement& placement) {
    std::vector<partition_move> moves;
    if (rf < 1 || static_cast<int32_t>(placement.brokers.size()) < rf) {
        return moves;
    }
    auto brokers = placement.brokers;
    std::sort(brokers.begin(), brokers.end());
    std::map<int32_t, int32_t> load;  // broker -> replicas it holds
    for (int32_t b : brokers) {
        load[b] = 0;
    }
    for (const auto& p : placement.partitions) {
        for (int32_t r : p.replicas) {
            ++load[r];
        }
    }
    std::vector<const partition_placement*> mine;
    for (const auto& p : placement.partitions) {
        if (p.topic == topic) {
            mine.push_back(&p);
        }
    }
    std::sort(mine.begin(), mine.end(),
              [](const auto* a, const auto* b) { return a->partition < b->partition; });
    for (const auto* p : mine) {
        auto replicas = p->replicas;
        if (static_cast<int32_t>(replicas.size()) == rf) {
            continue;
        }
        while (static_cast<int32_t>(replicas.size()) < rf) {
            int32_t best = -1;
            for (int32_t b : brokers) {
                bool taken = std::find(replicas.begin(), replicas.end(), b) != replicas.end();
                if (!taken && (best < 0 || load[b] < load[best])) {
                    best = b;  // brokers are visited in ascending id order: ties keep the lower
                }
            }
            replicas.push_back(best);
            ++load[best];
        }
        for (auto it = replicas.end(); static_cast<int32_t>(replicas.size()) > rf;) {
            --it;
            if (*it != p->leader) {
                --load[*it];
                it = replicas.erase(it);
            }
        }
        moves.push_back({topic, p->partition, std::move(replicas)});
    }
    return moves;
}

}  // namespace spool::op::reconcilers
