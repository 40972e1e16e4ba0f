#include "broker/storage/leader_epoch_cache.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"

#include <algorithm>
#include <sstream>

namespace spool::broker::storage {

result<void> epoch_checkpoint_file::write(uint64_t version, const std::string& contents) {
    std::lock_guard lock(_mu);
    if (_abandoned.load(std::memory_order_acquire) || version <= _written) {
        return success();
    }
    SPOOL_TRY(write_file_atomic(_ops, _path, contents));
    _written = version;
    return success();
}

void epoch_checkpoint_file::abandon() {
    _abandoned.store(true, std::memory_order_release);
}

void epoch_checkpoint_file::wait_for_writes() {
    std::lock_guard lock(_mu);
}

result<leader_epoch_cache> leader_epoch_cache::load(file_ops& ops, std::filesystem::path dir) {
    leader_epoch_cache c;
    auto path = dir / layout::leader_epoch_checkpoint;
    c._file = std::make_shared<epoch_checkpoint_file>(ops, path);
    auto bytes = read_file(path);
    if (!bytes) {
        if (bytes.error() == errc::not_found) {
            return c;
        }
        return bytes.error();
    }
    std::string_view text(reinterpret_cast<const char*>(bytes.value().data()),
                          bytes.value().size());
    SPOOL_TRY(lines, parse_checkpoint(text));
    for (const auto& l : lines) {
        std::istringstream in(l);
        int32_t epoch = 0;
        int64_t start = 0;
        if (!(in >> epoch >> start)) {
            return make_error_code(errc::invalid_argument);
        }
        c._entries.push_back({model::leader_epoch(epoch), model::offset(start)});
    }
    return c;
}

std::string leader_epoch_cache::rendered() const {
    std::vector<std::string> lines;
    lines.reserve(_entries.size());
    for (const auto& e : _entries) {
        lines.push_back(std::to_string(e.epoch.value()) + " " +
                        std::to_string(e.start_offset.value()));
    }
    return format_checkpoint(lines);
}

result<void> leader_epoch_cache::checkpoint() {
    ++_version;
    if (_on_change) {
        _on_change();
        return success();
    }
    return write_now();
}

result<void> leader_epoch_cache::write_now() {
    if (!_file) {
        return success();  // never loaded: nothing to write to
    }
    return _file->write(_version, rendered());
}

result<void> leader_epoch_cache::assign(model::leader_epoch epoch, model::offset start) {
    if (epoch.value() < 0) {
        return success();
    }
    if (!_entries.empty() && epoch <= _entries.back().epoch) {
        return success();
    }
    while (!_entries.empty() && _entries.back().start_offset >= start) {
        _entries.pop_back();
    }
    _entries.push_back({epoch, start});
    return checkpoint();
}

std::optional<model::leader_epoch> leader_epoch_cache::latest_epoch() const {
    if (_entries.empty()) {
        return std::nullopt;
    }
    return _entries.back().epoch;
}

epoch_entry leader_epoch_cache::end_offset_for(model::leader_epoch requested,
                                               model::offset log_end) const {
    if (_entries.empty() || requested < _entries.front().epoch) {
        return {model::leader_epoch(-1), model::offset(-1)};
    }
    if (requested >= _entries.back().epoch) {
        return {_entries.back().epoch, log_end};
    }
    // First entry with epoch > requested; the one before it is the answer.
    auto it =
        std::upper_bound(_entries.begin(), _entries.end(), requested,
                         [](model::leader_epoch r, const epoch_entry& e) { return r < e.epoch; });
    return {std::prev(it)->epoch, it->start_offset};
}

std::optional<model::leader_epoch> leader_epoch_cache::epoch_for(model::offset o) const {
    std::optional<model::leader_epoch> out;
    for (const auto& e : _entries) {
        if (e.start_offset > o) {
            break;
        }
        out = e.epoch;
    }
    return out;
}

result<void> leader_epoch_cache::truncate_from_end(model::offset end) {
    size_t n = _entries.size();
    while (!_entries.empty() && _entries.back().start_offset >= end) {
        _entries.pop_back();
    }
    return n == _entries.size() ? success() : checkpoint();
}

result<void> leader_epoch_cache::truncate_from_start(model::offset start) {
    // Keep the last entry at or before start (moved up to start) and everything after it.
    size_t keep_from = 0;
    for (size_t i = 0; i < _entries.size(); ++i) {
        if (_entries[i].start_offset <= start) {
            keep_from = i;
        }
    }
    if (_entries.empty() || (keep_from == 0 && _entries[0].start_offset >= start)) {
        return success();
    }
    _entries.erase(_entries.begin(), _entries.begin() + static_cast<ptrdiff_t>(keep_from));
    _entries.front().start_offset = start;
    return checkpoint();
}

}  // namespace spool::broker::storage
