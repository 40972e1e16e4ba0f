#pragma once

// Plain POSIX sockets for hostile clients: many at once, non-blocking sends that never stall
// the test, and an abortive close (RST) on demand.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace spool::tests::hostile {

class raw_socket {
public:
    // Connects (blocking) to 127.0.0.1:port; valid() is false when that failed.
    explicit raw_socket(uint16_t port) {
        _fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons(port);
        if (::connect(_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            ::close(_fd);
            _fd = -1;
        }
    }
    ~raw_socket() { close(); }
    raw_socket(raw_socket&& o) noexcept : _fd(o._fd) { o._fd = -1; }
    raw_socket(const raw_socket&) = delete;
    raw_socket& operator=(const raw_socket&) = delete;

    [[nodiscard]] bool valid() const { return _fd >= 0; }
    [[nodiscard]] int fd() const { return _fd; }

    void set_non_blocking() { ::fcntl(_fd, F_SETFL, ::fcntl(_fd, F_GETFL) | O_NONBLOCK); }

    // Sends what the socket takes now (non-blocking) or all of it (blocking); bytes sent.
    size_t send(const uint8_t* data, size_t n) {
        size_t sent = 0;
        while (sent < n) {
            ssize_t r = ::send(_fd, data + sent, n - sent, MSG_NOSIGNAL);
            if (r <= 0) {
                break;
            }
            sent += static_cast<size_t>(r);
        }
        return sent;
    }
    size_t send(const std::vector<uint8_t>& b) { return send(b.data(), b.size()); }

    // True when the peer closed (EOF or reset) within `ms`.
    bool closed_by_peer(int ms) {
        pollfd p{_fd, POLLIN, 0};
        if (::poll(&p, 1, ms) <= 0) {
            return false;
        }
        uint8_t b;
        ssize_t r = ::recv(_fd, &b, 1, MSG_DONTWAIT);
        return r == 0 || (r < 0 && errno == ECONNRESET);
    }
    // True when a response (any byte) arrives within `ms`.
    bool readable_within(int ms) {
        pollfd p{_fd, POLLIN, 0};
        return ::poll(&p, 1, ms) > 0 && (p.revents & POLLIN) != 0;
    }

    // Closes with RST instead of FIN (SO_LINGER 0): the abrupt end of a crashed client.
    void reset() {
        linger l{1, 0};
        ::setsockopt(_fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        close();
    }
    void close() {
        if (_fd >= 0) {
            ::close(_fd);
            _fd = -1;
        }
    }

private:
    int _fd = -1;
};

inline std::vector<uint8_t> be32(uint32_t v) {
    return {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
}

}  // namespace spool::tests::hostile
