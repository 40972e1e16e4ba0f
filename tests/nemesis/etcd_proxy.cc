#include "tests/nemesis/etcd_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

namespace spool::tests::nemesis {

namespace {

constexpr size_t max_buffered = 1 << 20;  // per direction: stop reading beyond it

sockaddr_in loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

void set_nonblocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// A listening socket on 127.0.0.1:port (0: any free port); -1 when it cannot bind.
int listen_on(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    auto a = loopback(port);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 128) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Closes with a reset (RST) rather than an orderly FIN: the peer sees ECONNRESET.
void reset(int fd) {
    if (fd < 0) {
        return;
    }
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
}

// A blocking connect on loopback (answers at once: accepted into etcd's backlog even while etcd
// is stopped, refused when it is not running), then non-blocking. -1 when refused.
int connect_upstream(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto a = loopback(port);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    set_nonblocking(fd);
    return fd;
}

struct link {
    int client = -1;
    int upstream = -1;  // -1: held (blackhole) before it was connected
    std::string to_upstream;
    std::string to_client;
    bool upstream_eof = false;
    bool dead = false;
};

// Reads what `from` has into `into`; false on EOF or error.
bool pull(int from, std::string& into) {
    char buf[16384];
    while (into.size() < max_buffered) {
        ssize_t n = ::read(from, buf, sizeof buf);
        if (n > 0) {
            into.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            return true;
        }
        return false;
    }
    return true;
}

// Writes what it can of `from` to `to`; false on error.
bool push(int to, std::string& from) {
    while (!from.empty()) {
        ssize_t n = ::send(to, from.data(), from.size(), MSG_NOSIGNAL);
        if (n > 0) {
            from.erase(0, static_cast<size_t>(n));
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
    return true;
}

}  // namespace

const char* to_string(etcd_proxy::mode m) {
    switch (m) {
        case etcd_proxy::mode::pass:
            return "pass";
        case etcd_proxy::mode::refuse:
            return "refuse";
        case etcd_proxy::mode::blackhole:
            return "blackhole";
    }
    return "?";
}

etcd_proxy::etcd_proxy() {
    _listen = listen_on(0);
    if (_listen < 0) {
        throw std::runtime_error("etcd_proxy: cannot listen on 127.0.0.1");
    }
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(_listen, reinterpret_cast<sockaddr*>(&a), &len);
    _port = ntohs(a.sin_port);
    if (::pipe2(_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        throw std::runtime_error("etcd_proxy: pipe2 failed");
    }
}

etcd_proxy::~etcd_proxy() {
    _stop = true;
    (void)!::write(_wake[1], "x", 1);
    if (_thread.joinable()) {
        _thread.join();
    }
    if (_listen >= 0) {
        ::close(_listen);
    }
    ::close(_wake[0]);
    ::close(_wake[1]);
}

void etcd_proxy::start(uint16_t upstream_port) {
    _upstream = upstream_port;
    _thread = std::thread([this] { run(); });
}

void etcd_proxy::set_mode(mode m) {
    _mode = m;
    (void)!::write(_wake[1], "x", 1);
}

void etcd_proxy::run() {
    std::vector<link> links;
    mode applied = mode::pass;
    auto connect_held = [&] {
        for (auto& l : links) {
            if (!l.dead && l.upstream < 0) {
                l.upstream = connect_upstream(_upstream);
                l.dead = l.upstream < 0;
            }
        }
    };
    while (!_stop.load()) {
        const mode m = _mode.load();
        if (m != applied) {
            if (m == mode::refuse) {
                for (auto& l : links) {
                    l.dead = true;
                }
                if (_listen >= 0) {
                    ::close(_listen);
                    _listen = -1;
                }
            }
            if (m == mode::pass) {
                connect_held();
            }
            applied = m;
        }
        if (m != mode::refuse && _listen < 0) {
            _listen = listen_on(_port);  // again on the same port; retried each round if taken
        }
        // Dead links go now, with a reset on both sides.
        for (auto it = links.begin(); it != links.end();) {
            if (it->dead) {
                reset(it->client);
                reset(it->upstream);
                it = links.erase(it);
            } else {
                ++it;
            }
        }

        std::vector<pollfd> fds;
        fds.push_back({_wake[0], POLLIN, 0});
        fds.push_back({_listen, static_cast<short>(_listen >= 0 ? POLLIN : 0), 0});
        for (const auto& l : links) {
            const bool flowing = m == mode::pass && l.upstream >= 0;
            short ce = 0;
            short ue = 0;
            if (flowing) {
                if (l.to_upstream.size() < max_buffered) {
                    ce |= POLLIN;
                }
                if (!l.to_client.empty()) {
                    ce |= POLLOUT;
                }
                if (!l.upstream_eof && l.to_client.size() < max_buffered) {
                    ue |= POLLIN;
                }
                if (!l.to_upstream.empty()) {
                    ue |= POLLOUT;
                }
            }
            // No events: left out of the poll (-1), else a hang-up would wake it without end.
            fds.push_back({flowing ? l.client : -1, ce, 0});
            fds.push_back({flowing ? l.upstream : -1, ue, 0});
        }
        if (::poll(fds.data(), fds.size(), 200) < 0) {
            continue;
        }
        if (fds[0].revents != 0) {
            char buf[64];
            while (::read(_wake[0], buf, sizeof buf) > 0) {
            }
        }
        for (size_t k = 0; k < links.size(); ++k) {
            auto& l = links[k];
            const auto& cf = fds[2 + 2 * k];
            const auto& uf = fds[3 + 2 * k];
            if (cf.fd < 0) {
                continue;
            }
            if ((cf.revents & (POLLIN | POLLHUP | POLLERR)) && !pull(l.client, l.to_upstream)) {
                l.dead = true;  // the broker closed or reset: so does etcd's side
            }
            if ((uf.revents & (POLLIN | POLLHUP | POLLERR)) && !pull(l.upstream, l.to_client)) {
                l.upstream_eof = true;
            }
            if (!push(l.upstream, l.to_upstream) || !push(l.client, l.to_client)) {
                l.dead = true;
            }
            if (l.upstream_eof && l.to_client.empty()) {
                l.dead = true;  // etcd closed and everything it said was delivered
            }
        }
        if (_listen >= 0 && (fds[1].revents & POLLIN)) {
            while (true) {
                int c = ::accept4(_listen, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (c < 0) {
                    break;
                }
                ++_accepted;
                link l;
                l.client = c;
                if (m == mode::pass) {
                    l.upstream = connect_upstream(_upstream);
                    l.dead = l.upstream < 0;  // etcd not running: the broker sees a reset
                }
                links.push_back(std::move(l));
            }
        }
    }
    for (auto& l : links) {
        reset(l.client);
        reset(l.upstream);
    }
}

}  // namespace spool::tests::nemesis
