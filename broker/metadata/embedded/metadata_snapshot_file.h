#pragma once

// The embedded store's snapshot (embedded_store.h): the whole persisted cluster_state as one
// YAML file, written atomically (temp file, fsync, rename, fsync of the directory), so a crash
// leaves the old or the new file, never a mix.
//
//     <data dir>/spool-metadata.yaml
//       format: 1
//       cluster_id: <22-char Kafka uuid>
//       next_producer_id: <int64>   (end of the last reserved chunk: producer_id_reserve.h)
//       journal_seq: <int64>        (the last journal record it includes; absent: 0)
//       topics:
//         - {name: t, id: <uuid>, configs: {k: v}, partitions: [{partition: 0, leader: 0,
//            leader_epoch: 0, partition_epoch: 0, replicas: [0], isr: [0]}]}
//       broker_configs: {"": {k: v}, "0": {k: v}}
//       user_scram: {"alice": {SCRAM-SHA-256: "salt=...,iterations=4096"}}
//       group_configs: {"g": {share.auto.offset.reset: "earliest"}}
//
// Plain functions; no state, no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace spool::broker::metadata {

struct metadata_snapshot {
    cluster_state state;
    int64_t journal_seq = 0;
};

// The file's text, and back (exposed for tests).
std::string serialize(const cluster_state& s, int64_t journal_seq = 0);
result<metadata_snapshot> deserialize(std::string_view yaml);

// Writes the snapshot of s, which includes the journal up to journal_seq; the bytes written, or
// persist_failed (logged).
result<uint64_t> write_snapshot(const std::filesystem::path& path, const cluster_state& s,
                                int64_t journal_seq);
// Reads it back; invalid_config (logged) for a file that cannot be read or parsed.
result<metadata_snapshot> read_snapshot(const std::filesystem::path& path);

}  // namespace spool::broker::metadata
