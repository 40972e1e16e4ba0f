#pragma once

// One log segment: <base>.log with its sparse <base>.index and <base>.timeindex, and the
// aborted-transaction index <base>.txnindex once a transaction's ABORT marker lands here
// (txn_index.h; the partition_log writes it, since its entries need the producer state).
//
//   .log:  [batch][batch]...   batches exactly as validated, base offsets assigned, back to back
//
// The .log fd is opened without O_APPEND; the segment tracks the write position itself and
// writes with pwritev through file_ops, so a failed or torn write never moves it. The active
// .log is preallocated ahead of the write position (log_config::preallocate_bytes), so its file
// size is larger than size() until roll() / close trims it; after a crash, recovery drops the
// zero-filled tail. Appends update
// the indexes after the bytes are written. Reads hand out file_slice ranges for sendfile; lookups
// go offset index -> short scan of batch headers (pread, a few KiB at a time).
//
// Descriptors: the active segment holds three (.log, .index, .timeindex); a closed one holds
// only its .log. A closed segment opened from disk maps each index on its first lookup, read-only,
// and closes the index's descriptor right after the mmap (Kafka's LazyIndex, KAFKA-7283), so a
// start opens no index of a closed segment at all; its tail state (next offset, max timestamp)
// is derived on first use too. A rolled segment keeps its index descriptors until their entries
// are on disk (flush_indexes(), or the flusher via index_sync_handles() and
// release_synced_index_files()), then only the mappings. A lazy map that fails (EMFILE, a damaged
// file) fails that lookup only, and the next one tries again.
//
// Lifecycle: create() makes the active segment (indexes preallocated); roll() turns it into a
// closed one (indexes trimmed, final time index entry written); open() reopens either kind.
// Threading: owned by one partition_log, single-threaded (the lazily filled index and tail
// state are caches behind const lookups, hence mutable, never shared). The flusher thread only
// sees the shared file handles returned by sync_handles() and index_sync_handles().

#include "broker/model/ids.h"
#include "broker/storage/batch_info.h"
#include "broker/storage/config.h"
#include "broker/storage/errc.h"
#include "broker/storage/offset_index.h"
#include "broker/storage/time_index.h"
#include "broker/storage/txn_index.h"
#include "common/file_slice.h"
#include "common/result.h"

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace spool::broker::storage {

struct batch_position {
    uint32_t position = 0;
    batch_info info;
};

struct read_extent {
    uint32_t position = 0;
    uint32_t bytes = 0;
    uint32_t batches = 0;
    // Sum of the batches' record counts (from their headers): for metrics, at no extra read.
    uint64_t records = 0;
    model::offset last_offset{-1};
    // The scan stopped before this segment's end (at upper, or for want of room): what follows
    // the returned batches is here, not in the next segment.
    bool more = false;
    // No batch here holds o or comes after it (o is in a gap at the end, e.g. left by
    // compaction): the caller goes on with the next segment.
    bool past_end = true;
};

// What recovery found in one segment.
struct segment_recovery {
    uint32_t valid_bytes = 0;
    uint64_t truncated_bytes = 0;
    // An all-zero tail after the last valid batch: preallocated space, not data (not counted in
    // truncated_bytes).
    uint64_t preallocated_bytes = 0;
    uint32_t batches = 0;
};

class segment {
public:
    ~segment();
    segment(const segment&) = delete;
    segment& operator=(const segment&) = delete;

    // A new, empty active segment. Fails with already_exists semantics if the .log is non-empty.
    static result<std::unique_ptr<segment>> create(file_ops& ops, const std::filesystem::path& dir,
                                                   model::offset base, const log_config& cfg,
                                                   model::timestamp now);
    // Existing files. active: opens and preallocates the indexes for appends and reads the tail
    // state (load_tail = false leaves that to recover()); a closed segment opens only its .log:
    // indexes are trusted as found, and mapped on first use. rebuild_indexes()/recover() fix them
    // when they cannot be trusted.
    static result<std::unique_ptr<segment>> open(file_ops& ops, const std::filesystem::path& dir,
                                                 model::offset base, const log_config& cfg,
                                                 bool active, model::timestamp now,
                                                 bool load_tail = true);

    [[nodiscard]] model::offset base_offset() const { return _base; }
    // One past the last offset stored here (base offset when empty). Like the max timestamp, a
    // closed segment opened from disk derives it on first use (its indexes mapped, the batches
    // after the last index entry scanned), which can fail: too_many_open_files, corrupt_batch.
    result<model::offset> next_offset() const;
    [[nodiscard]] uint32_t size() const { return _size; }
    [[nodiscard]] bool empty() const { return _size == 0; }
    result<model::timestamp> max_timestamp() const;
    result<model::offset> offset_of_max_timestamp() const;
    // Derives the tail state now if it is not known yet (what the three above do on first use).
    result<void> load_tail() const;
    // Timestamp of the first batch (Kafka's rollingBasedTimestamp), or nullopt when empty. Known
    // for the active segment (the only one that rolls).
    [[nodiscard]] std::optional<model::timestamp> first_timestamp() const { return _first_ts; }
    [[nodiscard]] const std::filesystem::path& dir() const { return _dir; }

    // True when bytes more would overflow segment.bytes, the indexes, or 32-bit relative offsets,
    // or segment.ms has passed (log_config::roll_ms(): max.compaction.lag.ms when shorter). Like Kafka, time is measured between the first batch's timestamp
    // and the incoming batches' max timestamp (wall clock since creation when there is none).
    [[nodiscard]] bool needs_roll(const log_config& cfg, uint32_t incoming_bytes,
                                  model::offset incoming_last, model::timestamp incoming_max_ts,
                                  model::timestamp now) const;

    // Writes whole batches (offsets already assigned) at the end; then indexes them.
    result<void> append(std::span<const uint8_t> bytes);

    // The batch holding o, or the first batch after it; nullopt if o is past the end.
    result<std::optional<batch_position>> find(model::offset o) const;
    // The batch holding o, then whole batches after it: at most max_bytes (but the first batch
    // always when min_one), only batches whose last offset is below upper. The Fetch path, one
    // header scan. batches == 0 when o is past the end or nothing below upper fits.
    result<read_extent> read(model::offset o, uint32_t max_bytes, model::offset upper,
                             bool min_one) const;
    [[nodiscard]] file_slice slice(uint32_t position, uint32_t bytes) const {
        return {_log, position, bytes};
    }
    // The first batch with max timestamp >= ts and last offset >= from.
    result<std::optional<batch_position>> find_timestamp(model::timestamp ts,
                                                         model::offset from) const;
    // Calls f(position, info) for each batch from position on, until f returns false.
    template <class F>
    result<void> for_each_batch(uint32_t position, F&& f) const;

    // Drops every batch at or above o (its whole batch when o is inside one).
    result<void> truncate_to(model::offset o);
    // Validates every batch (length, magic, CRC), rebuilds both indexes and truncates the file at
    // the first invalid byte. Used after an unclean shutdown.
    result<segment_recovery> recover();
    // Rebuilds both indexes from batch headers (no CRC): an index failed its sanity check.
    result<void> rebuild_indexes();
    // Index entries strictly increasing and inside the file (maps the indexes).
    result<bool> indexes_sane() const;
    // Closes the segment for appends: final time index entry, indexes and .log trimmed to size.
    // The index descriptors stay until the entries are on disk (see flush_indexes()).
    result<void> roll();
    // Synchronous fdatasync of .log and of the indexes while they hold descriptors.
    result<void> flush();
    // fdatasync of the indexes' descriptors; a closed segment then lets go of them.
    result<void> flush_indexes();
    // Handles for the flusher thread: .log, .index, .timeindex (null: no descriptor held).
    [[nodiscard]] std::array<std::shared_ptr<file_handle>, 3> sync_handles() const;
    // A closed segment's index descriptors, held until their entries are on disk (empty when
    // none are held). After an fdatasync of exactly these, release_synced_index_files(them)
    // closes them; a segment holding other ones (rebuilt meanwhile) keeps its own.
    [[nodiscard]] std::vector<std::shared_ptr<file_handle>> index_sync_handles() const;
    [[nodiscard]] bool holds_index_files() const {
        return _index.file().handle() || _time_index.file().handle();
    }
    void release_synced_index_files(const std::vector<std::shared_ptr<file_handle>>& synced);
    // The aborted-transaction index (kept in step by truncate_to, rename_files, remove_files and
    // flush; rebuilt by the partition_log's recovery).
    [[nodiscard]] txn_index& txns() { return _txns; }
    [[nodiscard]] const txn_index& txns() const { return _txns; }
    // Renames all four files by appending suffix (e.g. ".deleted") / removes them.
    result<void> rename_files(std::string_view suffix);
    void remove_files(std::string_view suffix = {});
    [[nodiscard]] bool active() const { return _active; }
    void set_index_interval(uint32_t bytes) { _index_interval = bytes; }
    // Entries in the offset index (maps it).
    result<uint32_t> index_entries() const;

private:
    segment(file_ops& ops, std::filesystem::path dir, model::offset base, const log_config& cfg,
            bool active, model::timestamp created);
    // The indexes for lookups: a closed segment's are mapped read-only on first use.
    result<const offset_index*> offsets() const;
    result<const time_index*> times() const;
    result<void> load_tail_state() const;
    void index_batch(const batch_info& b, uint32_t position);
    void reset_indexes();
    // Both indexes writable with room for a whole segment's entries (rebuild, recovery).
    result<void> ensure_index_capacity();
    result<void> close_indexes();
    // Preallocates the .log so that bytes more fit; trim_log() gives back what was not used.
    result<void> reserve_log(uint32_t bytes);
    result<void> trim_log();

    file_ops& _ops;
    std::filesystem::path _dir;
    model::offset _base;
    std::shared_ptr<file_handle> _log;
    // Lookups are const; a closed segment opened from disk fills these on first use (mapping an
    // index, deriving the tail state), so they are mutable caches.
    mutable offset_index _index;
    mutable time_index _time_index;
    txn_index _txns;
    mutable bool _index_mapped = false;
    mutable bool _time_index_mapped = false;
    mutable bool _tail_loaded = false;
    uint32_t _size = 0;
    mutable model::offset _next_offset;
    mutable model::timestamp _max_ts = model::no_timestamp;
    mutable model::offset _offset_of_max_ts;
    mutable std::optional<model::timestamp> _first_ts;
    model::timestamp _created;  // wall clock when this object was made
    mutable uint32_t _bytes_since_index = 0;
    uint32_t _index_interval;
    uint32_t _index_capacity;  // offset index entries when preallocated
    uint32_t _allocated = 0;   // .log file size (>= _size while preallocated)
    uint32_t _preallocate;     // preallocation step, 0 = off
    uint32_t _segment_bytes;
    bool _active;
};

// A cursor over batch headers that reads a few KiB at a time, so a short scan costs one pread.
class header_scanner {
public:
    header_scanner(file_ops& ops, int fd, uint32_t file_size)
        : _ops(ops), _fd(fd), _file_size(file_size) {}
    // The header at position; nullopt at end of file (or a torn header); error on I/O failure.
    result<std::optional<batch_info>> at(uint32_t position);

private:
    static constexpr uint32_t window = 8192;
    file_ops& _ops;
    int _fd;
    uint32_t _file_size;
    uint32_t _win_start = 0;
    uint32_t _win_len = 0;
    std::array<uint8_t, window> _buf;
};

// Calls f(position, info) for each batch header of the first `size` bytes of fd from position
// on, until f returns false. Reads only immutable bytes, so a cleaner thread may scan a closed
// segment's file with it.
template <class F>
result<void> scan_batches(file_ops& ops, int fd, uint32_t size, uint32_t position, F&& f) {
    header_scanner scan(ops, fd, size);
    while (position < size) {
        SPOOL_TRY(h, scan.at(position));
        if (!h || !h->plausible()) {
            return make_error_code(errc::corrupt_batch);
        }
        if (!f(position, *h)) {
            break;
        }
        position += h->size();
    }
    return success();
}

template <class F>
result<void> segment::for_each_batch(uint32_t position, F&& f) const {
    return scan_batches(_ops, _log->fd(), _size, position, std::forward<F>(f));
}

}  // namespace spool::broker::storage
