#include "broker/net/stream.h"

#include "common/log.h"
#include "common/tls/peer_subject.h"

#include <openssl/ssl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace spool::broker::net {

namespace asio = boost::asio;

namespace {
// File bytes copied through user space at a time over TLS: a few TLS records' worth, small
// enough that a connection never holds much.
constexpr size_t copy_chunk_bytes = 256 * 1024;
}  // namespace

stream::stream(tcp::socket socket, std::shared_ptr<asio::ssl::context> tls)
    : _socket(std::move(socket)), _context(std::move(tls)) {
    if (_context) {
        _tls = std::make_unique<asio::ssl::stream<tcp::socket&>>(_socket, *_context);
    }
}

asio::awaitable<void> stream::handshake(error_code& ec) {
    if (!_tls) {
        co_return;
    }
    co_await _tls->async_handshake(asio::ssl::stream_base::server,
                                   asio::redirect_error(asio::use_awaitable, ec));
}

std::optional<std::string> stream::peer_subject() const {
    if (!_tls) {
        return std::nullopt;
    }
    return spool::tls::peer_subject(_tls->native_handle());
}

asio::awaitable<bool> stream::write_file(const file_slice& slice, uint64_t conn_id) {
    return _tls ? copy_file(slice, conn_id) : sendfile(slice, conn_id);
}

asio::awaitable<bool> stream::sendfile(const file_slice& slice, uint64_t conn_id) {
    off_t offset = static_cast<off_t>(slice.offset);
    size_t left = slice.length;
    while (left > 0) {
        ssize_t n = ::sendfile(_socket.native_handle(), slice.file->fd(), &offset, left);
        if (n > 0) {
            left -= static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            error_code ec;
            co_await _socket.async_wait(tcp::socket::wait_write,
                                        asio::redirect_error(asio::use_awaitable, ec));
            if (ec) {
                co_return false;
            }
            continue;
        }
        // n == 0: the file is shorter than the slice (truncated underneath us). The size prefix
        // already promised these bytes, so the stream cannot be repaired: close.
        log::get("net")->warn("connection {}: sendfile failed ({}), closing", conn_id,
                              n == 0 ? "file shorter than slice" : std::strerror(errno));
        co_return false;
    }
    co_return true;
}

asio::awaitable<bool> stream::copy_file(const file_slice& slice, uint64_t conn_id) {
    std::vector<uint8_t> chunk(std::min<size_t>(copy_chunk_bytes, slice.length));
    off_t offset = static_cast<off_t>(slice.offset);
    size_t left = slice.length;
    while (left > 0) {
        size_t want = std::min(left, chunk.size());
        ssize_t n = ::pread(slice.file->fd(), chunk.data(), want, offset);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            log::get("net")->warn("connection {}: reading a file slice failed ({}), closing",
                                  conn_id,
                                  n == 0 ? "file shorter than slice" : std::strerror(errno));
            co_return false;
        }
        error_code ec;
        co_await asio::async_write(*_tls, asio::buffer(chunk.data(), static_cast<size_t>(n)),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            co_return false;
        }
        offset += n;
        left -= static_cast<size_t>(n);
    }
    co_return true;
}

}  // namespace spool::broker::net
