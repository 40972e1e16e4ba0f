#include "broker/net/server.h"

#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <future>
#include <thread>

namespace spool::broker::net {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

server::server(runtime::shard_pool& pool, request_dispatcher& dispatcher, probe& probe,
               server_options options)
    : _pool(pool),
      _dispatcher(dispatcher),
      _probe(probe),
      _options(std::move(options)),
      _quotas(std::make_shared<connection_quotas>(_options.max_connections,
                                                  _options.max_connections_per_ip)),
      _slot_freed(std::make_unique<runtime::async_event>(_pool.context(0).get_executor())) {
    size_t per_shard = 0;
    if (_options.queued_max_request_bytes > 0) {
        per_shard = std::max<size_t>(
            1, static_cast<size_t>(_options.queued_max_request_bytes) / _pool.shard_count());
    }
    for (size_t i = 0; i < _pool.shard_count(); ++i) {
        _shards.push_back(
            std::make_shared<shard_state>(per_shard, _pool.context(i).get_executor()));
    }
    _quotas->set_on_slot_freed([this] { _pool.post(0, [this] { _slot_freed->notify(); }); });
}

server::~server() = default;

std::string server::start() {
    auto log = log::get("net");
    for (size_t i = 0; i < _options.listeners.size(); ++i) {
        const auto& l = _options.listeners[i];
        error_code ec;
        // A host name binds every address it resolves to (localhost may be 127.0.0.1 and ::1,
        // and clients try them in either order); the first must bind, later ones may fail.
        std::vector<tcp::endpoint> endpoints;
        if (l.host.empty()) {
            endpoints.emplace_back(tcp::v4(), l.port);
        } else {
            tcp::resolver resolver(_pool.context(0));
            auto results = resolver.resolve(l.host, std::to_string(l.port), ec);
            if (ec || results.empty()) {
                return fmt::format("cannot resolve listener host '{}': {}", l.host, ec.message());
            }
            for (const auto& r : results) {
                if (std::find(endpoints.begin(), endpoints.end(), r.endpoint()) ==
                    endpoints.end()) {
                    endpoints.push_back(r.endpoint());
                }
            }
        }
        for (size_t j = 0; j < endpoints.size(); ++j) {
            auto endpoint = endpoints[j];
            if (j > 0 && l.port == 0) {
                endpoint.port(_bound_ports.back());
            }
            auto acceptor = std::make_unique<tcp::acceptor>(_pool.context(0));
            acceptor->open(endpoint.protocol(), ec);
            if (!ec && endpoint.protocol() == tcp::v6()) {
                acceptor->set_option(asio::ip::v6_only(true), ec);
            }
            if (!ec) {
                acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
            }
            if (!ec) {
                acceptor->bind(endpoint, ec);
            }
            if (!ec) {
                acceptor->listen(asio::socket_base::max_listen_connections, ec);
            }
            if (ec) {
                if (j == 0) {
                    return fmt::format("cannot listen on {}:{}: {}", l.host, l.port, ec.message());
                }
                log->warn("cannot also listen on {}: {}", endpoint.address().to_string(),
                          ec.message());
                continue;
            }
            _bound_ports.push_back(acceptor->local_endpoint().port());
            log->info("listening on {} ({}:{})", l.name, endpoint.address().to_string(),
                      _bound_ports.back());
            _acceptors.push_back(std::move(acceptor));
            _acceptor_listeners.push_back(l.name);
        }
    }
    _accepting = true;
    for (size_t i = 0; i < _acceptors.size(); ++i) {
        asio::co_spawn(_pool.context(0), accept_loop(this, i), asio::detached);
    }
    return {};
}

asio::awaitable<void> server::accept_loop(server* self, size_t listener) {
    auto& acceptor = *self->_acceptors[listener];
    while (self->_accepting) {
        // max.connections: stop accepting (clients wait in the backlog) until one closes.
        if (self->_quotas->at_limit()) {
            co_await self->_slot_freed->wait();
            continue;
        }
        size_t shard = self->_next_shard++ % self->_pool.shard_count();
        error_code ec;
        tcp::socket socket = co_await acceptor.async_accept(
            self->_pool.context(shard), asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            if (ec == asio::error::operation_aborted || !self->_accepting) {
                break;
            }
            // EMFILE and friends: back off briefly rather than spinning.
            log::get("net")->warn("accept failed: {}", ec.message());
            asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(100));
            co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            continue;
        }
        auto remote = socket.remote_endpoint(ec);
        std::string ip = ec ? std::string("unknown") : remote.address().to_string();
        if (!self->_quotas->add(ip)) {
            // max.connections.per.ip: Kafka accepts and closes at once.
            self->_probe.connection_rejected();
            log::get("net")->debug(
                "rejected connection from {}: it has max.connections.per.ip "
                "({}) connections",
                ip, self->_options.max_connections_per_ip);
            socket.close(ec);
            continue;
        }
        // Here, on shard 0: the listener's TLS context is reloaded by one thread.
        tls_material tls;
        if (auto it = self->_options.security.find(self->_acceptor_listeners[listener]);
            it != self->_options.security.end() && it->second.tls) {
            tls = it->second.tls->current();
        }
        // Through the shard's mailbox: a storm of accepts never holds the shards' scheduler locks.
        self->_pool.post(shard, [self, shard, ip, listener, tls = std::move(tls),
                                 s = std::make_shared<tcp::socket>(std::move(socket))]() mutable {
            self->on_accepted(std::move(*s), shard, std::move(ip),
                              self->_acceptor_listeners[listener], std::move(tls));
        });
    }
}

void server::on_accepted(tcp::socket socket, size_t shard, std::string ip,
                         const std::string& listener, tls_material tls) {
    error_code ec;
    if (_options.socket_send_buffer > 0) {
        socket.set_option(asio::socket_base::send_buffer_size(_options.socket_send_buffer), ec);
    }
    if (_options.socket_receive_buffer > 0) {
        socket.set_option(asio::socket_base::receive_buffer_size(_options.socket_receive_buffer),
                          ec);
    }
    connection_info info;
    info.id = _next_id.fetch_add(1);
    info.shard = shard;
    info.listener = listener;
    if (auto it = _options.security.find(listener); it != _options.security.end()) {
        info.security_protocol = it->second.protocol;
    }
    info.authenticated = !info.security_protocol.starts_with("SASL_");
    auto remote = socket.remote_endpoint(ec);
    info.peer = ec ? "unknown" : ip + ":" + std::to_string(remote.port());
    std::weak_ptr<shard_state> state = _shards[shard];
    auto conn = std::make_shared<connection>(
        std::move(socket), info, _dispatcher, _probe, _options.limits, _shards[shard]->budget,
        _shards[shard]->hangups,
        [state](uint64_t id) {
            if (auto s = state.lock()) {
                s->connections.erase(id);
            }
        },
        [quotas = _quotas, ip] { quotas->remove(ip); }, std::move(tls));
    _shards[shard]->connections.emplace(info.id, conn);
    if (!_accepting) {
        conn->begin_drain();
    }
    conn->start();
}

void server::for_each_connection(void (connection::*fn)()) {
    std::vector<std::future<void>> done;
    for (size_t i = 0; i < _pool.shard_count(); ++i) {
        auto p = std::make_shared<std::promise<void>>();
        done.push_back(p->get_future());
        asio::post(_pool.context(i), [state = _shards[i], fn, p] {
            for (auto& [id, weak] : state->connections) {
                if (auto c = weak.lock()) {
                    (c.get()->*fn)();
                }
            }
            p->set_value();
        });
    }
    for (auto& f : done) {
        f.wait();
    }
}

void server::drain(std::chrono::milliseconds timeout) {
    auto log = log::get("net");
    _accepting = false;
    std::promise<void> closed;
    asio::post(_pool.context(0), [this, &closed] {
        for (auto& a : _acceptors) {
            error_code ec;
            a->close(ec);
        }
        _slot_freed->notify();  // an accept loop waiting for a free slot sees _accepting
        closed.set_value();
    });
    closed.get_future().wait();
    for_each_connection(&connection::begin_drain);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (_probe.connections_active() > 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (_probe.connections_active() > 0) {
        log->warn("{} connections still busy after {} ms, closing them",
                  _probe.connections_active(), timeout.count());
        for_each_connection(&connection::close);
        // Give the coroutines a moment to observe the close and release the connections.
        auto hard = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (_probe.connections_active() > 0 && std::chrono::steady_clock::now() < hard) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
}

}  // namespace spool::broker::net
