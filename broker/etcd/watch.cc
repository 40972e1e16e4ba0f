#include "broker/etcd/watch.h"

#include "broker/etcd/codec.h"
#include "common/log.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/read.hpp>

namespace spool::broker::etcd {

namespace net = boost::asio;
namespace http = boost::beast::http;
using boost::system::error_code;

net::awaitable<result<std::unique_ptr<watch_stream>>> gateway_watch::open(gateway& via,
                                                                          std::string key,
                                                                          std::string range_end,
                                                                          int64_t start_revision) {
    const auto timeout = via.options().request_timeout;
    std::string body = codec::encode_watch_create(key, range_end, start_revision);
    std::error_code last = make_error_code(errc::unavailable);
    // One try per endpoint, like a unary call: an endpoint that accepts the connection but does
    // not confirm the watch in time (a frozen etcd) makes way for the next.
    for (size_t n = 0; n < std::max<size_t>(1, via.options().endpoints.size()); ++n) {
        auto conn = co_await via.connect_any();
        if (!conn) {
            co_return conn.error();
        }
        auto watch = std::make_unique<gateway_watch>(std::move(conn).value());
        if (auto ec = co_await watch->start(body, timeout)) {
            last = ec;
            if (ec == errc::cancelled || ec == errc::bad_response || ec == errc::request_failed) {
                co_return ec;
            }
            via.skip_endpoint(watch->_conn->where());
            continue;
        }
        auto first = co_await watch->read_line();
        if (!first) {
            last = first.error();
            if (last == errc::cancelled || last == errc::bad_response) {
                co_return last;
            }
            via.skip_endpoint(watch->_conn->where());
            continue;
        }
        auto msg = codec::decode_watch_message(first.value());
        if (!msg) {
            co_return msg.error();
        }
        switch (msg.value().what) {
            case codec::watch_message::kind::created:
                break;
            case codec::watch_message::kind::canceled:
                watch->_compact_revision = msg.value().compact_revision;
                watch->fail(msg.value().error);
                break;
            case codec::watch_message::kind::error:
                if (msg.value().error != errc::compacted) {
                    last = msg.value().error;
                    via.skip_endpoint(watch->_conn->where());
                    continue;
                }
                watch->fail(msg.value().error);
                break;
            case codec::watch_message::kind::batch:
                co_return make_error_code(errc::bad_response);  // events before "created"
        }
        // Confirmed: from now on the stream may stay silent for as long as nothing changes.
        watch->_conn->stream().expires_never();
        co_return std::unique_ptr<watch_stream>(std::move(watch));
    }
    co_return last;
}

std::error_code gateway_watch::fail(std::error_code ec) {
    if (!_failed) {
        _failed = ec;
    }
    _conn->close();
    return _failed;
}

void gateway_watch::cancel() {
    _cancelled = true;
    fail(make_error_code(errc::cancelled));
}

net::awaitable<std::error_code> gateway_watch::start(std::string body,
                                                     std::chrono::milliseconds timeout) {
    if (auto ec = co_await _conn->send("/v3/watch", std::move(body), timeout)) {
        co_return fail(ec);
    }
    // The stream has no end: bound each line instead of the body (read_line).
    _parser.body_limit(boost::none);
    error_code ec;
    co_await _conn->read_header(_parser, ec);
    if (ec) {
        co_return fail(_cancelled ? make_error_code(errc::cancelled) : _conn->classify(ec));
    }
    unsigned status = _parser.get().result_int();
    if (status != 200) {
        log::get("etcd")->warn("etcd {} refused a watch: HTTP {}", _conn->where().url, status);
        co_return fail(codec::decode_error(status, {}));
    }
    co_return std::error_code{};
}

net::awaitable<result<std::string>> gateway_watch::read_line() {
    char chunk[16 * 1024];
    for (;;) {
        auto newline = _pending.find('\n', _scanned);
        if (newline != std::string::npos) {
            std::string line = _pending.substr(0, newline);
            _pending.erase(0, newline + 1);
            _scanned = 0;
            if (line.find_first_not_of(" \t\r") == std::string::npos) {
                continue;  // a blank separator
            }
            co_return line;
        }
        _scanned = _pending.size();
        if (_pending.size() > max_body_bytes) {
            co_return fail(make_error_code(errc::bad_response));
        }
        if (_failed) {
            co_return _failed;
        }
        if (_parser.is_done()) {
            // etcd ended the response: the watch is gone (etcd shutting down).
            co_return fail(make_error_code(errc::unavailable));
        }
        auto& body = _parser.get().body();
        body.data = chunk;
        body.size = sizeof chunk;
        error_code ec;
        co_await _conn->read_some(_parser, ec);
        if (ec == http::error::need_buffer) {
            ec = {};
        }
        _pending.append(chunk, sizeof chunk - body.size);
        if (ec) {
            co_return fail(_cancelled ? make_error_code(errc::cancelled) : _conn->classify(ec));
        }
    }
}

net::awaitable<result<watch_batch>> gateway_watch::next() {
    for (;;) {
        if (_failed) {
            co_return _failed;
        }
        auto line = co_await read_line();
        if (!line) {
            co_return line.error();
        }
        auto msg = codec::decode_watch_message(line.value());
        if (!msg) {
            log::get("etcd")->warn("etcd {} sent an undecodable watch message ({} bytes)",
                                   _conn->where().url, line.value().size());
            co_return fail(msg.error());
        }
        switch (msg.value().what) {
            case codec::watch_message::kind::batch:
                co_return std::move(msg.value().batch);
            case codec::watch_message::kind::created:
                continue;
            case codec::watch_message::kind::canceled:
                _compact_revision = msg.value().compact_revision;
                co_return fail(msg.value().error);
            case codec::watch_message::kind::error:
                log::get("etcd")->info("etcd {} ended a watch: {}", _conn->where().url,
                                       msg.value().reason);
                co_return fail(msg.value().error);
        }
    }
}

}  // namespace spool::broker::etcd
