#pragma once

// Small metadata files written atomically: write "<name>.tmp", fdatasync, rename over the old one,
// fsync the directory. A crash leaves either the old or the new file, never a torn one.
//
// Text formats are Kafka's (CheckpointFile): a version line "0", a count line, then one entry per
// line. Offset checkpoints (recovery-point-offset-checkpoint, log-start-offset-checkpoint) hold
// "<topic> <partition> <offset>" entries; leader-epoch-checkpoint holds "<epoch> <start offset>".
//
// Threading: free functions; callers serialise writes to one file.

#include "broker/model/ids.h"
#include "broker/storage/file_ops.h"
#include "common/result.h"

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::storage {

// durable=false skips both fsyncs: the file is still never torn under its final name while the
// system runs, but a power loss may leave the old version or an empty file (callers that can
// fall back, like producer snapshots taken at a roll, use this).
result<void> write_file_atomic(file_ops& ops, const std::filesystem::path& path,
                               std::span<const uint8_t> bytes, bool durable = true);
inline result<void> write_file_atomic(file_ops& ops, const std::filesystem::path& path,
                                      std::string_view text) {
    return write_file_atomic(ops, path,
                             {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

// Whole file; not_found error when it does not exist.
result<std::vector<uint8_t>> read_file(const std::filesystem::path& path);

// fsync of a directory, so a create/rename/unlink inside it is durable.
result<void> sync_dir(const std::filesystem::path& dir);

// Kafka's checkpoint text: "0\n<n>\n" + lines. Returns the entry lines, or invalid_argument when
// the header is malformed.
std::string format_checkpoint(const std::vector<std::string>& lines);
result<std::vector<std::string>> parse_checkpoint(std::string_view text);

using offset_checkpoint = std::map<model::topic_partition, model::offset>;
result<void> write_offset_checkpoint(file_ops& ops, const std::filesystem::path& path,
                                     const offset_checkpoint& entries);
// An absent file is an empty checkpoint.
result<offset_checkpoint> read_offset_checkpoint(const std::filesystem::path& path);

}  // namespace spool::broker::storage
