#include "broker/etcd/gateway.h"

#include "broker/etcd/codec.h"
#include "common/log.h"

namespace spool::broker::etcd {

namespace net = boost::asio;

gateway::gateway(net::any_io_executor ex, client_options options)
    : _ex(std::move(ex)), _options(std::move(options)) {
    for (const auto& url : _options.endpoints) {
        auto parsed = parse_endpoint(url);
        if (parsed) {
            _endpoints.push_back(std::move(parsed).value());
        } else {
            // Validated by the config layer before; a bad one here is skipped, not fatal.
            log::get("etcd")->error("etcd endpoint '{}' is not http(s)://host:port; ignored", url);
        }
    }
    _idle.resize(_endpoints.size());
}

void gateway::cancel() {
    _cancel->cancel_all();
    _idle.clear();
    _idle.resize(_endpoints.size());
}

void gateway::skip_endpoint(const endpoint& failed) {
    if (!_endpoints.empty() && _endpoints[_current].url == failed.url) {
        _current = (_current + 1) % _endpoints.size();
    }
}

void gateway::give_back(size_t index, std::unique_ptr<http_connection> conn) {
    if (conn->is_open() && !_cancel->cancelled() && _idle[index].size() < max_idle_per_endpoint) {
        _idle[index].push_back(std::move(conn));
    }
}

net::awaitable<result<std::unique_ptr<http_connection>>> gateway::connect_to(size_t index) {
    std::shared_ptr<net::ssl::context> tls;
    if (_endpoints[index].tls && _options.tls) {
        tls = _options.tls();
    }
    auto conn = std::make_unique<http_connection>(_ex, _endpoints[index], _cancel, std::move(tls));
    if (auto ec = co_await conn->connect(_options.connect_timeout)) {
        co_return ec;
    }
    co_return std::move(conn);
}

net::awaitable<result<http_response>> gateway::attempt(size_t index, std::string_view path,
                                                       const std::string& body) {
    while (!_idle[index].empty()) {
        auto conn = std::move(_idle[index].back());
        _idle[index].pop_back();
        if (!conn->idle_and_alive()) {
            continue;  // etcd closed it while idle (restarted): never send into it
        }
        auto res = co_await conn->post(path, body, _options.request_timeout);
        if (res) {
            give_back(index, std::move(conn));
            co_return res;
        }
        if (res.error() != errc::unavailable) {
            co_return res.error();
        }
        // It died between the check and the answer (closed just then): try a fresh one. A write
        // may then reach etcd twice; the callers' writes are CAS txns or idempotent puts.
    }
    auto conn = co_await connect_to(index);
    if (!conn) {
        co_return conn.error();
    }
    auto res = co_await conn.value()->post(path, body, _options.request_timeout);
    if (res) {
        give_back(index, std::move(conn).value());
    }
    co_return res;
}

net::awaitable<result<std::string>> gateway::call(std::string_view path, std::string body) {
    if (_cancel->cancelled()) {
        co_return make_error_code(errc::cancelled);
    }
    bool some_timed_out = false;
    const size_t first = _current;
    for (size_t n = 0; n < _endpoints.size(); ++n) {
        size_t index = (first + n) % _endpoints.size();
        auto res = co_await attempt(index, path, body);
        std::error_code ec;
        if (res) {
            if (res.value().status == 200) {
                _current = index;
                co_return std::move(res.value().body);
            }
            ec = codec::decode_error(res.value().status, res.value().body);
            if (ec != errc::unavailable) {
                _current = index;  // it answered: the refusal is the request's, not the endpoint's
                log::get("etcd")->debug("etcd {} {} refused: HTTP {} {}", _endpoints[index].url,
                                        path, res.value().status, res.value().body);
                co_return ec;
            }
        } else {
            ec = res.error();
            if (ec == errc::cancelled || ec == errc::bad_response) {
                co_return ec;
            }
        }
        some_timed_out = some_timed_out || ec == errc::timed_out;
        _current = (index + 1) % _endpoints.size();
    }
    co_return make_error_code(some_timed_out ? errc::timed_out : errc::unavailable);
}

net::awaitable<result<std::unique_ptr<http_connection>>> gateway::connect_any() {
    if (_cancel->cancelled()) {
        co_return make_error_code(errc::cancelled);
    }
    std::error_code last = make_error_code(errc::unavailable);
    const size_t first = _current;
    for (size_t n = 0; n < _endpoints.size(); ++n) {
        size_t index = (first + n) % _endpoints.size();
        auto conn = co_await connect_to(index);
        if (conn) {
            _current = index;
            co_return std::move(conn).value();
        }
        last = conn.error();
        if (last == errc::cancelled) {
            break;
        }
    }
    co_return last;
}

}  // namespace spool::broker::etcd
