#pragma once

// The metadata store interface: the single writer of cluster_state. An embedded implementation
// (one broker, a file in the data directory) and later an etcd one (a cluster) sit behind it.
// Every mutation is validated, persisted, and only then visible in snapshot(): a failed write
// changes nothing.
//
// Lifecycle: open/load, then serve; stop() is a no-op for the embedded store.
// Threading: every method is thread-safe; snapshot() is cheap (a shared_ptr copy) and the
// returned state never changes.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::metadata {

struct new_topic {
    std::string name;
    int32_t partitions = 1;
    int16_t replication_factor = 1;
    config::topic_overrides configs;
};

struct producer_id_block {
    int64_t first = 0;
    int32_t count = 0;
};

class store {
public:
    virtual ~store() = default;

    virtual cluster_snapshot snapshot() const = 0;

    // Creates a topic with a fresh random topic id; partitions led by `leader` with epoch 0.
    virtual result<topic_metadata> create_topic(const new_topic& t, int32_t leader) = 0;
    virtual result<void> delete_topic(std::string_view name) = 0;
    // Grows a topic to `total` partitions (never shrinks).
    virtual result<topic_metadata> create_partitions(std::string_view name, int32_t total,
                                                     int32_t leader) = 0;
    // Replaces a topic's overrides as a whole.
    virtual result<void> set_topic_configs(std::string_view name, config::topic_overrides c) = 0;
    // Replaces the dynamic configs of one broker entity ("" = cluster default).
    virtual result<void> set_broker_configs(std::string_view entity,
                                            std::map<std::string, std::string> c) = 0;
    // Hands out `count` producer ids that no other call (before or after a restart) gets.
    virtual result<producer_id_block> allocate_producer_ids(int32_t count) = 0;
};

// Kafka's topic name rules: 1..249 chars of [a-zA-Z0-9._-], not "." or "..".
bool valid_topic_name(std::string_view name);

}  // namespace spool::broker::metadata
