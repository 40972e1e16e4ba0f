#pragma once

// Runs a real etcd (single member) for a test: its own data directory, free client and peer
// ports on 127.0.0.1, stderr captured to a log file. start() returns once GET /health answers
// {"health":"true"}; stop() sends SIGTERM and waits; kill9() loses whatever etcd had not synced;
// pause()/resume() freeze and thaw the process (SIGSTOP/SIGCONT) to simulate a hung peer. A
// later start() reuses the same data directory and ports, so clients reconnect to the same
// endpoint and see the same keys.
//
// TLS mode (use_tls() before the first start): the client URL is https with etcd's
// --cert-file/--key-file, and with a CA also --trusted-ca-file --client-cert-auth (clients must
// present a certificate that CA signed). Health and the member id are then read over a plain
// metrics listener of its own (--listen-metrics-urls), so the harness needs no TLS client.
//
// The binary is $SPOOL_ETCD_BIN when set, else the etcd CMake found (SPOOL_ETCD_BIN define).
//
// Lifecycle: one process per start()/stop() pair; the destructor kills a process still running
// (resuming it first if paused) and removes a temporary data directory.
// Threading: test thread only.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace spool::tests {

class etcd_process {
public:
    // data_dir empty: a new temporary directory, removed by the destructor.
    explicit etcd_process(std::filesystem::path data_dir = {});
    ~etcd_process();
    etcd_process(const etcd_process&) = delete;
    etcd_process& operator=(const etcd_process&) = delete;

    // Starts etcd and waits (bounded by timeout) until it reports healthy. False when it exited
    // or did not become healthy in time (the process is killed then; see log_text()).
    bool start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    // SIGTERM and wait; SIGKILL after timeout. True when it exited on its own.
    bool stop(std::chrono::milliseconds timeout = std::chrono::seconds(10));
    void kill9();
    void pause();
    void resume();

    // Backup and restore as docs/securing-a-cluster.md tells operators to: snapshot() saves a
    // consistent copy of every key with `etcdctl snapshot save` (etcd running, plain endpoint);
    // restore() (etcd stopped) replaces the data directory with one `etcdctl snapshot restore`
    // (`etcdutl` where the etcd build has it) makes from such a file. The restored member has
    // a new member and cluster id, which the next start() accepts as this etcd's. Both return
    // an empty string on success, else what the tool printed.
    std::string snapshot(const std::filesystem::path& file);
    std::string restore(const std::filesystem::path& file);

    // TLS for the client URL: the server certificate and key (PEM; the certificate must name
    // 127.0.0.1), and client_ca non-empty: client certificates required, signed by it.
    struct tls_files {
        std::filesystem::path certificate;
        std::filesystem::path key;
        std::filesystem::path client_ca;
    };
    void use_tls(tls_files files) { _tls = std::move(files); }

    // "http://127.0.0.1:<client port>" ("https://" in TLS mode); fixed for the object's lifetime.
    std::string endpoint() const;
    uint16_t client_port() const { return _client_port; }
    uint16_t peer_port() const { return _peer_port; }
    // The running process (-1 when stopped).
    pid_t pid() const { return _pid; }
    bool running();
    const std::filesystem::path& data_dir() const { return _data_dir; }
    std::string log_text() const;

private:
    std::filesystem::path _data_dir;
    bool _own_dir = false;
    bool _paused = false;
    pid_t _pid = -1;
    uint16_t _client_port = 0;
    uint16_t _peer_port = 0;
    uint16_t _metrics_port = 0;  // TLS mode: plain /health and /metrics
    std::optional<tls_files> _tls;
    // Where /health and /metrics answer over plain HTTP.
    uint16_t health_port() const { return _tls ? _metrics_port : _client_port; }
    // The member id this etcd served under on its first start: a restart is healthy only when the
    // etcd answering on the port is this one again, not another test's that took the port.
    std::string _server_id;
    void spawn();
};

// True when GET /health on 127.0.0.1:port answers {"health":"true"} within timeout.
bool etcd_healthy(uint16_t port, std::chrono::milliseconds timeout);

}  // namespace spool::tests
