// A connection's own coroutines against a loopback socket pair, without a server.

#include "broker/net/connection.h"

#include "broker/net/request_bytes_budget.h"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <memory>

namespace spool::broker::net {
namespace {

namespace asio = boost::asio;

class unused_dispatcher final : public request_dispatcher {
public:
    asio::awaitable<handled> dispatch(request_context&) override {
        ADD_FAILURE() << "no request was sent";
        co_return handled{};
    }
};

// start() spawns read_loop, write_loop and idle_watch; they first run after start() returns.
// A connection closed and released before then (as at shutdown) is destroyed by the first two,
// so idle_watch meets an expired weak pointer and must leave without touching the connection.
TEST(connection, test_idle_watch_of_a_connection_gone_before_it_runs_touches_nothing) {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::ip::tcp::socket client(io);
    client.connect(acceptor.local_endpoint());
    asio::ip::tcp::socket accepted = acceptor.accept();

    unused_dispatcher dispatcher;
    probe metrics;
    connection_limits limits;
    limits.max_idle = std::chrono::milliseconds(1000);
    request_bytes_budget budget(0);
    int closed_callbacks = 0;
    auto conn = std::make_shared<connection>(std::move(accepted), connection_info{1, 0, "peer"},
                                             dispatcher, metrics, limits, budget,
                                             [&closed_callbacks](uint64_t) { ++closed_callbacks; });
    std::weak_ptr<connection> weak = conn;
    conn->start();
    conn->close();
    conn.reset();
    io.run_for(std::chrono::milliseconds(300));

    EXPECT_TRUE(weak.expired());
    EXPECT_EQ(closed_callbacks, 1);
    EXPECT_EQ(metrics.connections_active(), 0);
}

}  // namespace
}  // namespace spool::broker::net
