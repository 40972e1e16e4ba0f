#pragma once

// The control of a hostile-client test: a trivial server on 127.0.0.1 that accepts every
// connection and reads and discards every byte, on one thread of the test process. Aiming the
// same hostile load at it instead of the broker shows what the load costs the machine (the
// client threads, the kernel's loopback work in the sender's context, the reads) apart from
// what the broker does with it: a well-behaved client's latency to the broker measured
// meanwhile is the floor any server would see on this machine. `readers` bounds how many
// connections it reads at once (the others wait unread, as the broker's byte budget holds back
// connections beyond one large frame per shard); a connection closing lets the next one in.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace spool::tests::hostile {

class read_only_sink {
public:
    explicit read_only_sink(size_t readers = SIZE_MAX) : _readers(readers) {
        _listen = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
        ::listen(_listen, 1024);
        socklen_t len = sizeof addr;
        ::getsockname(_listen, reinterpret_cast<sockaddr*>(&addr), &len);
        _port = ntohs(addr.sin_port);
        _epoll = ::epoll_create1(0);
        _wake = ::eventfd(0, EFD_NONBLOCK);
        add(_listen);
        add(_wake);
        _thread = std::thread([this] { run(); });
    }
    ~read_only_sink() {
        uint64_t one = 1;
        (void)::write(_wake, &one, sizeof one);
        _thread.join();
        for (int fd : _open) {
            ::close(fd);
        }
        ::close(_wake);
        ::close(_epoll);
        ::close(_listen);
    }
    read_only_sink(const read_only_sink&) = delete;
    read_only_sink& operator=(const read_only_sink&) = delete;

    uint16_t port() const { return _port; }
    uint64_t bytes_read() const { return _bytes; }

private:
    void add(int fd) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        ::epoll_ctl(_epoll, EPOLL_CTL_ADD, fd, &ev);
    }
    void run() {
        std::vector<uint8_t> buf(256 * 1024);
        epoll_event events[64];
        for (;;) {
            int n = ::epoll_wait(_epoll, events, 64, -1);
            for (int i = 0; i < n; ++i) {
                int fd = events[i].data.fd;
                if (fd == _wake) {
                    return;
                }
                if (fd == _listen) {
                    for (int c; (c = ::accept4(_listen, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;) {
                        _open.push_back(c);
                        if (_reading < _readers) {
                            add(c);
                            ++_reading;
                        }
                    }
                    continue;
                }
                ssize_t r = ::read(fd, buf.data(), buf.size());
                if (r > 0) {
                    _bytes += static_cast<uint64_t>(r);
                } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                    ::epoll_ctl(_epoll, EPOLL_CTL_DEL, fd, nullptr);
                    auto at = std::find(_open.begin(), _open.end(), fd);
                    size_t index = size_t(at - _open.begin());
                    _open.erase(at);
                    ::close(fd);
                    // The first `_readers` of _open are the ones being read: let the next in.
                    if (index < _reading && _open.size() >= _reading) {
                        add(_open[_reading - 1]);
                    } else if (index < _reading) {
                        --_reading;
                    }
                }
            }
        }
    }

    size_t _readers;
    size_t _reading = 0;  // the first _reading connections of _open are being read
    int _listen = -1;
    int _epoll = -1;
    int _wake = -1;
    uint16_t _port = 0;
    std::atomic<uint64_t> _bytes{0};
    std::vector<int> _open;
    std::thread _thread;
};

}  // namespace spool::tests::hostile
