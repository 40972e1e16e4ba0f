#include "tests/integration/broker_process.h"

#include "tests/integration/child_process.h"
#include "tests/integration/sanitizer_report.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#ifndef SPOOL_BROKER_BIN
#error "SPOOL_BROKER_BIN must name the spool-broker binary"
#endif

namespace spool::tests {

namespace fs = std::filesystem;

namespace {

// The low end of the kernel's ephemeral ports (outgoing connections and bind(0) take theirs
// from ip_local_port_range).
int ephemeral_low() {
    std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    return in >> low && low > 12000 ? low : 32768;
}

bool can_bind(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

// Binding port 0 hands out a port from the ephemeral range, which any process's outgoing
// connection may take before the broker binds it (a broker's http.listener once found its port
// in use). So ports come from below that range, and each is claimed with an flock on
// /tmp/spool-test-ports/<port> held for this process's lifetime, so the tests running in
// parallel never pick the same one.
uint16_t free_port() {
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    static const fs::path dir = "/tmp/spool-test-ports";
    std::error_code ec;
    fs::create_directories(dir, ec);
    const int high = ephemeral_low();
    const int low = 10000;
    thread_local std::mt19937 rng(std::random_device{}());
    std::uniform_int_distribution<int> pick(low, high - 1);
    for (int attempt = 0; attempt < 2000; ++attempt) {
        auto port = static_cast<uint16_t>(pick(rng));
        const auto file = dir / std::to_string(port);
        int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            continue;
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || !can_bind(port)) {
            ::close(fd);
            continue;
        }
        // Kept open (and locked) until this process exits: the claim outlives the brokers.
        return port;
    }
    throw std::runtime_error("free_port: no free port below the ephemeral range");
}

namespace {

bool can_connect(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
}

}  // namespace

broker_process::broker_process(fs::path data_dir) : _data_dir(std::move(data_dir)) {
    if (_data_dir.empty()) {
        _data_dir = make_temp_dir("spool-it");
        _own_dir = true;
    }
    fs::create_directories(_data_dir);
}

broker_process::~broker_process() {
    kill_hard();
    // Every run of this process appended to one log: a sanitizer build's finding in any of them
    // (also one a test never looked at, e.g. at a restart or while stopping) fails the test.
    if (auto report = sanitizer_findings(); !report.empty()) {
        ADD_FAILURE() << "spool-broker (" << (_data_dir / "broker.log").string()
                      << ") reported a sanitizer finding:\n"
                      << report;
    }
    if (_own_dir) {
        std::error_code ec;
        fs::remove_all(_data_dir, ec);
    }
}

void broker_process::spawn() {
    if (_port == 0) {
        _port = free_port();
    }
    ++_runs;
    const char* bin = std::getenv("SPOOL_BROKER_BIN");
    std::vector<std::string> args = {
        bin != nullptr && *bin != '\0' ? std::string(bin) : std::string(SPOOL_BROKER_BIN),
        "--override",
        "listeners=PLAINTEXT://127.0.0.1:" + std::to_string(_port),
        "--override",
        "log.dirs=" + (_data_dir / "data").string(),
        "--override",
        "spool.cores=2",
        "--override",
        "http.listener=127.0.0.1:0",  // any free port: several brokers run side by side
    };
    for (const auto& o : _overrides) {
        args.push_back("--override");
        args.push_back(o);
    }
    rlimit nofile{static_cast<rlim_t>(_nofile_soft), static_cast<rlim_t>(_nofile_hard)};
    auto set_nofile = [](const void* r) {
        ::setrlimit(RLIMIT_NOFILE, static_cast<const rlimit*>(r));
    };
    _pid = spawn_logged(std::move(args), _data_dir / "broker.log",
                        _nofile_hard > 0 ? +set_nofile : nullptr, &nofile);
}

int broker_process::run_to_exit(std::chrono::milliseconds timeout) {
    spawn();
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (reap_if_exited(_pid, &status)) {
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill_hard();
    return -1;
}

bool broker_process::start() {
    spawn();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
        if (can_connect(_port)) {
            return true;
        }
        if (reap_if_exited(_pid)) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

broker_process::exit_info broker_process::stop(std::chrono::milliseconds timeout) {
    exit_info out;
    if (_pid <= 0) {
        return out;
    }
    auto start = std::chrono::steady_clock::now();
    ::kill(_pid, SIGTERM);
    while (std::chrono::steady_clock::now() - start < timeout) {
        int status = 0;
        if (reap_if_exited(_pid, &status)) {
            out.exited = WIFEXITED(status);
            out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
            out.took = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start);
            return out;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill_hard();
    return out;
}

bool broker_process::running() {
    return _pid > 0 && !reap_if_exited(_pid);
}

void broker_process::kill_hard() {
    kill_and_reap(_pid);
}

std::string broker_process::log_text() const {
    return read_text_file(_data_dir / "broker.log");
}

std::string broker_process::sanitizer_findings() const {
    return sanitizer_report(log_text());
}

}  // namespace spool::tests
