#pragma once

// A TCP proxy in the test process between one broker and etcd, so that one broker alone can be
// cut off from etcd while the others and etcd run on (the nemesis suite, issue #31). The broker
// is started with --override etcd.endpoints=<endpoint()> (cluster_options::per_broker_overrides).
//
//   pass       bytes flow both ways; a new connection is connected to etcd at once
//   refuse     the listening socket is closed (connects are refused: ECONNREFUSED) and every
//              open connection is reset (RST): an etcd that is gone for this broker only
//   blackhole  connections are accepted but nothing flows either way (the bytes wait in the
//              sockets' buffers): a network partition, where requests time out instead of
//              failing. Back to pass, the held bytes flow on (the partition healed) and held
//              new connections are connected to etcd then.
//
// Lifecycle: construct (binds a free port), start(upstream port) (spawns the thread), set_mode at
// will, destroy (stops the thread, closes everything). Threading: set_mode/mode from any thread;
// the connections belong to the proxy's own thread.

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace spool::tests::nemesis {

class etcd_proxy {
public:
    enum class mode { pass, refuse, blackhole };

    etcd_proxy();
    ~etcd_proxy();
    etcd_proxy(const etcd_proxy&) = delete;
    etcd_proxy& operator=(const etcd_proxy&) = delete;

    void start(uint16_t upstream_port);
    void set_mode(mode m);
    mode current_mode() const { return _mode.load(); }
    uint16_t port() const { return _port; }
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(_port); }
    // Connections accepted so far (every mode), for the figures.
    uint64_t accepted() const { return _accepted.load(); }

private:
    void run();

    uint16_t _port = 0;
    uint16_t _upstream = 0;
    int _listen = -1;
    int _wake[2] = {-1, -1};
    std::atomic<mode> _mode{mode::pass};
    std::atomic<bool> _stop{false};
    std::atomic<uint64_t> _accepted{0};
    std::thread _thread;
};

const char* to_string(etcd_proxy::mode m);

}  // namespace spool::tests::nemesis
