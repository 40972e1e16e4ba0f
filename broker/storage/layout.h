#pragma once

// Kafka's on-disk names. A log dir holds one directory per partition plus log-dir-wide files:
//
//   <log.dir>/
//     .spool-clean-shutdown          present only between a clean close and the next open
//     recovery-point-offset-checkpoint, log-start-offset-checkpoint   (Kafka's text format)
//     cleaner-offset-checkpoint        per compacted partition: cleaned below this offset
//     <topic>-<partition>/
//       00000000000000000000.log         record batches, base offsets assigned
//       00000000000000000000.index       sparse offset index (relative offset -> position)
//       00000000000000000000.timeindex   time index (max timestamp -> relative offset)
//       00000000000000000000.txnindex    aborted transactions whose marker is in the segment
//       00000000000000001234.snapshot    producer state as of offset 1234
//       leader-epoch-checkpoint          epoch -> start offset
//       partition.metadata               the topic id the records belong to (KIP-516)
//     <topic>-<partition>.<uuid>-delete/ a deleted partition awaiting removal
//     <topic>-<partition>.<uuid>-stray/  another topic's records under a reused name, kept aside
//                                        (partition_metadata.h)
//
// File names carry the base offset as 20 zero-padded decimal digits.

#include "broker/model/ids.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::storage::layout {

inline constexpr std::string_view log_suffix = ".log";
inline constexpr std::string_view index_suffix = ".index";
inline constexpr std::string_view time_index_suffix = ".timeindex";
inline constexpr std::string_view snapshot_suffix = ".snapshot";
// Aborted-transaction index of a segment (txn_index.h); present only once it has an entry.
inline constexpr std::string_view txn_index_suffix = ".txnindex";
inline constexpr std::string_view cleaned_suffix = ".cleaned";
inline constexpr std::string_view swap_suffix = ".swap";
inline constexpr std::string_view deleted_suffix = ".deleted";
inline constexpr std::string_view leader_epoch_checkpoint = "leader-epoch-checkpoint";
inline constexpr std::string_view clean_shutdown_marker = ".spool-clean-shutdown";
inline constexpr std::string_view recovery_point_checkpoint = "recovery-point-offset-checkpoint";
inline constexpr std::string_view log_start_checkpoint = "log-start-offset-checkpoint";
// Kafka's ReplicaManager checkpoint: per partition, the last high watermark this broker knew.
inline constexpr std::string_view high_watermark_checkpoint = "replication-offset-checkpoint";
// Kafka's LogCleaner checkpoint: per partition, the offset below which the log is compacted.
inline constexpr std::string_view cleaner_checkpoint = "cleaner-offset-checkpoint";
inline constexpr std::string_view delete_dir_suffix = "-delete";
inline constexpr std::string_view partition_metadata_file = "partition.metadata";
inline constexpr std::string_view stray_dir_suffix = "-stray";

// "00000000000000001234" for 1234.
std::string offset_name(model::offset base);

std::filesystem::path segment_path(const std::filesystem::path& dir, model::offset base,
                                   std::string_view suffix);

// Parses "<20 digits><suffix>" and returns the offset, or nullopt for any other name.
std::optional<model::offset> parse_offset_name(std::string_view filename, std::string_view suffix);

// Parses a partition directory name "<topic>-<partition>"; nullopt for anything else (including
// directories being deleted).
std::optional<model::topic_partition> parse_partition_dir(std::string_view name);

}  // namespace spool::broker::storage::layout
