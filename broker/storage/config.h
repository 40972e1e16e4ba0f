#pragma once

// Per-partition log configuration with Kafka's topic-level names and defaults. The broker's config
// module maps `segment.bytes` etc. onto these fields (broker defaults `log.segment.bytes` ... and
// topic overrides); storage only reads them. A partition keeps a copy; update_config() replaces it.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

namespace spool::broker::storage {

enum class cleanup_policy : uint8_t {
    del = 1,             // "delete"
    compact = 2,         // "compact"
    compact_delete = 3,  // "compact,delete"
};

enum class timestamp_type : uint8_t {
    create_time,      // "CreateTime": keep the producer's timestamps
    log_append_time,  // "LogAppendTime": the broker stamps max_timestamp (CRC recomputed)
};

struct log_config {
    // segment.bytes: roll when the active segment would exceed this size.
    uint32_t segment_bytes = 1024 * 1024 * 1024;
    // segment.ms: roll when the active segment's first batch is older than this.
    std::chrono::milliseconds segment_ms{std::chrono::hours(24 * 7)};
    // segment.index.bytes: size each .index is preallocated to; a full index rolls the segment.
    // The .timeindex gets the same budget (Kafka sizes both from this setting).
    uint32_t segment_index_bytes = 10 * 1024 * 1024;
    // index.interval.bytes: bytes of log between two sparse index entries.
    uint32_t index_interval_bytes = 4096;
    // The active .log grows in fallocate()d steps of this size (capped at segment.bytes; 0 = off)
    // and is trimmed to its data at roll and close. Appends then neither change the file size
    // nor allocate blocks at writeback, so a group-commit fdatasync has little metadata to
    // journal. Not a Kafka setting (Kafka's `preallocate` reserves the whole segment).
    uint32_t preallocate_bytes = 4 * 1024 * 1024;
    // retention.ms: delete segments whose newest timestamp is older; negative = unlimited.
    std::chrono::milliseconds retention_ms{std::chrono::hours(24 * 7)};
    // retention.bytes: keep the partition under this size; negative = unlimited.
    int64_t retention_bytes = -1;
    cleanup_policy cleanup = cleanup_policy::del;
    // delete.retention.ms: how long tombstones survive compaction.
    std::chrono::milliseconds delete_retention_ms{std::chrono::hours(24)};
    // min.compaction.lag.ms: records younger than this are not compacted.
    std::chrono::milliseconds min_compaction_lag_ms{0};
    // min.cleanable.dirty.ratio: compact only when at least this share of the cleanable bytes
    // was written since the last compaction (0 = every time).
    double min_cleanable_dirty_ratio = 0.5;
    // max.compaction.lag.ms: a record must be compacted within about this long of being written,
    // whatever the dirty ratio says (KIP-354). A compacted log also rolls its active segment
    // this often, so the record leaves the segment compaction never touches.
    std::chrono::milliseconds max_compaction_lag_ms{std::numeric_limits<int64_t>::max()};
    // flush.messages: fsync after this many records (Kafka's default: never, leave it to the OS).
    int64_t flush_messages = std::numeric_limits<int64_t>::max();
    // flush.ms: fsync when the oldest unflushed append is older than this.
    std::chrono::milliseconds flush_ms{std::numeric_limits<int64_t>::max()};
    // max.message.bytes: largest record batch accepted (Kafka 3.x default 1048588).
    uint32_t max_message_bytes = 1048588;
    // min.insync.replicas: not used by the log itself. The partition above it reads it, as
    // Kafka's Partition reads LogConfig.minInSyncReplicas: a leader's high watermark advances
    // only while the ISR holds at least this many members (KIP-966's strict min ISR).
    int32_t min_insync_replicas = 1;
    timestamp_type message_timestamp_type = timestamp_type::create_time;
    // producer.id.expiration.ms (a broker setting in Kafka): idempotence state of a producer
    // that has not written for this long is dropped.
    std::chrono::milliseconds producer_id_expiration_ms{std::chrono::hours(24)};

    [[nodiscard]] bool deletes() const {
        return cleanup == cleanup_policy::del || cleanup == cleanup_policy::compact_delete;
    }
    [[nodiscard]] bool compacts() const {
        return cleanup == cleanup_policy::compact || cleanup == cleanup_policy::compact_delete;
    }
    // How old the active segment's first batch may get before it rolls: segment.ms, or
    // max.compaction.lag.ms when a compacted log's lag is shorter (Kafka's LogConfig.maxSegmentMs).
    [[nodiscard]] std::chrono::milliseconds roll_ms() const {
        if (compacts() && max_compaction_lag_ms.count() > 0) {
            return std::min(segment_ms, max_compaction_lag_ms);
        }
        return segment_ms;
    }
};

}  // namespace spool::broker::storage
