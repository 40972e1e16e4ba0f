// A connection's own coroutines against a loopback socket pair, without a server.

#include "broker/net/connection.h"

#include "broker/net/request_bytes_budget.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

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
    hangup_watch hangups(io.get_executor(), std::chrono::milliseconds(200));
    int closed_callbacks = 0;
    auto conn = std::make_shared<connection>(std::move(accepted), connection_info{1, 0, "peer"},
                                             dispatcher, metrics, limits, budget, hangups,
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

// Records the frames it gets and answers each with its size.
class recording_dispatcher final : public request_dispatcher {
public:
    asio::awaitable<handled> dispatch(request_context& ctx) override {
        frames.emplace_back(ctx.frame().begin(), ctx.frame().end());
        handled out;
        auto n = static_cast<uint32_t>(ctx.frame().size());
        out.response.buffer = {
            0, 0, 0, 4, uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)};
        co_return out;
    }
    std::vector<std::vector<uint8_t>> frames;
};

// A large frame whose bytes come in small pieces, with pauses, is held in chunks until its end
// arrives (frame_buffer.h) and reaches the dispatcher whole and in order; so does the next one,
// sent in one go (read in place).
TEST(connection, test_a_trickled_large_frame_reaches_the_dispatcher_intact) {
    asio::io_context io;
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::io_context client_io;  // the client blocks on its own thread
    asio::ip::tcp::socket client(client_io);
    client.connect(acceptor.local_endpoint());
    asio::ip::tcp::socket accepted = acceptor.accept();

    recording_dispatcher dispatcher;
    probe metrics;
    request_bytes_budget budget(0);
    hangup_watch hangups(io.get_executor(), std::chrono::milliseconds(200));
    auto conn = std::make_shared<connection>(std::move(accepted), connection_info{1, 0, "peer"},
                                             dispatcher, metrics, connection_limits{}, budget,
                                             hangups, [](uint64_t) {});
    conn->start();

    std::vector<uint8_t> body(700 * 1024 + 17);
    for (size_t i = 0; i < body.size(); ++i) {
        body[i] = static_cast<uint8_t>(i * 131 + (i >> 11));
    }
    auto n = static_cast<uint32_t>(body.size());
    std::vector<uint8_t> wire(4 + body.size());
    wire[0] = uint8_t(n >> 24);
    wire[1] = uint8_t(n >> 16);
    wire[2] = uint8_t(n >> 8);
    wire[3] = uint8_t(n);
    std::copy(body.begin(), body.end(), wire.begin() + 4);
    std::array<uint8_t, 16> answers{};
    std::atomic<bool> answered{false};
    std::thread sender([&client, &wire, &answers, &answered] {
        // 33 KiB pieces 2 ms apart: the reader sees the frame grow over ~45 reads.
        for (size_t at = 0; at < wire.size(); at += 33 * 1024) {
            size_t piece = std::min<size_t>(33 * 1024, wire.size() - at);
            asio::write(client, asio::buffer(wire.data() + at, piece));
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        asio::write(client, asio::buffer(wire));  // the same frame again, at once
        boost::system::error_code ec;
        asio::read(client, asio::buffer(answers), ec);
        answered = !ec;
    });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!answered && std::chrono::steady_clock::now() < deadline) {
        io.run_for(std::chrono::milliseconds(10));
    }
    if (!answered) {
        client.close();  // unblocks the sender
    }
    sender.join();

    ASSERT_EQ(dispatcher.frames.size(), 2u);
    EXPECT_TRUE(dispatcher.frames[0] == body) << "trickled frame corrupted";
    EXPECT_TRUE(dispatcher.frames[1] == body) << "frame sent at once corrupted";
    EXPECT_TRUE(answered);
    EXPECT_EQ(answers[7], uint8_t(n));
    EXPECT_EQ(answers[15], uint8_t(n));
    conn->close();
    conn.reset();
    io.run_for(std::chrono::milliseconds(100));
}

}  // namespace
}  // namespace spool::broker::net
