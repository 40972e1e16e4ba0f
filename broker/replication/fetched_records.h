#pragma once

// The records of one partition in a Fetch response are whole batches except, possibly, the last
// one: a leader may cut the run at the partition's byte limit in the middle of a batch (Kafka's
// leader does, from a file region). A follower appends the whole ones and fetches the rest
// again from its new log end offset.
//
//   batch = base_offset int64 | batch_length int32 | batch_length bytes
//
// Pure; any thread.

#include <cstddef>
#include <cstdint>
#include <span>

namespace spool::broker::replication {

// Bytes at the front of `records` that are whole batches by their length fields. A length below
// the smallest batch header stops the walk there (the log's CRC check rejects what follows).
[[nodiscard]] size_t whole_batches_size(std::span<const uint8_t> records);

}  // namespace spool::broker::replication
