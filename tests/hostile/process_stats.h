#pragma once

// What a hostile-client test measures of the broker process: resident memory and open file
// descriptors, read from /proc/<pid>.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace spool::tests::hostile {

// A field of /proc/<pid>/status in kB (VmRSS, VmHWM), or -1.
inline int64_t status_kb(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field + ":", 0) == 0) {
            return std::stoll(line.substr(field.size() + 1));
        }
    }
    return -1;
}

inline int64_t rss_mb(pid_t pid) {
    return status_kb(pid, "VmRSS") / 1024;
}

inline int64_t fd_count(pid_t pid) {
    std::error_code ec;
    int64_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        ++n;
    }
    return n;
}

// Polls the process's descriptor count every 10 ms until `reached(count)` or `within` passed;
// the time it took, or -1 ms when it never got there.
template <class Reached>
std::chrono::milliseconds time_until_fd_count(pid_t pid, Reached reached,
                                              std::chrono::milliseconds within) {
    auto start = std::chrono::steady_clock::now();
    for (;;) {
        auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        if (reached(fd_count(pid))) {
            return took;
        }
        if (took > within) {
            return std::chrono::milliseconds(-1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Until the broker holds at most `limit` fds (what closed clients held is released).
inline std::chrono::milliseconds time_until_fds_at_most(pid_t pid, int64_t limit,
                                                        std::chrono::milliseconds within) {
    return time_until_fd_count(
        pid, [limit](int64_t n) { return n <= limit; }, within);
}

// Until it holds at least `floor` (accepting connections on a busy machine takes a while).
inline std::chrono::milliseconds time_until_fds_at_least(pid_t pid, int64_t floor,
                                                         std::chrono::milliseconds within) {
    return time_until_fd_count(
        pid, [floor](int64_t n) { return n >= floor; }, within);
}

// Samples VmRSS every 20 ms on a thread; peak_mb() is the highest seen.
class rss_sampler {
public:
    explicit rss_sampler(pid_t pid) : _pid(pid), _thread([this] { run(); }) {}
    ~rss_sampler() { stop(); }
    void stop() {
        _stop = true;
        if (_thread.joinable()) {
            _thread.join();
        }
    }
    int64_t peak_mb() const { return _peak_kb / 1024; }

private:
    void run() {
        while (!_stop) {
            int64_t kb = status_kb(_pid, "VmRSS");
            if (kb > _peak_kb) {
                _peak_kb = kb;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    pid_t _pid;
    std::atomic<bool> _stop{false};
    std::atomic<int64_t> _peak_kb{0};
    std::thread _thread;
};

}  // namespace spool::tests::hostile
