#include "broker/metadata/tests/etcd_test_support.h"

#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>

namespace spool::broker::metadata::testing {

tcp_proxy::tcp_proxy(uint16_t target) : _target(target) {
    asio::ip::tcp::endpoint here(asio::ip::make_address("127.0.0.1"), 0);
    _acceptor.open(here.protocol());
    _acceptor.set_option(asio::socket_base::reuse_address(true));
    _acceptor.bind(here);
    _acceptor.listen();
    _port = _acceptor.local_endpoint().port();
    asio::co_spawn(_io, accept_loop(this), asio::detached);
    _thread = std::thread([this] { _io.run(); });
}

tcp_proxy::~tcp_proxy() {
    // Sockets and pending handlers go with the io_context; nothing runs on it any more.
    _io.stop();
    _thread.join();
}

void tcp_proxy::cut() {
    _cut = true;
    std::promise<void> done;
    asio::post(_io, [this, &done] {
        for (auto& w : _links) {
            if (auto l = w.lock()) {
                boost::system::error_code ec;
                l->client.close(ec);
                l->server.close(ec);
            }
        }
        _links.clear();
        done.set_value();
    });
    done.get_future().wait();
}

asio::awaitable<void> tcp_proxy::accept_loop(tcp_proxy* self) {
    for (;;) {
        boost::system::error_code ec;
        socket s(self->_io);
        co_await self->_acceptor.async_accept(s, asio::redirect_error(asio::use_awaitable, ec));
        if (ec == asio::error::operation_aborted || !self->_acceptor.is_open()) {
            co_return;
        }
        if (ec) {
            continue;
        }
        if (self->_cut) {
            s.close(ec);
            continue;
        }
        auto l = std::make_shared<link>(link{std::move(s), socket(self->_io)});
        self->_links.push_back(l);
        asio::co_spawn(self->_io, serve(self, l), asio::detached);
    }
}

asio::awaitable<void> tcp_proxy::serve(tcp_proxy* self, std::shared_ptr<link> l) {
    boost::system::error_code ec;
    asio::ip::tcp::endpoint target(asio::ip::make_address("127.0.0.1"), self->_target);
    co_await l->server.async_connect(target, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || self->_cut) {
        l->client.close(ec);
        l->server.close(ec);
        co_return;
    }
    asio::co_spawn(self->_io, pump(&l->client, &l->server, l), asio::detached);
    asio::co_spawn(self->_io, pump(&l->server, &l->client, l), asio::detached);
}

asio::awaitable<void> tcp_proxy::pump(socket* from, socket* to, std::shared_ptr<link> keep) {
    std::array<char, 16384> buf{};
    for (;;) {
        boost::system::error_code ec;
        auto n = co_await from->async_read_some(asio::buffer(buf),
                                                asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            break;
        }
        co_await asio::async_write(*to, asio::buffer(buf.data(), n),
                                   asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            break;
        }
    }
    boost::system::error_code ignored;
    keep->client.close(ignored);
    keep->server.close(ignored);
}

}  // namespace spool::broker::metadata::testing
