#pragma once

// One watch: a POST /v3/watch whose response never ends. etcd's gateway streams one JSON
// object per line inside a chunked body ({"result":{...}} or {"error":{...}}); next() reads
// until a whole line is there and decodes it. Nothing polls: next() waits on the socket.
//
// open() returns once etcd confirmed the watch ("created"), within the request timeout, so a
// change made after open() returns is seen. A start revision etcd has compacted shows as the
// first next() failing with errc::compacted (compact_revision() > 0). Once next() failed, every
// later next() fails the same way (the watch is over; the caller opens a new one).
//
// Bounds: a single line longer than max_body_bytes -> errc::bad_response.
// Lifecycle: owns its connection; may outlive the client object only to report errc::cancelled.
// Threading: the client's executor only.

#include "broker/etcd/client.h"
#include "broker/etcd/gateway.h"
#include "broker/etcd/http_connection.h"

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <memory>
#include <string>

namespace spool::broker::etcd {

class gateway_watch final : public watch_stream {
public:
    static boost::asio::awaitable<result<std::unique_ptr<watch_stream>>> open(
        gateway& via, std::string key, std::string range_end, int64_t start_revision);

    explicit gateway_watch(std::unique_ptr<http_connection> conn) : _conn(std::move(conn)) {}

    boost::asio::awaitable<result<watch_batch>> next() override;
    int64_t compact_revision() const override { return _compact_revision; }
    void cancel() override;

private:
    std::unique_ptr<http_connection> _conn;
    boost::beast::http::response_parser<boost::beast::http::buffer_body> _parser;
    std::string _pending;  // body bytes received and not yet decoded (a partial line at most)
    size_t _scanned = 0;   // _pending[0, _scanned) holds no newline
    int64_t _compact_revision = 0;
    bool _cancelled = false;
    std::error_code _failed;  // sticky: the watch is over

    // Starts the exchange: sends the create request and reads the response header.
    boost::asio::awaitable<std::error_code> start(std::string body,
                                                  std::chrono::milliseconds timeout);
    // The next line of the stream (without its newline), waiting for it.
    boost::asio::awaitable<result<std::string>> read_line();
    std::error_code fail(std::error_code ec);
};

}  // namespace spool::broker::etcd
