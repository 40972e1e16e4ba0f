#pragma once

// Time index of one segment (Kafka's .timeindex):
//
//   entry (12 bytes, big-endian): | max timestamp so far int64 | relative offset int32 |
//
// An entry is added next to each offset index entry when the segment's max timestamp grew since
// the last entry; the offset is that of the batch that raised it. Timestamps are therefore strictly
// increasing. lookup(t) returns the last entry with timestamp <= t (or none), the place to start
// scanning for the first batch with max timestamp >= t.
//
// Threading: owned by one segment, single-threaded.

#include "broker/model/ids.h"
#include "broker/storage/mapped_index.h"

#include <optional>

namespace spool::broker::storage {

struct timestamp_offset {
    model::timestamp ts;
    model::offset offset;
};

class time_index {
public:
    static constexpr uint32_t entry_size = 12;

    time_index() = default;
    time_index(model::offset base, mapped_index idx) : _base(base), _idx(std::move(idx)) {}

    static result<time_index> open(file_ops& ops, const std::filesystem::path& path,
                                   model::offset base, uint32_t mutable_max_bytes) {
        SPOOL_TRY(idx, mapped_index::open(ops, path, entry_size, mutable_max_bytes));
        return time_index(base, std::move(idx));
    }
    // A closed segment's index, mapped read-only without keeping a descriptor (mapped_index).
    static result<time_index> map_sealed(const std::filesystem::path& path, model::offset base) {
        SPOOL_TRY(idx, mapped_index::map_sealed(path, entry_size));
        return time_index(base, std::move(idx));
    }

    // Appends (ts, o) if ts is above the last entry's timestamp.
    // allow_full: the final entry written when a segment closes uses the slot reserved for it.
    void maybe_append(model::timestamp ts, model::offset o, bool allow_full = false);
    [[nodiscard]] std::optional<timestamp_offset> lookup(model::timestamp ts) const;
    [[nodiscard]] std::optional<timestamp_offset> last() const;
    void truncate_to(model::offset o);
    [[nodiscard]] bool sane() const;

    [[nodiscard]] bool full() const { return _idx.full(); }
    [[nodiscard]] uint32_t entries() const { return _idx.entries(); }
    [[nodiscard]] mapped_index& file() { return _idx; }
    [[nodiscard]] const mapped_index& file() const { return _idx; }

private:
    [[nodiscard]] timestamp_offset entry_at(uint32_t i) const;

    model::offset _base;
    mapped_index _idx;
};

}  // namespace spool::broker::storage
