#include "tests/integration/etcd_process.h"

#include "tests/integration/broker_process.h"
#include "tests/integration/child_process.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#ifndef SPOOL_ETCD_BIN
#error "SPOOL_ETCD_BIN must name the etcd binary"
#endif

namespace spool::tests {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// Waits until fd is ready for `events` or the deadline passes.
bool wait_fd(int fd, short events, steady_clock::time_point deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) {
        return false;
    }
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>(left.count())) == 1;
}

std::string http_get(uint16_t port, const std::string& path, milliseconds timeout) {
    auto deadline = steady_clock::now() + timeout;
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        return {};
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    std::string out;
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (rc != 0 && errno != EINPROGRESS) {
        ::close(fd);
        return {};
    }
    if (rc != 0) {
        int err = 0;
        socklen_t len = sizeof err;
        if (!wait_fd(fd, POLLOUT, deadline) ||
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            ::close(fd);
            return {};
        }
    }
    std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
        ::close(fd);
        return {};
    }
    char buf[4096];
    while (out.size() < 65536 && wait_fd(fd, POLLIN, deadline)) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
            break;
        }
        out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return out;
}

// The member id etcd reports in its metrics (etcd_server_id{server_id="..."}), empty when none
// answered.
std::string served_member_id(uint16_t port, milliseconds timeout) {
    std::string reply = http_get(port, "/metrics", timeout);
    const std::string key = "etcd_server_id{server_id=\"";
    auto at = reply.find(key);
    if (at == std::string::npos) {
        return {};
    }
    at += key.size();
    auto end = reply.find('"', at);
    return end == std::string::npos ? std::string{} : reply.substr(at, end - at);
}

}  // namespace

// Whether process `pid` holds the socket listening on 127.0.0.1:port (/proc/net/tcp's inode of
// the LISTEN entry among the process's descriptors).
static bool listens_on(pid_t pid, uint16_t port) {
    std::ifstream tcp("/proc/net/tcp");
    std::string line;
    std::getline(tcp, line);  // header
    std::string inode;
    const std::string local = fmt::format("0100007F:{:04X}", port);
    while (std::getline(tcp, line)) {
        std::istringstream in(line);
        std::string slot, local_address, remote, state, queues, timer, retransmits, uid, timeout,
            node;
        in >> slot >> local_address >> remote >> state >> queues >> timer >> retransmits >> uid >>
            timeout >> node;
        if (local_address == local && state == "0A") {  // TCP_LISTEN
            inode = node;
            break;
        }
    }
    if (inode.empty()) {
        return false;
    }
    const std::string target = "socket:[" + inode + "]";
    std::error_code ec;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code link_ec;
        if (fs::read_symlink(fd.path(), link_ec).string() == target) {
            return true;
        }
    }
    return false;
}

bool etcd_healthy(uint16_t port, milliseconds timeout) {
    std::string reply = http_get(port, "/health", timeout);
    return reply.find("\"health\":\"true\"") != std::string::npos;
}

etcd_process::etcd_process(fs::path data_dir) : _data_dir(std::move(data_dir)) {
    if (_data_dir.empty()) {
        _data_dir = make_temp_dir("spool-etcd");
        _own_dir = true;
    }
    fs::create_directories(_data_dir);
}

etcd_process::~etcd_process() {
    kill9();
    if (_own_dir) {
        std::error_code ec;
        fs::remove_all(_data_dir, ec);
    }
}

std::string etcd_process::endpoint() const {
    return (_tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(_client_port);
}

void etcd_process::spawn() {
    if (_client_port == 0) {
        _client_port = free_port();
        do {
            _peer_port = free_port();
        } while (_peer_port == _client_port);
        do {
            _metrics_port = free_port();
        } while (_metrics_port == _client_port || _metrics_port == _peer_port);
    }
    const char* bin = std::getenv("SPOOL_ETCD_BIN");
    std::string client_url = endpoint();
    std::string peer_url = "http://127.0.0.1:" + std::to_string(_peer_port);
    std::vector<std::string> args = {
        bin != nullptr && *bin != '\0' ? std::string(bin) : std::string(SPOOL_ETCD_BIN),
        "--name=spool-test",
        "--data-dir=" + (_data_dir / "member").string(),
        "--listen-client-urls=" + client_url,
        "--advertise-client-urls=" + client_url,
        "--listen-peer-urls=" + peer_url,
        "--initial-advertise-peer-urls=" + peer_url,
        "--initial-cluster=spool-test=" + peer_url,
        "--logger=zap",
        "--log-outputs=stderr",
        "--log-level=warn",
    };
    if (_tls) {
        args.push_back("--cert-file=" + _tls->certificate.string());
        args.push_back("--key-file=" + _tls->key.string());
        if (!_tls->client_ca.empty()) {
            args.push_back("--trusted-ca-file=" + _tls->client_ca.string());
            args.push_back("--client-cert-auth");
        }
        args.push_back("--listen-metrics-urls=http://127.0.0.1:" + std::to_string(_metrics_port));
    }
    // ETCD_* variables of the test's environment would override the flags above.
    auto clear_etcd_env = [](const void*) {
        for (const char* name : {"ETCD_NAME", "ETCD_DATA_DIR", "ETCD_LISTEN_CLIENT_URLS",
                                 "ETCD_ADVERTISE_CLIENT_URLS", "ETCD_INITIAL_CLUSTER"}) {
            ::unsetenv(name);
        }
    };
    _pid = spawn_logged(std::move(args), _data_dir / "etcd.log", +clear_etcd_env);
}

bool etcd_process::start(milliseconds timeout) {
    if (_pid > 0) {
        return true;
    }
    auto deadline = steady_clock::now() + timeout;
    // A first start picks its ports with free_port(), which another test process may pick too
    // before etcd binds them: an etcd that exits at once on its first start gets new ports.
    bool first_start = _client_port == 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        spawn();
        _paused = false;
        while (steady_clock::now() < deadline) {
            if (etcd_healthy(health_port(), milliseconds(500))) {
                // Healthy is not enough: if this etcd could not bind its port (another test's
                // etcd took it while this one was down), the other one answers. It is ours when
                // it serves our member id and our process still runs.
                // On a first start there is no id to compare yet: the listening socket must be
                // ours. (Waiting a moment for an etcd that could not bind to exit was not enough:
                // on a loaded machine another test's etcd answered for ours and a SIGSTOP of ours
                // did not stop it.)
                auto id = served_member_id(health_port(), milliseconds(500));
                bool same = !id.empty() && (_server_id.empty() || id == _server_id);
                if (same && _server_id.empty()) {
                    same = listens_on(_pid, health_port());
                }
                if (same && running()) {
                    _server_id = id;
                    return true;
                }
            }
            if (!running()) {
                break;
            }
            std::this_thread::sleep_for(milliseconds(20));
        }
        if (running()) {
            break;  // alive but not healthy in time
        }
        if (!first_start || log_text().find("address already in use") == std::string::npos) {
            return false;
        }
        _client_port = 0;
        _peer_port = 0;
        _metrics_port = 0;
    }
    kill9();
    return false;
}

bool etcd_process::stop(milliseconds timeout) {
    if (_pid <= 0) {
        return false;
    }
    resume();
    ::kill(_pid, SIGTERM);
    auto deadline = steady_clock::now() + timeout;
    while (steady_clock::now() < deadline) {
        if (reap_if_exited(_pid)) {
            return true;
        }
        std::this_thread::sleep_for(milliseconds(10));
    }
    kill9();
    return false;
}

void etcd_process::kill9() {
    kill_and_reap(_pid);  // SIGKILL also ends a stopped process
    _paused = false;
}

void etcd_process::pause() {
    if (_pid > 0 && !_paused) {
        ::kill(_pid, SIGSTOP);
        _paused = true;
    }
}

void etcd_process::resume() {
    if (_pid > 0 && _paused) {
        ::kill(_pid, SIGCONT);
        _paused = false;
    }
}

bool etcd_process::running() {
    if (_pid > 0 && reap_if_exited(_pid)) {
        _paused = false;
    }
    return _pid > 0;
}

namespace {

// The etcd tool `name` next to the etcd binary, else on PATH.
std::string etcd_tool(const std::string& name) {
    const char* bin = std::getenv("SPOOL_ETCD_BIN");
    fs::path etcd = bin != nullptr && *bin != '\0' ? fs::path(bin) : fs::path(SPOOL_ETCD_BIN);
    auto sibling = etcd.parent_path() / name;
    std::error_code ec;
    return fs::exists(sibling, ec) ? sibling.string() : name;
}

// Runs args to completion (at most `timeout`); empty on exit status 0, else its output.
std::string run_tool(std::vector<std::string> args, const fs::path& log, milliseconds timeout) {
    pid_t pid = spawn_logged(args, log);
    auto deadline = steady_clock::now() + timeout;
    int status = 0;
    while (!reap_if_exited(pid, &status)) {
        if (steady_clock::now() >= deadline) {
            kill_and_reap(pid);
            return args[2] + ": no exit within the timeout\n" + read_text_file(log);
        }
        std::this_thread::sleep_for(milliseconds(20));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return {};
    }
    auto out = read_text_file(log);
    return args[2] + " exited with status " + std::to_string(status) + ": " +
           (out.empty() ? std::string("(no output)") : out);
}

}  // namespace

std::string etcd_process::snapshot(const fs::path& file) {
    if (_tls) {
        return "snapshot(): TLS mode is not supported";
    }
    // ETCDCTL_API=3 for etcd 3.4's etcdctl (the default from 3.4 on, said for clarity).
    return run_tool(
        {"/usr/bin/env", "ETCDCTL_API=3", etcd_tool("etcdctl"), "--endpoints=" + endpoint(),
         "--command-timeout=20s", "snapshot", "save", file.string()},
        _data_dir / "snapshot-save.log", std::chrono::seconds(30));
}

std::string etcd_process::restore(const fs::path& file) {
    if (running()) {
        return "restore(): etcd still runs";
    }
    std::error_code ec;
    fs::remove_all(_data_dir / "member", ec);
    // etcd 3.5 moved restore to etcdutl (etcdctl's still works there, deprecated); 3.4 has only
    // etcdctl's.
    auto tool = etcd_tool("etcdutl");
    std::vector<std::string> args = {"/usr/bin/env", "ETCDCTL_API=3"};
    args.push_back(tool == "etcdutl" ? etcd_tool("etcdctl") : tool);
    const std::string peer_url = "http://127.0.0.1:" + std::to_string(_peer_port);
    args.insert(args.end(), {"snapshot", "restore", file.string(), "--name=spool-test",
                             "--data-dir=" + (_data_dir / "member").string(),
                             "--initial-cluster=spool-test=" + peer_url,
                             "--initial-advertise-peer-urls=" + peer_url});
    auto err =
        run_tool(std::move(args), _data_dir / "snapshot-restore.log", std::chrono::seconds(30));
    if (err.empty()) {
        _server_id.clear();  // a restored member serves under a new id
    }
    return err;
}

std::string etcd_process::log_text() const {
    return read_text_file(_data_dir / "etcd.log");
}

}  // namespace spool::tests
