#pragma once

// Sparse offset index of one segment (Kafka's .index). One entry per index.interval.bytes of log:
//
//   entry (8 bytes, big-endian): | relative offset int32 | position int32 |
//
// relative offset = batch base offset - segment base offset; position = byte offset of that batch
// in the .log. Entries are strictly increasing in both fields. lookup(o) returns the last entry at
// or below o, from where a short scan of batch headers finds the batch holding o.
//
// Threading: owned by one segment, single-threaded.

#include "broker/model/ids.h"
#include "broker/storage/mapped_index.h"

namespace spool::broker::storage {

struct offset_position {
    model::offset offset;
    uint32_t position = 0;
};

class offset_index {
public:
    static constexpr uint32_t entry_size = 8;

    offset_index() = default;
    offset_index(model::offset base, mapped_index idx) : _base(base), _idx(std::move(idx)) {}

    static result<offset_index> open(file_ops& ops, const std::filesystem::path& path,
                                     model::offset base, uint32_t mutable_max_bytes) {
        SPOOL_TRY(idx, mapped_index::open(ops, path, entry_size, mutable_max_bytes));
        return offset_index(base, std::move(idx));
    }
    // A closed segment's index, mapped read-only without keeping a descriptor (mapped_index).
    static result<offset_index> map_sealed(const std::filesystem::path& path, model::offset base) {
        SPOOL_TRY(idx, mapped_index::map_sealed(path, entry_size));
        return offset_index(base, std::move(idx));
    }

    // Appends (o, position); o must be above the last entry.
    void append(model::offset o, uint32_t position);
    // The last entry at or below o, or (base, 0).
    [[nodiscard]] offset_position lookup(model::offset o) const;
    [[nodiscard]] offset_position entry_at(uint32_t i) const;
    // Drops entries at or above o (log truncation).
    void truncate_to(model::offset o);
    // Entries strictly increasing and inside the segment: false means rebuild it from the log.
    [[nodiscard]] bool sane(uint64_t log_size) const;

    [[nodiscard]] bool full() const { return _idx.full(); }
    [[nodiscard]] uint32_t entries() const { return _idx.entries(); }
    [[nodiscard]] mapped_index& file() { return _idx; }
    [[nodiscard]] const mapped_index& file() const { return _idx; }

private:
    model::offset _base;
    mapped_index _idx;
};

}  // namespace spool::broker::storage
