#pragma once

// A blocking raw-socket client for net tests: writes frames, reads size-prefixed responses.

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::net::testing {

class raw_client {
public:
    explicit raw_client(uint16_t port) : _socket(_io) {
        _socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    }

    void send_raw(const std::vector<uint8_t>& bytes) {
        boost::asio::write(_socket, boost::asio::buffer(bytes));
    }
    void send_frame(const std::string& body) {
        std::vector<uint8_t> out = be32(static_cast<int32_t>(body.size()));
        out.insert(out.end(), body.begin(), body.end());
        send_raw(out);
    }
    void send_size(int32_t size) { send_raw(be32(size)); }

    // The next response body, or nullopt when the broker closed the connection.
    std::optional<std::string> read_frame() {
        uint8_t p[4];
        boost::system::error_code ec;
        boost::asio::read(_socket, boost::asio::buffer(p), ec);
        if (ec) {
            return std::nullopt;
        }
        uint32_t n = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
        std::string body(n, '\0');
        boost::asio::read(_socket, boost::asio::buffer(body), ec);
        if (ec) {
            return std::nullopt;
        }
        return body;
    }

    // True when the peer closed (read returns EOF or reset).
    bool closed_by_peer() {
        uint8_t b;
        boost::system::error_code ec;
        _socket.read_some(boost::asio::buffer(&b, 1), ec);
        return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
    }

    void shutdown_send() { _socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send); }

    static std::vector<uint8_t> be32(int32_t v) {
        auto u = static_cast<uint32_t>(v);
        return {uint8_t(u >> 24), uint8_t(u >> 16), uint8_t(u >> 8), uint8_t(u)};
    }

private:
    boost::asio::io_context _io;
    boost::asio::ip::tcp::socket _socket;
};

}  // namespace spool::broker::net::testing
