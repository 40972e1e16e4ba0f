#pragma once

// The byte stream of one connection: the TCP socket itself (PLAINTEXT, SASL_PLAINTEXT) or TLS
// over it (SSL, SASL_SSL). connection.cc runs one set of read and write loops over either.
//
// Plaintext costs nothing extra: each operation returns the socket's own awaitable (no extra
// coroutine frame) and file slices go out with sendfile(2). Over TLS, file slices are read into
// a buffer and written through the TLS stream (the kernel never sees plaintext it could splice).
//
// One read and one write may be in flight at once (Asio's ssl::stream serialises the TLS
// records underneath). Threading: the connection's shard only; never moved (the TLS stream holds
// a reference to the socket).

#include "broker/runtime/asio.h"
#include "common/file_slice.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

#include <memory>
#include <optional>
#include <string>

namespace spool::broker::net {

class stream {
public:
    using tcp = boost::asio::ip::tcp;
    using error_code = boost::system::error_code;

    // tls: the listener's TLS context (kept alive by the stream); null for plaintext.
    stream(tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> tls);
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    tcp::socket& socket() { return _socket; }
    bool tls() const { return _tls != nullptr; }

    // The TLS server handshake; nothing for plaintext.
    boost::asio::awaitable<void> handshake(error_code& ec);
    // The client's certificate subject as RFC 2253 ("CN=alice,O=Example"); nullopt without TLS or
    // without a client certificate.
    std::optional<std::string> peer_subject() const;

    // Fills `b` completely.
    boost::asio::awaitable<size_t> read(boost::asio::mutable_buffer b, error_code& ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        return _tls ? boost::asio::async_read(*_tls, b, token)
                    : boost::asio::async_read(_socket, b, token);
    }
    template <class MutableBuffers>
    boost::asio::awaitable<size_t> read_some(const MutableBuffers& b, error_code& ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        return _tls ? _tls->async_read_some(b, token) : _socket.async_read_some(b, token);
    }
    boost::asio::awaitable<size_t> write(boost::asio::const_buffer b, error_code& ec) {
        auto token = boost::asio::redirect_error(boost::asio::use_awaitable, ec);
        return _tls ? boost::asio::async_write(*_tls, b, token)
                    : boost::asio::async_write(_socket, b, token);
    }
    // The most plaintext one TLS record carries: what a TLS reader asks for at a time.
    static constexpr size_t tls_record_bytes = 16 * 1024;
    // Writes a file slice; false when the connection must close (logged with conn_id).
    boost::asio::awaitable<bool> write_file(const file_slice& slice, uint64_t conn_id);

private:
    boost::asio::awaitable<bool> sendfile(const file_slice& slice, uint64_t conn_id);
    boost::asio::awaitable<bool> copy_file(const file_slice& slice, uint64_t conn_id);

    tcp::socket _socket;
    std::shared_ptr<boost::asio::ssl::context> _context;
    std::unique_ptr<boost::asio::ssl::stream<tcp::socket&>> _tls;
};

}  // namespace spool::broker::net
