#pragma once

// partition.metadata, Kafka's record of which topic a partition directory belongs to (KIP-516):
//
//   version: 0
//   topic_id: <the topic id as Kafka prints it>
//
// Directory names carry only the topic's name, and a name outlives its topic: a topic deleted
// while this broker was down and created again, or an etcd restored from a backup older than
// the logs, leaves a directory whose records belong to another topic. The file tells them apart;
// a directory naming another topic id is stray and is set aside under
// "<topic>-<partition>.<unique>-stray" (Kafka's name), kept for an operator to inspect or delete,
// never served.
//
// Threading: free functions doing blocking file I/O: off the shards, or before serving.

#include "broker/storage/file_ops.h"
#include "broker/storage/layout.h"
#include "common/result.h"
#include "protocol/wire/uuid.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::storage {

std::string format_partition_metadata(const protocol::uuid& topic_id);
// The topic id, or invalid_argument when the text is not version 0 with a valid id.
result<protocol::uuid> parse_partition_metadata(std::string_view text);

// The topic id dir's partition.metadata names; nullopt when the file does not exist.
result<std::optional<protocol::uuid>> read_partition_metadata(const std::filesystem::path& dir);
// Written atomically and durably (the file and its directory entry synced).
result<void> write_partition_metadata(file_ops& ops, const std::filesystem::path& dir,
                                      const protocol::uuid& topic_id);

// What claim_partition_dir found.
struct partition_dir_claim {
    // The directory held another topic's records: moved here. Empty when nothing was set aside.
    std::filesystem::path set_aside;
    // The id the set-aside directory's partition.metadata named.
    std::optional<protocol::uuid> previous_id;
    // partition.metadata could not be parsed: taken as missing (rewritten with topic_id), since
    // setting the records aside on a damaged file would hide what is most likely this topic's.
    bool unreadable = false;
    // No directory is there now: write_partition_metadata once the log has created it.
    bool record_after_open = false;
};

// Before a log opens in `dir` for topic `topic_id`: a directory whose partition.metadata names
// another id is renamed to a stray directory next to it, so the log opens empty. A directory
// without the file (made by an older version, or by a crash before the file was written) is
// taken as this topic's, and the file is written. A zero topic_id (no id known) checks and
// writes nothing.
result<partition_dir_claim> claim_partition_dir(file_ops& ops, const std::filesystem::path& dir,
                                                const protocol::uuid& topic_id);

}  // namespace spool::broker::storage
