#include "broker/storage/time_index.h"

#include "broker/storage/be.h"

namespace spool::broker::storage {

timestamp_offset time_index::entry_at(uint32_t i) const {
    const uint8_t* p = _idx.entry(i);
    return {model::timestamp(be::load<int64_t>(p)), _base + be::load<int32_t>(p + 8)};
}

void time_index::maybe_append(model::timestamp ts, model::offset o, bool allow_full) {
    // The last slot is kept for the final entry written when the segment closes.
    if (_idx.full() || (!allow_full && _idx.entries() + 1 >= _idx.max_entries())) {
        return;
    }
    if (_idx.entries() > 0 && entry_at(_idx.entries() - 1).ts >= ts) {
        return;
    }
    uint8_t* p = _idx.append_slot();
    be::store<int64_t>(p, ts.value());
    be::store<int32_t>(p + 8, static_cast<int32_t>(o - _base));
}

std::optional<timestamp_offset> time_index::lookup(model::timestamp ts) const {
    uint32_t lo = 0;
    uint32_t hi = _idx.entries();
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (entry_at(mid).ts <= ts) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return std::nullopt;
    }
    return entry_at(lo - 1);
}

std::optional<timestamp_offset> time_index::last() const {
    if (_idx.entries() == 0) {
        return std::nullopt;
    }
    return entry_at(_idx.entries() - 1);
}

void time_index::truncate_to(model::offset o) {
    uint32_t n = _idx.entries();
    while (n > 0 && entry_at(n - 1).offset >= o) {
        --n;
    }
    _idx.truncate_entries(n);
}

bool time_index::sane() const {
    for (uint32_t i = 1; i < _idx.entries(); ++i) {
        auto a = entry_at(i - 1);
        auto b = entry_at(i);
        if (b.ts <= a.ts || b.offset < a.offset) {
            return false;
        }
    }
    return true;
}

}  // namespace spool::broker::storage
