#include "operator/reconcilers/topic_conflict.h"

#include <algorithm>

namespace spool::op::reconcilers {

namespace {

bool same_kafka_topic(const api::topic& a, const api::topic& b) {
    return a.meta.name != b.meta.name && a.meta.namespace_ == b.meta.namespace_ &&
           a.spec.cluster_name == b.spec.cluster_name && a.spec.topic_name == b.spec.topic_name;
}

// Older first; the name breaks ties (timestamps have one-second resolution).
bool older(const api::topic& a, const api::topic& b) {
    if (a.meta.creation_timestamp != b.meta.creation_timestamp) {
        return a.meta.creation_timestamp < b.meta.creation_timestamp;
    }
    return a.meta.name < b.meta.name;
}

}  // namespace

std::optional<std::string> conflicting_owner(const api::topic& t,
                                             const std::vector<api::topic>& all) {
    const api::topic* owner = &t;
    for (const auto& other : all) {
        // A Topic being deleted still owns the topic until it is gone: its deletion policy
        // decides, and a younger Topic takes over only afterwards.
        if (same_kafka_topic(t, other) && older(other, *owner)) {
            owner = &other;
        }
    }
    if (owner == &t) {
        return std::nullopt;
    }
    return owner->meta.name;
}

std::vector<std::string> other_claimants(const api::topic& t, const std::vector<api::topic>& all) {
    std::vector<std::string> names;
    for (const auto& other : all) {
        if (same_kafka_topic(t, other) && !other.meta.deleting) {
            names.push_back(other.meta.name);
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace spool::op::reconcilers
