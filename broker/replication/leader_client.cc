#include "broker/replication/leader_client.h"

#include "broker/security/tls_peer.h"
#include "common/log.h"
#include "protocol/messages/api_versions.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>

namespace spool::broker::replication {

namespace asio = boost::asio;
namespace beast = boost::beast;
using boost::system::error_code;
using tcp = asio::ip::tcp;

struct leader_client::pending_lookup {
    explicit pending_lookup(asio::any_io_executor ex) : resolver(std::move(ex)) {}
    tcp::resolver resolver;
    bool timed_out = false;
};

leader_client::leader_client(asio::any_io_executor ex, leader_client_options options)
    : _options(options),
      _client_id("spool-replica-" + std::to_string(options.self)),
      _stream(std::move(ex)) {}

leader_client::~leader_client() {
    close();
}

void leader_client::close() {
    _closed_by_us = true;
    if (auto lookup = _lookup.lock()) {
        lookup->resolver.cancel();
    }
    error_code ignored;
    _stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    _stream.close();
    // _tls stays until the next connect: an operation close() aborted may still be finishing
    // on it.
    _versions.clear();
    _reauthenticate_at.reset();
}

bool leader_client::supports(protocol::api_key key, int16_t version) const {
    auto it = _versions.find(static_cast<int16_t>(key));
    return it != _versions.end() && version >= it->second.first && version <= it->second.second;
}

std::error_code leader_client::fail(const error_code& ec) {
    const bool ours = _closed_by_us;
    close();
    if (ours || ec == asio::error::operation_aborted) {
        return make_error_code(client_errc::stopped);
    }
    if (ec == beast::error::timeout) {
        return make_error_code(client_errc::timed_out);
    }
    return make_error_code(client_errc::connection_lost);
}

asio::awaitable<std::error_code> leader_client::connect(leader_endpoint where) {
    close();
    _closed_by_us = false;
    _where = std::move(where);
    if (auto ec = co_await open_socket(_options.connect_timeout)) {
        co_return ec;
    }
    if (auto ec = co_await start_tls()) {
        co_return ec;
    }
    if (auto ec = co_await negotiate()) {
        co_return ec;
    }
    co_return co_await authenticate();
}

asio::awaitable<std::error_code> leader_client::start_tls() {
    if (!_options.security.tls) {
        co_return std::error_code{};
    }
    _tls.reset();
    _tls_context = _options.security.tls();
    if (!_tls_context) {
        close();
        co_return make_error_code(client_errc::tls_failed);
    }
    _tls = std::make_unique<asio::ssl::stream<beast::tcp_stream&>>(_stream, *_tls_context);
    SSL* ssl = _tls->native_handle();
    security::expect_peer_name(ssl, _where.host, _options.security.verify_host);
    error_code ec;
    _stream.expires_after(_options.connect_timeout);
    co_await _tls->async_handshake(asio::ssl::stream_base::client,
                                   asio::redirect_error(asio::use_awaitable, ec));
    _stream.expires_never();
    if (ec) {
        const auto why = security::handshake_failure(ssl, ec);
        const bool ours = _closed_by_us;
        auto mapped = fail(ec);
        if (ours || mapped == client_errc::stopped) {
            co_return mapped;
        }
        log::get("replication")
            ->warn("TLS handshake with leader {}:{} failed: {}", _where.host, _where.port, why);
        co_return make_error_code(client_errc::tls_failed);
    }
    co_return std::error_code{};
}

asio::awaitable<void> leader_client::write_all(asio::const_buffer b, error_code& ec) {
    auto token = asio::redirect_error(asio::use_awaitable, ec);
    if (_tls) {
        co_await asio::async_write(*_tls, b, token);
    } else {
        co_await asio::async_write(_stream, b, token);
    }
}

asio::awaitable<void> leader_client::read_all(asio::mutable_buffer b, error_code& ec) {
    auto token = asio::redirect_error(asio::use_awaitable, ec);
    if (_tls) {
        co_await asio::async_read(*_tls, b, token);
    } else {
        co_await asio::async_read(_stream, b, token);
    }
}

asio::awaitable<std::error_code> leader_client::open_socket(std::chrono::milliseconds timeout) {
    error_code ec;
    _stream.expires_after(timeout);
    auto address = asio::ip::make_address(_where.host, ec);
    if (!ec) {
        co_await _stream.async_connect(tcp::endpoint(address, _where.port),
                                       asio::redirect_error(asio::use_awaitable, ec));
    } else {
        // A host name (a Kubernetes pod's DNS name): the stream's expiry does not bound the
        // resolver, a timer does, and close() cancels it too.
        auto lookup = std::make_shared<pending_lookup>(_stream.get_executor());
        _lookup = lookup;
        asio::steady_timer deadline(_stream.get_executor(), timeout);
        deadline.async_wait([lookup](const error_code& e) {
            if (!e) {
                lookup->timed_out = true;
                lookup->resolver.cancel();
            }
        });
        ec = {};
        auto results =
            co_await lookup->resolver.async_resolve(_where.host, std::to_string(_where.port),
                                                    asio::redirect_error(asio::use_awaitable, ec));
        deadline.cancel();
        if (!ec && !lookup->timed_out && !_closed_by_us) {
            co_await _stream.async_connect(results, asio::redirect_error(asio::use_awaitable, ec));
        } else if (!ec) {
            ec = asio::error::operation_aborted;
        }
    }
    _stream.expires_never();
    if (ec) {
        auto mapped = fail(ec);
        // Nothing listening and nothing answering in time are the same to the fetcher.
        co_return mapped == client_errc::stopped ? mapped
                                                 : make_error_code(client_errc::unreachable);
    }
    _stream.socket().set_option(tcp::no_delay(true), ec);
    co_return std::error_code{};
}

asio::awaitable<std::error_code> leader_client::negotiate() {
    protocol::api_versions_request req;
    const int32_t correlation = ++_correlation;
    auto frame = co_await exchange(protocol::encode_request(correlation, _client_id, 0, req),
                                   _options.connect_timeout);
    if (!frame) {
        co_return frame.error();
    }
    protocol::api_versions_response resp;
    if (auto ec = decode_body(protocol::api_key::api_versions, 0, correlation, frame.value(),
                              [&resp](protocol::wire::reader& r) { return resp.decode(r, 0); })) {
        co_return ec;
    }
    if (resp.error_code != 0 || resp.api_keys.empty()) {
        log::get("replication")
            ->warn("leader {}:{} answered ApiVersions with error {}", _where.host, _where.port,
                   resp.error_code);
        close();
        co_return make_error_code(client_errc::unsupported_version);
    }
    for (const auto& k : resp.api_keys) {
        _versions[k.api_key] = {k.min_version, k.max_version};
    }
    co_return std::error_code{};
}

asio::awaitable<result<std::vector<uint8_t>>> leader_client::exchange(
    std::vector<uint8_t> request, std::chrono::milliseconds timeout) {
    if (!_stream.socket().is_open()) {
        co_return make_error_code(client_errc::connection_lost);
    }
    error_code ec;
    _stream.expires_after(timeout);
    co_await write_all(asio::buffer(request), ec);
    if (ec) {
        co_return fail(ec);
    }
    uint8_t size_bytes[4];
    co_await read_all(asio::buffer(size_bytes), ec);
    if (ec) {
        co_return fail(ec);
    }
    const uint32_t size = (uint32_t{size_bytes[0]} << 24) | (uint32_t{size_bytes[1]} << 16) |
                          (uint32_t{size_bytes[2]} << 8) | uint32_t{size_bytes[3]};
    if (size > _options.max_response_bytes) {
        log::get("replication")
            ->warn("leader {}:{} sent a {} byte response (bound {}): dropping the connection",
                   _where.host, _where.port, size, _options.max_response_bytes);
        close();
        co_return make_error_code(client_errc::response_too_large);
    }
    std::vector<uint8_t> frame(size);
    co_await read_all(asio::buffer(frame), ec);
    if (ec) {
        co_return fail(ec);
    }
    _stream.expires_never();
    co_return frame;
}

std::error_code leader_client::decode_body(
    protocol::api_key key, int16_t version, int32_t correlation, std::span<const uint8_t> frame,
    const std::function<bool(protocol::wire::reader&)>& decode) {
    protocol::wire::reader r(frame);
    protocol::response_header header;
    if (!header.decode(r, protocol::response_header_version(key, version)) ||
        header.correlation_id != correlation || !decode(r)) {
        log::get("replication")
            ->warn("leader {}:{} sent a malformed {} v{} response: dropping the connection",
                   _where.host, _where.port, protocol::api_name(key), version);
        close();
        return make_error_code(client_errc::malformed_response);
    }
    return {};
}

}  // namespace spool::broker::replication
