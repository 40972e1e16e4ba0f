#pragma once

// The metadata store of a single broker: cluster_state kept in memory and persisted as one
// YAML file in the data directory, rewritten whole on every change (write temp file, fsync,
// rename over the old one, fsync the directory), so a crash leaves either the old or the new
// state, never a mix. Changes are rare (admin operations, producer id blocks), so rewriting the
// whole file is cheap next to the simplicity of having no journal to replay.
//
//     <data dir>/spool-metadata.yaml
//       format: 1
//       cluster_id: <22-char Kafka uuid>
//       next_producer_id: <int64>
//       topics:
//         - {name: t, id: <uuid>, configs: {k: v}, partitions: [{partition: 0, leader: 0,
//            leader_epoch: 0, replicas: [0], isr: [0]}]}
//       broker_configs: {"": {k: v}, "0": {k: v}}
//
// Lifecycle: open() loads or creates the file; the object then serves until destroyed.
// Threading: a mutex serialises writers; snapshot() takes it only to copy a shared_ptr.

#include "broker/metadata/store.h"

#include <filesystem>
#include <memory>
#include <mutex>

namespace spool::broker::metadata {

class embedded_store final : public store {
public:
    static result<std::unique_ptr<embedded_store>> open(const std::filesystem::path& data_dir);

    cluster_snapshot snapshot() const override;
    result<topic_metadata> create_topic(const new_topic& t, int32_t leader) override;
    result<void> delete_topic(std::string_view name) override;
    result<topic_metadata> create_partitions(std::string_view name, int32_t total,
                                             int32_t leader) override;
    result<void> set_topic_configs(std::string_view name, config::topic_overrides c) override;
    result<void> set_broker_configs(std::string_view entity,
                                    std::map<std::string, std::string> c) override;
    result<producer_id_block> allocate_producer_ids(int32_t count) override;

    const std::filesystem::path& file() const { return _file; }

private:
    explicit embedded_store(std::filesystem::path file) : _file(std::move(file)) {}

    // Persists `next` and publishes it; caller holds _mutex.
    result<void> commit(std::shared_ptr<cluster_state> next);

    std::filesystem::path _file;
    mutable std::mutex _mutex;
    std::shared_ptr<const cluster_state> _state;
};

// (De)serialisation, exposed for tests.
std::string serialize(const cluster_state& s);
result<cluster_state> deserialize(std::string_view yaml);

}  // namespace spool::broker::metadata
