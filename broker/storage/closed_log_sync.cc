#include "broker/storage/closed_log_sync.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <mutex>
#include <thread>

namespace spool::broker::storage {

namespace {

// One thing to make durable: a segment file already open, or a path (snapshot, directory).
struct sync_item {
    const file_handle* file = nullptr;
    const std::filesystem::path* path = nullptr;
    bool directory = false;
};

std::error_code sync_one(file_ops& ops, const sync_item& item) {
    if (item.file != nullptr) {
        return ops.fdatasync(item.file->fd()) == 0 ? std::error_code{}
                                                   : make_error_code(errc_from_errno(errno));
    }
    if (item.directory) {
        auto r = sync_dir(*item.path);
        return r ? std::error_code{} : r.error();
    }
    int fd = ::open(item.path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return make_error_code(errc_from_errno(errno));
    }
    int rc = ops.fdatasync(fd);
    int e = errno;
    ::close(fd);
    return rc == 0 ? std::error_code{} : make_error_code(errc_from_errno(e));
}

}  // namespace

std::error_code sync_closed_logs(file_ops& ops,
                                 const std::vector<partition_log::unsynced_files>& logs,
                                 size_t threads) {
    std::vector<sync_item> items;
    for (const auto& log : logs) {
        for (const auto& f : log.files) {
            items.push_back({f.get(), nullptr, false});
        }
        // The snapshot's data before the directory entry its rename made.
        if (!log.snapshot.empty()) {
            items.push_back({nullptr, &log.snapshot, false});
        }
        if (!log.dir.empty()) {
            items.push_back({nullptr, &log.dir, true});
        }
    }
    std::atomic<size_t> next{0};
    std::mutex mu;
    std::error_code first;
    auto work = [&] {
        for (size_t i = next++; i < items.size(); i = next++) {
            if (auto ec = sync_one(ops, items[i])) {
                std::lock_guard lock(mu);
                if (!first) {
                    first = ec;
                }
            }
        }
    };
    std::vector<std::thread> pool;
    const size_t n = std::min(std::max<size_t>(threads, 1), items.size());
    for (size_t t = 1; t < n; ++t) {
        pool.emplace_back(work);
    }
    work();
    for (auto& t : pool) {
        t.join();
    }
    return first;
}

}  // namespace spool::broker::storage
