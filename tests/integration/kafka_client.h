#pragma once

// A minimal blocking Kafka client for integration tests: raw socket, requests encoded with the
// protocol library's codecs, responses decoded with them. Also sends arbitrary bytes, so tests
// can feed the broker malformed frames.

#include "protocol/api/framing.h"
#include "protocol/messages/headers.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <poll.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace spool::tests {

class kafka_client {
public:
    explicit kafka_client(uint16_t port) : _socket(_io) {
        _socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    }

    // read_frame() gives up (nullopt) when no response starts within this long, so a test
    // waiting for an answer that never comes fails instead of hanging. Zero: wait forever.
    void set_read_timeout(std::chrono::milliseconds t) { _timeout = t; }

    void send_raw(const std::vector<uint8_t>& bytes) {
        boost::asio::write(_socket, boost::asio::buffer(bytes));
    }

    template <class Request>
    void send(int16_t version, const Request& req) {
        send_raw(protocol::encode_request(++_correlation, "spool-it", version, req));
    }

    // The next response frame's body (after the size prefix), or nullopt when the broker closed.
    std::optional<std::vector<uint8_t>> read_frame() {
        if (_timeout.count() > 0) {
            pollfd p{_socket.native_handle(), POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(_timeout.count())) <= 0) {
                return std::nullopt;
            }
        }
        uint8_t p[4];
        boost::system::error_code ec;
        boost::asio::read(_socket, boost::asio::buffer(p), ec);
        if (ec) {
            return std::nullopt;
        }
        uint32_t n = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
        std::vector<uint8_t> body(n);
        boost::asio::read(_socket, boost::asio::buffer(body), ec);
        if (ec) {
            return std::nullopt;
        }
        return body;
    }

    // Reads and decodes the response to the last request of type Response::api at `version`.
    template <class Response>
    std::optional<Response> receive(int16_t version, int16_t decode_version = -1) {
        auto frame = read_frame();
        if (!frame) {
            return std::nullopt;
        }
        // Decoded records fields view the frame: keep it until the next receive.
        _last_frame = std::move(*frame);
        protocol::wire::reader r(_last_frame);
        protocol::response_header h;
        if (!h.decode(r, protocol::response_header_version(Response::api, version))) {
            return std::nullopt;
        }
        last_correlation = h.correlation_id;
        Response resp;
        if (!resp.decode(r, decode_version >= 0 ? decode_version : version)) {
            return std::nullopt;
        }
        return resp;
    }

    template <class Request, class Response>
    std::optional<Response> call(int16_t version, const Request& req) {
        send(version, req);
        return receive<Response>(version);
    }

    // True when the broker closed the connection (EOF or reset) within the socket's timeout.
    bool closed_by_peer() {
        uint8_t b;
        boost::system::error_code ec;
        _socket.read_some(boost::asio::buffer(&b, 1), ec);
        return ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset;
    }

    int32_t last_correlation = -1;

private:
    boost::asio::io_context _io;
    boost::asio::ip::tcp::socket _socket;
    int32_t _correlation = 0;
    std::vector<uint8_t> _last_frame;
    std::chrono::milliseconds _timeout{0};
};

}  // namespace spool::tests
