#include "broker/handlers/record_count.h"

#include "protocol/records/batch_format.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>

namespace spool::broker::handlers {

namespace {

namespace rf = protocol::records;

// Reads [offset, offset + len) of fd into buf; false unless all of it was there.
bool read_exactly(int fd, uint8_t* buf, size_t len, uint64_t offset) {
    size_t done = 0;
    while (done < len) {
        ssize_t n = ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

uint64_t count_in_slice(const file_slice& slice) {
    // Small batches: one read covers many headers. Large ones: read just the next header
    // rather than copy kilobytes of records to look at 61 bytes.
    constexpr size_t window_size = 64 * 1024;
    thread_local std::array<uint8_t, window_size> window;
    uint64_t window_start = 0;
    size_t window_len = 0;
    uint64_t records = 0;
    uint64_t pos = 0;  // within the slice
    uint64_t last_batch = 0;
    while (pos + rf::batch_header_size <= slice.length) {
        uint64_t at = slice.offset + pos;
        if (at < window_start || at + rf::batch_header_size > window_start + window_len) {
            size_t want = last_batch >= window_size / 8 ? rf::batch_header_size : window_size;
            window_len = static_cast<size_t>(std::min<uint64_t>(want, slice.length - pos));
            window_start = at;
            if (!read_exactly(slice.file->fd(), window.data(), window_len, at)) {
                break;
            }
        }
        const uint8_t* header = window.data() + (at - window_start);
        auto batch_length =
            static_cast<int32_t>(rf::load_be32(header + rf::batch_offset::batch_length));
        auto count = static_cast<int32_t>(rf::load_be32(header + rf::batch_offset::records_count));
        if (batch_length < rf::min_batch_length) {
            break;  // not a batch header: the slice is not what storage promised
        }
        records += static_cast<uint64_t>(std::max(count, 0));
        last_batch = static_cast<uint64_t>(batch_length) + rf::log_overhead;
        pos += last_batch;
    }
    return records;
}

}  // namespace

uint64_t count_records(std::span<const file_slice> slices) {
    uint64_t records = 0;
    for (const auto& s : slices) {
        if (s.file) {
            records += count_in_slice(s);
        }
    }
    return records;
}

}  // namespace spool::broker::handlers
