#include "broker/storage/checkpoint_file.h"

#include "broker/storage/errc.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>

namespace spool::broker::storage {

namespace fs = std::filesystem;

result<void> sync_dir(const fs::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    int rc = ::fsync(fd);
    int e = errno;
    ::close(fd);
    if (rc != 0) {
        return make_error_code(errc_from_errno(e));
    }
    return success();
}

result<void> write_file_atomic(file_ops& ops, const fs::path& path, std::span<const uint8_t> bytes,
                               bool durable) {
    fs::path tmp = path;
    tmp += ".tmp";
    int fd = ops.open_or_create(tmp.c_str(), O_TRUNC);
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    iovec v{const_cast<uint8_t*>(bytes.data()), bytes.size()};
    int e = ops.pwritev_all(fd, &v, 1, 0);
    if (e == 0 && durable && ops.fdatasync(fd) != 0) {
        e = errno;
    }
    ::close(fd);
    if (e != 0) {
        ::unlink(tmp.c_str());
        return make_error_code(errc_from_errno(e));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        return make_error_code(errc_from_errno(errno));
    }
    return durable ? sync_dir(path.parent_path()) : success();
}

result<std::vector<uint8_t>> read_file(const fs::path& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return make_error_code(errno == ENOENT ? errc::not_found : errc_from_errno(errno));
    }
    std::vector<uint8_t> out;
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
        out.resize(size_t(st.st_size));
    }
    ssize_t n = file_ops::posix().pread_full(fd, out.data(), out.size(), 0);
    ::close(fd);
    if (n < 0) {
        return make_error_code(errc::io_error);
    }
    out.resize(size_t(n));
    return out;
}

std::string format_checkpoint(const std::vector<std::string>& lines) {
    std::string s = "0\n" + std::to_string(lines.size()) + "\n";
    for (const auto& l : lines) {
        s += l;
        s += '\n';
    }
    return s;
}

result<std::vector<std::string>> parse_checkpoint(std::string_view text) {
    std::vector<std::string> lines;
    std::istringstream in{std::string(text)};
    std::string version;
    std::string count;
    if (!std::getline(in, version) || version != "0" || !std::getline(in, count)) {
        return make_error_code(errc::invalid_argument);
    }
    size_t n = 0;
    auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc{}) {
        return make_error_code(errc::invalid_argument);
    }
    std::string line;
    while (lines.size() < n && std::getline(in, line)) {
        lines.push_back(line);
    }
    if (lines.size() != n) {
        return make_error_code(errc::invalid_argument);
    }
    return lines;
}

result<void> write_offset_checkpoint(file_ops& ops, const fs::path& path,
                                     const offset_checkpoint& entries) {
    std::vector<std::string> lines;
    lines.reserve(entries.size());
    for (const auto& [tp, o] : entries) {
        lines.push_back(tp.topic + " " + std::to_string(tp.partition.value()) + " " +
                        std::to_string(o.value()));
    }
    return write_file_atomic(ops, path, format_checkpoint(lines));
}

result<offset_checkpoint> read_offset_checkpoint(const fs::path& path) {
    auto bytes = read_file(path);
    if (!bytes) {
        if (bytes.error() == errc::not_found) {
            return offset_checkpoint{};
        }
        return bytes.error();
    }
    std::string_view text(reinterpret_cast<const char*>(bytes.value().data()),
                          bytes.value().size());
    SPOOL_TRY(lines, parse_checkpoint(text));
    offset_checkpoint out;
    for (const auto& l : lines) {
        std::istringstream in(l);
        std::string topic;
        int32_t partition = 0;
        int64_t o = 0;
        if (!(in >> topic >> partition >> o)) {
            return make_error_code(errc::invalid_argument);
        }
        out[model::topic_partition{topic, model::partition_id(partition)}] = model::offset(o);
    }
    return out;
}

}  // namespace spool::broker::storage
