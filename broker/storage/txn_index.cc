#include "broker/storage/txn_index.h"

#include "broker/storage/batch_info.h"
#include "broker/storage/errc.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace spool::broker::storage {

namespace fs = std::filesystem;

void encode_aborted_txn(const aborted_txn& t, uint8_t* out) {
    rf::store_be16(out, 0);
    rf::store_be64(out + 2, static_cast<uint64_t>(t.pid.value()));
    rf::store_be64(out + 10, static_cast<uint64_t>(t.first_offset.value()));
    rf::store_be64(out + 18, static_cast<uint64_t>(t.last_offset.value()));
    rf::store_be64(out + 26, static_cast<uint64_t>(t.last_stable_offset.value()));
}

aborted_txn decode_aborted_txn(const uint8_t* in) {
    return {model::producer_id(static_cast<int64_t>(rf::load_be64(in + 2))),
            model::offset(static_cast<int64_t>(rf::load_be64(in + 10))),
            model::offset(static_cast<int64_t>(rf::load_be64(in + 18))),
            model::offset(static_cast<int64_t>(rf::load_be64(in + 26)))};
}

result<const std::vector<aborted_txn>*> txn_index::entries() const {
    if (_entries) {
        return &*_entries;
    }
    std::vector<aborted_txn> out;
    int fd = ::open(_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            return make_error_code(errc_from_errno(errno));
        }
        _entries = std::move(out);
        return &*_entries;
    }
    file_handle owner(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return make_error_code(errc::io_error);
    }
    // A torn last entry (a crash in the middle of its write) is not an entry.
    size_t n = static_cast<size_t>(st.st_size) / entry_bytes;
    std::vector<uint8_t> buf(n * entry_bytes);
    if (_ops.pread_full(fd, buf.data(), buf.size(), 0) != ssize_t(buf.size())) {
        return make_error_code(errc::io_error);
    }
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const uint8_t* p = buf.data() + i * entry_bytes;
        if (rf::load_be16(p) != 0) {
            return make_error_code(errc::corrupt_batch);
        }
        out.push_back(decode_aborted_txn(p));
    }
    _entries = std::move(out);
    return &*_entries;
}

result<void> txn_index::open_for_append() {
    if (_file) {
        return success();
    }
    int fd = _ops.open_or_create(_path.c_str());
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _file = std::make_shared<file_handle>(fd);
    return success();
}

result<void> txn_index::append(const aborted_txn& t) {
    SPOOL_TRY(list, entries());
    SPOOL_TRY(open_for_append());
    uint8_t buf[entry_bytes];
    encode_aborted_txn(t, buf);
    iovec v{buf, entry_bytes};
    auto at = static_cast<off_t>(list->size() * entry_bytes);
    if (int e = _ops.pwritev_all(_file->fd(), &v, 1, at); e != 0) {
        return make_error_code(errc_from_errno(e));
    }
    _entries->push_back(t);
    return success();
}

result<bool> txn_index::collect(model::offset fetch_offset, model::offset upper,
                                std::vector<aborted_txn>& out) const {
    SPOOL_TRY(list, entries());
    for (const auto& t : *list) {
        if (t.last_offset >= fetch_offset && t.first_offset < upper) {
            out.push_back(t);
        }
        if (t.last_stable_offset >= upper) {
            return true;
        }
    }
    return false;
}

result<void> txn_index::truncate_to(model::offset o) {
    SPOOL_TRY(list, entries());
    size_t keep = 0;
    while (keep < list->size() && (*list)[keep].last_offset < o) {
        ++keep;
    }
    if (keep == list->size()) {
        return success();
    }
    SPOOL_TRY(open_for_append());
    if (_ops.ftruncate(_file->fd(), static_cast<off_t>(keep * entry_bytes)) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    _entries->resize(keep);
    return success();
}

result<void> txn_index::reset() {
    _file.reset();
    _entries = std::vector<aborted_txn>{};
    std::error_code ec;
    fs::remove(_path, ec);
    if (ec) {
        return make_error_code(errc::io_error);
    }
    return success();
}

result<void> txn_index::sync() {
    if (_file && _ops.fdatasync(_file->fd()) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    return success();
}

result<void> txn_index::rename(std::string_view suffix) {
    auto to = _path;
    to += suffix;
    std::error_code ec;
    fs::rename(_path, to, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {
        return make_error_code(errc::io_error);
    }
    return success();
}

void txn_index::remove(std::string_view suffix) {
    auto p = _path;
    p += suffix;
    std::error_code ec;
    fs::remove(p, ec);
}

}  // namespace spool::broker::storage
