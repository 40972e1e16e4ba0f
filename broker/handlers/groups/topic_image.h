#pragma once

// The coordinator's view of the topics (coordinator::topic_image) built from a metadata
// snapshot, cached per shard by snapshot version: heartbeats of a stable cluster share one copy.

#include "broker/coordinator/consumer_group.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/internal_topics.h"

namespace spool::broker::handlers::groups {

inline coordinator::topic_image_ptr topic_image_of(const metadata::cluster_snapshot& snap) {
    thread_local coordinator::topic_image_ptr cached;
    if (cached && cached->version == snap->version) {
        return cached;
    }
    auto image = std::make_shared<coordinator::topic_image>();
    image->version = snap->version;
    for (const auto& [name, t] : snap->topics) {
        image->by_name[name] = {t.id, static_cast<int32_t>(t.partitions.size()),
                                metadata::is_internal_topic(name)};
        image->names[t.id] = name;
    }
    cached = image;
    return image;
}

}  // namespace spool::broker::handlers::groups
