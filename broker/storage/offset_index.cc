#include "broker/storage/offset_index.h"

#include "broker/storage/be.h"

namespace spool::broker::storage {

void offset_index::append(model::offset o, uint32_t position) {
    uint8_t* p = _idx.append_slot();
    be::store<int32_t>(p, static_cast<int32_t>(o - _base));
    be::store<uint32_t>(p + 4, position);
}

offset_position offset_index::entry_at(uint32_t i) const {
    const uint8_t* p = _idx.entry(i);
    return {_base + be::load<int32_t>(p), be::load<uint32_t>(p + 4)};
}

offset_position offset_index::lookup(model::offset o) const {
    // Binary search for the last entry with relative offset <= target.
    int64_t rel = o - _base;
    uint32_t lo = 0;
    uint32_t hi = _idx.entries();
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (be::load<int32_t>(_idx.entry(mid)) <= rel) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == 0) {
        return {_base, 0};
    }
    return entry_at(lo - 1);
}

void offset_index::truncate_to(model::offset o) {
    int64_t rel = o - _base;
    uint32_t n = _idx.entries();
    while (n > 0 && be::load<int32_t>(_idx.entry(n - 1)) >= rel) {
        --n;
    }
    _idx.truncate_entries(n);
}

bool offset_index::sane(uint64_t log_size) const {
    int64_t prev_rel = -1;
    int64_t prev_pos = -1;
    for (uint32_t i = 0; i < _idx.entries(); ++i) {
        int32_t rel = be::load<int32_t>(_idx.entry(i));
        uint32_t pos = be::load<uint32_t>(_idx.entry(i) + 4);
        if (rel <= prev_rel || int64_t(pos) <= prev_pos || pos >= log_size) {
            return false;
        }
        prev_rel = rel;
        prev_pos = pos;
    }
    return true;
}

}  // namespace spool::broker::storage
