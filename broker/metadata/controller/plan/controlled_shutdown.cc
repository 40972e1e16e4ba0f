#include "broker/metadata/controller/plan/controlled_shutdown.h"

#include <algorithm>

namespace spool::broker::metadata {

size_t partitions_to_hand_over(const cluster_state& state, int32_t node) {
    size_t out = 0;
    for (const auto& [name, topic] : state.topics) {
        for (const auto& p : topic.partitions) {
            const bool in_isr = std::find(p.isr.begin(), p.isr.end(), node) != p.isr.end();
            if (p.leader != node && !in_isr) {
                continue;
            }
            if (std::any_of(p.isr.begin(), p.isr.end(),
                            [&](int32_t r) { return r != node && state.eligible(r); })) {
                ++out;
            }
        }
    }
    return out;
}

}  // namespace spool::broker::metadata
