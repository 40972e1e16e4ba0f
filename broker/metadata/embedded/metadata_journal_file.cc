#include "broker/metadata/embedded/metadata_journal_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

namespace spool::broker::metadata::journal {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view file_prefix = "spool-metadata-";
constexpr std::string_view file_suffix = ".log";
constexpr size_t seq_digits = 20;

std::error_code last_error() {
    return {errno, std::generic_category()};
}

void fsync_directory(const fs::path& dir) {
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
}

}  // namespace

fs::path file_for(const fs::path& dir, int64_t first_seq) {
    char digits[seq_digits + 1];
    std::snprintf(digits, sizeof digits, "%020lld", static_cast<long long>(first_seq));
    return dir / (std::string(file_prefix) + digits + std::string(file_suffix));
}

result<std::vector<file_entry>> list_files(const fs::path& dir) {
    std::vector<file_entry> out;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        auto name = entry.path().filename().string();
        if (name.size() != file_prefix.size() + seq_digits + file_suffix.size() ||
            !name.starts_with(file_prefix) || !name.ends_with(file_suffix)) {
            continue;
        }
        int64_t seq = 0;
        const char* first = name.data() + file_prefix.size();
        auto [end, parse_ec] = std::from_chars(first, first + seq_digits, seq);
        if (parse_ec != std::errc{} || end != first + seq_digits || seq < 1) {
            continue;
        }
        out.push_back({entry.path(), seq});
    }
    if (ec) {
        return ec;
    }
    std::sort(out.begin(), out.end(),
              [](const file_entry& a, const file_entry& b) { return a.first_seq < b.first_seq; });
    return out;
}

result<journal_file> journal_file::create(const fs::path& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return last_error();
    }
    fsync_directory(path.parent_path());
    return journal_file(path, fd);
}

journal_file::journal_file(journal_file&& other) noexcept
    : _path(std::move(other._path)),
      _fd(std::exchange(other._fd, -1)),
      _size(other._size),
      _broken(other._broken) {}

journal_file& journal_file::operator=(journal_file&& other) noexcept {
    if (this != &other) {
        if (_fd >= 0) {
            ::close(_fd);
        }
        _path = std::move(other._path);
        _fd = std::exchange(other._fd, -1);
        _size = other._size;
        _broken = other._broken;
    }
    return *this;
}

journal_file::~journal_file() {
    if (_fd >= 0) {
        ::close(_fd);
    }
}

result<void> journal_file::append(std::string_view line) {
    if (_broken || _fd < 0) {
        return std::make_error_code(std::errc::io_error);
    }
    size_t done = 0;
    std::error_code failure;
    while (done < line.size()) {
        ssize_t n = ::write(_fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            failure = n < 0 ? last_error() : std::make_error_code(std::errc::no_space_on_device);
            break;
        }
        done += static_cast<size_t>(n);
    }
    if (!failure && ::fdatasync(_fd) != 0) {
        failure = last_error();
    }
    if (failure) {
        // The line may be partly written (and, after a failed fdatasync, partly on disk): cut
        // it off, so what follows starts on a line of its own.
        if (::ftruncate(_fd, static_cast<off_t>(_size)) != 0 || ::fdatasync(_fd) != 0) {
            _broken = true;
        }
        return failure;
    }
    _size += line.size();
    return success();
}

result<file_contents> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return std::make_error_code(std::errc::no_such_file_or_directory);
    }
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return std::make_error_code(std::errc::io_error);
    }
    const std::string all = std::move(text).str();
    file_contents out;
    size_t at = 0;
    while (at < all.size()) {
        size_t end = all.find('\n', at);
        auto decoded = end == std::string::npos
                           ? result<record>(std::make_error_code(std::errc::bad_message))
                           : decode(std::string_view(all).substr(at, end - at));
        if (!decoded) {
            out.bad_bytes = all.size() - at;
            // A torn append leaves at most one line, possibly without its '\n'.
            out.damaged_in_the_middle = end != std::string::npos && end + 1 < all.size();
            break;
        }
        out.records.push_back(std::move(decoded).value());
        at = end + 1;
        out.valid_bytes = at;
    }
    return out;
}

}  // namespace spool::broker::metadata::journal
