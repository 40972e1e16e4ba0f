#pragma once

// Runs the real spool-broker binary for a test: a fresh data directory, a free port on
// 127.0.0.1, stderr captured to a log file. start() returns once the port accepts connections;
// stop() sends SIGTERM and reports the exit status and how long the shutdown took.
//
// The binary is the one this build made, or $SPOOL_BROKER_BIN when set (to run the same tests
// against another build, e.g. to measure main before a fix).
//
// Lifecycle: one process per start()/stop() pair; the destructor kills a process still running,
// then fails the running test (gtest ADD_FAILURE) if the log holds a sanitizer report: under the
// asan/tsan presets the broker is built with the same sanitizer, and its findings land in its
// stderr, which no test would otherwise read.
// Threading: test thread only.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace spool::tests {

class broker_process {
public:
    // data_dir empty: a new temporary directory, removed by the destructor.
    explicit broker_process(std::filesystem::path data_dir = {});
    ~broker_process();

    // Extra --override key=value arguments for the next start().
    void add_override(std::string kv) { _overrides.push_back(std::move(kv)); }
    // The PLAINTEXT port start() waits for, before the first start (default: a free one), for
    // overrides that name it (several listeners).
    void set_port(uint16_t port) { _port = port; }
    // RLIMIT_NOFILE of the next start()'s process (0: inherit); soft <= hard.
    void set_open_files_limit(uint64_t soft, uint64_t hard) {
        _nofile_soft = soft;
        _nofile_hard = hard;
    }
    // start() without waiting for the port: for a start that is expected to fail; returns the
    // exit status once the process ends (or -1 after timeout, the process killed).
    int run_to_exit(std::chrono::milliseconds timeout);
    bool start();
    struct exit_info {
        bool exited = false;
        int status = -1;  // exit code when exited
        std::chrono::milliseconds took{0};
    };
    exit_info stop(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    void kill_hard();

    uint16_t port() const { return _port; }
    // The running process (-1 when stopped), for /proc/<pid> checks.
    pid_t pid() const { return _pid; }
    // False once the process has exited (it is reaped then).
    bool running();
    const std::filesystem::path& data_dir() const { return _data_dir; }
    std::string log_text() const;
    // The first ASan/LSan/UBSan/TSan report in the log (sanitizer_report.h), or "".
    std::string sanitizer_findings() const;
    std::string bootstrap() const { return "127.0.0.1:" + std::to_string(_port); }

private:
    std::filesystem::path _data_dir;
    bool _own_dir = false;
    std::vector<std::string> _overrides;
    pid_t _pid = -1;
    uint16_t _port = 0;
    int _runs = 0;
    uint64_t _nofile_soft = 0;
    uint64_t _nofile_hard = 0;
    void spawn();
};

// A port nobody listens on right now (bind to 0, read it, close).
uint16_t free_port();

}  // namespace spool::tests
