#include "broker/storage/segment.h"

#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "protocol/records/batch_parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace spool::broker::storage {

namespace fs = std::filesystem;

bool check_batch(std::span<const uint8_t> bytes) {
    // Kafka's recovery check (DefaultRecordBatch.ensureValid): sizes, magic and CRC. Records are
    // not walked: they were validated on the way in and the CRC proves they did not change.
    rf::validate_options opts;
    opts.origin = rf::batch_origin::log;
    opts.verify_crc = true;
    opts.check_records = false;
    auto r = rf::validate_batch(bytes, opts);
    return r && r.value().size == bytes.size();
}

result<std::optional<batch_info>> header_scanner::at(uint32_t position) {
    constexpr uint32_t hs = rf::batch_header_size;
    if (uint64_t(position) + hs > _file_size) {
        return std::optional<batch_info>{};
    }
    if (position < _win_start || position + hs > _win_start + _win_len) {
        uint32_t want = std::min<uint32_t>(window, _file_size - position);
        ssize_t n = _ops.pread_full(_fd, _buf.data(), want, position);
        if (n < 0) {
            return make_error_code(errc::io_error);
        }
        _win_start = position;
        _win_len = static_cast<uint32_t>(n);
        if (_win_len < hs) {
            return std::optional<batch_info>{};
        }
    }
    return std::optional<batch_info>(batch_info::decode(_buf.data() + (position - _win_start)));
}

segment::segment(file_ops& ops, fs::path dir, model::offset base, const log_config& cfg,
                 bool active, model::timestamp created)
    : _ops(ops),
      _dir(std::move(dir)),
      _base(base),
      _txns(ops, layout::segment_path(_dir, base, layout::txn_index_suffix)),
      _next_offset(base),
      _offset_of_max_ts(base),
      _index_interval(cfg.index_interval_bytes),
      _index_capacity(std::max<uint32_t>(1, cfg.segment_index_bytes / offset_index::entry_size)),
      _preallocate(std::min(cfg.preallocate_bytes, cfg.segment_bytes)),
      _segment_bytes(cfg.segment_bytes),
      _active(active) {
    _created = created;
}

segment::~segment() = default;

static result<std::shared_ptr<file_handle>> open_log(file_ops& ops, const fs::path& path) {
    int fd = ops.open_or_create(path.c_str());
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    return std::make_shared<file_handle>(fd);
}

result<std::unique_ptr<segment>> segment::create(file_ops& ops, const fs::path& dir,
                                                 model::offset base, const log_config& cfg,
                                                 model::timestamp now) {
    std::unique_ptr<segment> s(new segment(ops, dir, base, cfg, true, now));
    SPOOL_STORAGE_ASSIGN(s->_log,
                         open_log(ops, layout::segment_path(dir, base, layout::log_suffix)));
    // A leftover file of the same name (a crash between create and the first append) is empty or
    // garbage from an earlier life of this offset: start clean.
    if (ops.ftruncate(s->_log->fd(), 0) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    SPOOL_STORAGE_ASSIGN(
        s->_index, offset_index::open(ops, layout::segment_path(dir, base, layout::index_suffix),
                                      base, cfg.segment_index_bytes));
    SPOOL_STORAGE_ASSIGN(
        s->_time_index,
        time_index::open(ops, layout::segment_path(dir, base, layout::time_index_suffix), base,
                         s->_index_capacity * time_index::entry_size));
    s->_index.file().truncate_entries(0);
    s->_time_index.file().truncate_entries(0);
    s->_index_mapped = s->_time_index_mapped = s->_tail_loaded = true;
    return s;
}

result<std::unique_ptr<segment>> segment::open(file_ops& ops, const fs::path& dir,
                                               model::offset base, const log_config& cfg,
                                               bool active, model::timestamp now, bool load_tail) {
    std::unique_ptr<segment> s(new segment(ops, dir, base, cfg, active, now));
    SPOOL_STORAGE_ASSIGN(s->_log,
                         open_log(ops, layout::segment_path(dir, base, layout::log_suffix)));
    struct stat st {};
    if (::fstat(s->_log->fd(), &st) != 0) {
        return make_error_code(errc::io_error);
    }
    if (uint64_t(st.st_size) > UINT32_MAX) {
        return make_error_code(errc::corrupt_batch);
    }
    s->_size = static_cast<uint32_t>(st.st_size);
    s->_allocated = s->_size;
    if (!active) {
        return s;  // indexes and tail state on first use
    }
    SPOOL_STORAGE_ASSIGN(
        s->_index, offset_index::open(ops, layout::segment_path(dir, base, layout::index_suffix),
                                      base, s->_index_capacity * offset_index::entry_size));
    SPOOL_STORAGE_ASSIGN(
        s->_time_index,
        time_index::open(ops, layout::segment_path(dir, base, layout::time_index_suffix), base,
                         s->_index_capacity * time_index::entry_size));
    s->_index_mapped = s->_time_index_mapped = true;
    if (load_tail) {
        SPOOL_TRY(s->load_tail_state());
    }
    return s;
}

// Kafka's cheap index checks at load (OffsetIndex/TimeIndex.sanityCheck): the last entry lies
// inside the segment. A file cut or overwritten by something else fails them; a full check of
// every entry is recovery's job (indexes_sane()).
result<const offset_index*> segment::offsets() const {
    if (!_index_mapped) {
        auto path = layout::segment_path(_dir, _base, layout::index_suffix);
        SPOOL_TRY(idx, offset_index::map_sealed(path, _base));
        if (idx.entries() > 0) {
            auto last = idx.entry_at(idx.entries() - 1);
            if (last.offset < _base || last.position >= _size) {
                return make_error_code(errc::io_error);
            }
        }
        _index = std::move(idx);
        _index_mapped = true;
    }
    return &_index;
}

result<const time_index*> segment::times() const {
    if (!_time_index_mapped) {
        auto path = layout::segment_path(_dir, _base, layout::time_index_suffix);
        SPOOL_TRY(idx, time_index::map_sealed(path, _base));
        if (auto last = idx.last(); last && last->offset < _base) {
            return make_error_code(errc::io_error);
        }
        _time_index = std::move(idx);
        _time_index_mapped = true;
    }
    return &_time_index;
}

result<void> segment::load_tail() const {
    if (_tail_loaded) {
        return success();
    }
    return load_tail_state();
}

result<model::offset> segment::next_offset() const {
    SPOOL_TRY(load_tail());
    return _next_offset;
}

result<model::timestamp> segment::max_timestamp() const {
    SPOOL_TRY(load_tail());
    return _max_ts;
}

result<model::offset> segment::offset_of_max_timestamp() const {
    SPOOL_TRY(load_tail());
    return _offset_of_max_ts;
}

result<uint32_t> segment::index_entries() const {
    SPOOL_TRY(index, offsets());
    return index->entries();
}

result<bool> segment::indexes_sane() const {
    SPOOL_TRY(index, offsets());
    SPOOL_TRY(times_index, times());
    return index->sane(_size) && times_index->sane();
}

// Derives next offset, max timestamp and the bytes since the last index entry from the indexes
// plus a scan of the batches after the last index entry (a few KiB).
result<void> segment::load_tail_state() const {
    SPOOL_TRY(index, offsets());
    SPOOL_TRY(times_index, times());
    _next_offset = _base;
    _max_ts = model::no_timestamp;
    _offset_of_max_ts = _base;
    _first_ts.reset();
    if (_size == 0) {
        _tail_loaded = true;
        return success();
    }
    if (auto last = times_index->last()) {
        _max_ts = last->ts;
        _offset_of_max_ts = last->offset;
    }
    uint32_t from = 0;
    if (index->entries() > 0) {
        from = index->entry_at(index->entries() - 1).position;
    }
    header_scanner scan(_ops, _log->fd(), _size);
    SPOOL_TRY(first, scan.at(0));
    if (first) {
        _first_ts = first->max_timestamp;
    }
    uint32_t pos = from;
    while (pos < _size) {
        SPOOL_TRY(h, scan.at(pos));
        if (!h || !h->plausible() || uint64_t(pos) + h->size() > _size) {
            return make_error_code(errc::corrupt_batch);
        }
        _next_offset = h->last_offset() + 1;
        if (h->max_timestamp > _max_ts) {
            _max_ts = h->max_timestamp;
            _offset_of_max_ts = h->last_offset();
        }
        pos += h->size();
    }
    _bytes_since_index = _size - from;
    _tail_loaded = true;
    return success();
}

bool segment::needs_roll(const log_config& cfg, uint32_t incoming_bytes,
                         model::offset incoming_last, model::timestamp incoming_max_ts,
                         model::timestamp now) const {
    if (_size == 0) {
        return false;
    }
    if (uint64_t(_size) + incoming_bytes > cfg.segment_bytes) {
        return true;
    }
    if (_index.full() || _time_index.entries() + 1 >= _time_index.file().max_entries()) {
        return true;
    }
    if (incoming_last - _base > INT32_MAX) {
        return true;
    }
    int64_t waited = (_first_ts && _first_ts->value() >= 0)
                         ? incoming_max_ts.value() - _first_ts->value()
                         : now.value() - _created.value();
    return waited > cfg.roll_ms().count();
}

void segment::index_batch(const batch_info& b, uint32_t position) {
    if (b.max_timestamp > _max_ts) {
        _max_ts = b.max_timestamp;
        _offset_of_max_ts = b.last_offset();
    }
    if (_bytes_since_index > _index_interval && !_index.full()) {
        _index.append(b.base_offset, position);
        _time_index.maybe_append(_max_ts, _offset_of_max_ts);
        _bytes_since_index = 0;
    }
    _bytes_since_index += b.size();
    _next_offset = b.last_offset() + 1;
}

result<void> segment::append(std::span<const uint8_t> bytes) {
    // At most one index entry per batch: reserve index blocks for the worst case first.
    uint64_t most = _index.entries() + bytes.size() / rf::batch_header_size + 2;
    SPOOL_TRY(_index.file().reserve(_ops, most));
    SPOOL_TRY(_time_index.file().reserve(_ops, most));
    SPOOL_TRY(reserve_log(static_cast<uint32_t>(bytes.size())));
    iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    if (int e = _ops.pwritev_all(_log->fd(), &v, 1, _size); e != 0) {
        return make_error_code(errc_from_errno(e));
    }
    uint32_t pos = 0;
    while (pos < bytes.size()) {
        auto b = batch_info::decode(bytes.data() + pos);
        if (!_first_ts) {
            _first_ts = b.max_timestamp;
        }
        index_batch(b, _size + pos);
        pos += b.size();
    }
    _size += static_cast<uint32_t>(bytes.size());
    return success();
}

result<std::optional<batch_position>> segment::find(model::offset o) const {
    SPOOL_TRY(index, offsets());
    auto start = index->lookup(o);
    std::optional<batch_position> found;
    SPOOL_TRY(for_each_batch(start.position, [&](uint32_t pos, const batch_info& b) {
        if (b.last_offset() >= o) {
            found = batch_position{pos, b};
            return false;
        }
        return true;
    }));
    return found;
}

result<read_extent> segment::read(model::offset o, uint32_t max_bytes, model::offset upper,
                                  bool min_one) const {
    // One scan: index entry -> the batch holding o -> whole batches while they fit.
    SPOOL_TRY(index, offsets());
    read_extent ext;
    bool found = false;
    SPOOL_TRY(for_each_batch(index->lookup(o).position, [&](uint32_t pos, const batch_info& b) {
        if (!found) {
            if (b.last_offset() < o) {
                return true;
            }
            found = true;
            ext.past_end = false;
            ext.position = pos;
        }
        if (b.last_offset() >= upper ||
            (uint64_t(ext.bytes) + b.size() > max_bytes && !(min_one && ext.batches == 0))) {
            ext.more = true;
            return false;
        }
        ext.bytes += b.size();
        ext.batches++;
        ext.records += uint64_t(std::max(b.record_count, 0));
        ext.last_offset = b.last_offset();
        return true;
    }));
    return ext;
}

result<std::optional<batch_position>> segment::find_timestamp(model::timestamp ts,
                                                              model::offset from) const {
    SPOOL_TRY(index, offsets());
    SPOOL_TRY(times_index, times());
    uint32_t position = 0;
    if (auto hint = times_index->lookup(ts)) {
        position = index->lookup(std::max(hint->offset, from)).position;
    } else {
        position = index->lookup(from).position;
    }
    std::optional<batch_position> found;
    SPOOL_TRY(for_each_batch(position, [&](uint32_t pos, const batch_info& b) {
        if (b.max_timestamp >= ts && b.last_offset() >= from) {
            found = batch_position{pos, b};
            return false;
        }
        return true;
    }));
    return found;
}

result<void> segment::truncate_to(model::offset o) {
    if (o >= _next_offset) {
        return success();
    }
    uint32_t cut = 0;
    if (o > _base) {
        SPOOL_TRY(at, find(o));
        cut = at ? at->position : _size;
    }
    if (_ops.ftruncate(_log->fd(), cut) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _size = cut;
    _allocated = cut;
    SPOOL_TRY(_txns.truncate_to(o));
    // Truncation is rare (recovery, replication divergence): rebuild the indexes and the tail
    // state from what is left instead of patching them.
    return rebuild_indexes();
}

void segment::reset_indexes() {
    _index.file().truncate_entries(0);
    _time_index.file().truncate_entries(0);
    _next_offset = _base;
    _max_ts = model::no_timestamp;
    _offset_of_max_ts = _base;
    _first_ts.reset();
    _bytes_since_index = 0;
    _tail_loaded = true;  // rebuilt from here on with the entries
}

result<void> segment::ensure_index_capacity() {
    // A closed segment's indexes are trimmed to their entries, and mapped read-only or not at
    // all: rebuilding needs them writable with room for a whole segment's entries.
    const uint32_t index_bytes = _index_capacity * offset_index::entry_size;
    const uint32_t time_bytes = _index_capacity * time_index::entry_size;
    if (!_index_mapped) {
        SPOOL_STORAGE_ASSIGN(
            _index,
            offset_index::open(_ops, layout::segment_path(_dir, _base, layout::index_suffix), _base,
                               index_bytes));
        _index_mapped = true;
    } else if (!_index.file().writable() || _index.file().max_entries() < _index_capacity) {
        SPOOL_TRY(_index.file().make_mutable(_ops, index_bytes));
    }
    if (!_time_index_mapped) {
        SPOOL_STORAGE_ASSIGN(
            _time_index,
            time_index::open(_ops, layout::segment_path(_dir, _base, layout::time_index_suffix),
                             _base, time_bytes));
        _time_index_mapped = true;
    } else if (!_time_index.file().writable() ||
               _time_index.file().max_entries() < _index_capacity) {
        SPOOL_TRY(_time_index.file().make_mutable(_ops, time_bytes));
    }
    // Rebuilding writes at most one entry per batch of the file.
    uint64_t most = _size / rf::batch_header_size + 2;
    SPOOL_TRY(_index.file().reserve(_ops, most));
    SPOOL_TRY(_time_index.file().reserve(_ops, most));
    return success();
}

result<void> segment::rebuild_indexes() {
    SPOOL_TRY(ensure_index_capacity());
    reset_indexes();
    SPOOL_TRY(for_each_batch(0, [&](uint32_t pos, const batch_info& b) {
        if (uint64_t(pos) + b.size() > _size) {
            return false;
        }
        if (!_first_ts) {
            _first_ts = b.max_timestamp;
        }
        index_batch(b, pos);
        return true;
    }));
    if (!_active) {
        SPOOL_TRY(close_indexes());
    }
    return success();
}

// Preallocated .log files end on a page boundary (or at segment.bytes).
constexpr uint32_t prealloc_alignment = 4096;

// True when [from, to) of fd reads as zeros (a preallocated, unwritten tail).
static result<bool> all_zero(file_ops& ops, int fd, uint32_t from, uint32_t to) {
    std::vector<uint8_t> buf(64 * 1024);
    while (from < to) {
        size_t want = std::min<size_t>(buf.size(), to - from);
        ssize_t n = ops.pread_full(fd, buf.data(), want, from);
        if (n < 0) {
            return make_error_code(errc::io_error);
        }
        if (n == 0) {
            break;
        }
        for (ssize_t i = 0; i < n; ++i) {
            if (buf[size_t(i)] != 0) {
                return false;
            }
        }
        from += static_cast<uint32_t>(n);
    }
    return true;
}

result<segment_recovery> segment::recover() {
    SPOOL_TRY(ensure_index_capacity());
    reset_indexes();
    segment_recovery rec;
    std::vector<uint8_t> buf;
    uint32_t pos = 0;
    while (pos < _size) {
        uint8_t hdr[rf::batch_header_size];
        if (_size - pos < rf::batch_header_size) {
            break;
        }
        ssize_t n = _ops.pread_full(_log->fd(), hdr, sizeof hdr, pos);
        if (n < 0) {
            return make_error_code(errc::io_error);
        }
        if (size_t(n) < sizeof hdr) {
            break;
        }
        auto b = batch_info::decode(hdr);
        if (!b.plausible() || uint64_t(pos) + b.size() > _size ||
            (_next_offset > _base && b.base_offset < _next_offset) || b.base_offset < _base) {
            break;
        }
        buf.resize(b.size());
        n = _ops.pread_full(_log->fd(), buf.data(), buf.size(), pos);
        if (n < 0) {
            return make_error_code(errc::io_error);
        }
        if (size_t(n) < buf.size() || !check_batch(buf)) {
            break;
        }
        if (!_first_ts) {
            _first_ts = b.max_timestamp;
        }
        index_batch(b, pos);
        rec.batches++;
        pos += b.size();
    }
    rec.valid_bytes = pos;
    rec.truncated_bytes = _size - pos;
    if (pos < _size) {
        // reserve_log() leaves files at a multiple of the page size (or at segment.bytes): a
        // zero tail of such a file is preallocated space that was never written (or written
        // but lost before any flush, which nobody was promised), not a torn batch. A file cut
        // anywhere else keeps its zeros counted as truncated bytes.
        bool preallocated_size = _size % prealloc_alignment == 0 || _size == _segment_bytes;
        bool zeros = false;
        if (preallocated_size) {
            SPOOL_STORAGE_ASSIGN(zeros, all_zero(_ops, _log->fd(), pos, _size));
        }
        if (zeros) {
            rec.preallocated_bytes = rec.truncated_bytes;
            rec.truncated_bytes = 0;
        }
        if (_ops.ftruncate(_log->fd(), pos) != 0) {
            return make_error_code(errc_from_errno(errno));
        }
        _size = pos;
    }
    _allocated = _size;
    if (!_active) {
        SPOOL_TRY(close_indexes());
    }
    return rec;
}

result<void> segment::close_indexes() {
    if (_size > 0) {
        // Kafka's last entry: the time index must know the segment's max timestamp without a scan.
        _time_index.maybe_append(_max_ts, _offset_of_max_ts, /*allow_full=*/true);
    }
    SPOOL_TRY(_index.file().trim(_ops));
    SPOOL_TRY(_time_index.file().trim(_ops));
    return success();
}

result<void> segment::reserve_log(uint32_t bytes) {
    uint64_t need = uint64_t(_size) + bytes;
    if (need <= _allocated) {
        return success();
    }
    if (need > UINT32_MAX) {
        return make_error_code(errc::message_too_large);
    }
    if (_preallocate == 0) {
        return success();
    }
    // A step at a time, never past segment.bytes unless one append needs it.
    uint64_t step_end = (uint64_t(_allocated) + _preallocate + prealloc_alignment - 1) /
                        prealloc_alignment * prealloc_alignment;
    uint64_t want = std::max(need, std::min<uint64_t>(step_end, std::max(_segment_bytes, _size)));
    if (_ops.fallocate(_log->fd(), _allocated, static_cast<off_t>(want - _allocated)) != 0) {
        // Near a full disk (or a file size limit) the step may not fit where the append still
        // does, and some filesystems cannot preallocate at all: the write then extends the file
        // itself and reports the real error if there is one.
        return success();
    }
    _allocated = static_cast<uint32_t>(want);
    return success();
}

result<void> segment::trim_log() {
    if (_allocated > _size) {
        if (_ops.ftruncate(_log->fd(), _size) != 0) {
            return make_error_code(errc_from_errno(errno));
        }
    }
    _allocated = _size;
    return success();
}

result<void> segment::roll() {
    SPOOL_TRY(trim_log());
    SPOOL_TRY(close_indexes());
    _active = false;
    return success();
}

result<void> segment::flush() {
    if (_ops.fdatasync(_log->fd()) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    SPOOL_TRY(_txns.sync());
    return flush_indexes();
}

result<void> segment::flush_indexes() {
    for (const mapped_index* idx : {&_index.file(), &_time_index.file()}) {
        if (idx->handle() && _ops.fdatasync(idx->fd()) != 0) {
            return make_error_code(errc_from_errno(errno));
        }
    }
    if (!_active) {
        // On disk now: a closed segment keeps only the mappings.
        _index.file().release_file();
        _time_index.file().release_file();
    }
    return success();
}

std::array<std::shared_ptr<file_handle>, 3> segment::sync_handles() const {
    return {_log, _index.file().handle(), _time_index.file().handle()};
}

std::vector<std::shared_ptr<file_handle>> segment::index_sync_handles() const {
    std::vector<std::shared_ptr<file_handle>> out;
    if (_active) {
        return out;
    }
    for (const mapped_index* idx : {&_index.file(), &_time_index.file()}) {
        if (idx->handle()) {
            out.push_back(idx->handle());
        }
    }
    return out;
}

void segment::release_synced_index_files(const std::vector<std::shared_ptr<file_handle>>& synced) {
    if (_active) {
        return;
    }
    for (mapped_index* idx : {&_index.file(), &_time_index.file()}) {
        if (idx->handle() &&
            std::find(synced.begin(), synced.end(), idx->handle()) != synced.end()) {
            idx->release_file();
        }
    }
}

result<void> segment::rename_files(std::string_view suffix) {
    // The .txnindex exists only once it has an entry: a missing file is fine, as for the others.
    for (auto sfx : {layout::log_suffix, layout::index_suffix, layout::time_index_suffix,
                     layout::txn_index_suffix}) {
        auto from = layout::segment_path(_dir, _base, sfx);
        auto to = from;
        to += suffix;
        std::error_code ec;
        fs::rename(from, to, ec);
        if (ec && ec != std::errc::no_such_file_or_directory) {
            return make_error_code(errc::io_error);
        }
    }
    return success();
}

void segment::remove_files(std::string_view suffix) {
    for (auto sfx : {layout::log_suffix, layout::index_suffix, layout::time_index_suffix,
                     layout::txn_index_suffix}) {
        auto p = layout::segment_path(_dir, _base, sfx);
        p += suffix;
        std::error_code ec;
        fs::remove(p, ec);
    }
}

}  // namespace spool::broker::storage
