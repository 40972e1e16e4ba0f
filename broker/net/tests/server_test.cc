#include "broker/net/server.h"

#include "broker/net/tests/test_client.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace spool::broker::net {
namespace {

namespace asio = boost::asio;
using testing::raw_client;
using namespace std::chrono_literals;

// A tiny line protocol standing in for Kafka so that framing, ordering and writing are tested
// without the handlers: the first byte of a frame is a command, the rest its argument.
//   e<text>   respond <text>
//   d<ms>,<t> mark ordered, sleep <ms>, respond <t> (a long poll)
//   w<ms>     mark ordered, wait <ms> unless cancelled (counts cancellations), respond "woke"
//   W<ms>     the same without marking ordered (the reader stays paused)
//   n         no response
//   c         close the connection
//   m         malformed: close and count
//   f<path>   respond "<" + the file's bytes 1..4 spliced with sendfile + ">"
//   F<path>   respond the whole file, spliced twice around a "|"
class test_dispatcher final : public request_dispatcher {
public:
    asio::awaitable<handled> dispatch(request_context& ctx) override {
        std::string body(ctx.frame().begin(), ctx.frame().end());
        handled out;
        if (body.empty()) {
            out.outcome = request_outcome::close_malformed;
            co_return out;
        }
        std::string arg = body.substr(1);
        switch (body[0]) {
            case 'e':
                out.response.buffer.assign(arg.begin(), arg.end());
                break;
            case 'd': {
                ctx.mark_ordered();
                auto comma = arg.find(',');
                asio::steady_timer t(co_await asio::this_coro::executor,
                                     std::chrono::milliseconds(std::stoi(arg.substr(0, comma))));
                co_await t.async_wait(asio::use_awaitable);
                std::string text = arg.substr(comma + 1);
                out.response.buffer.assign(text.begin(), text.end());
                break;
            }
            case 'w':
            case 'W': {
                if (body[0] == 'w') {
                    ctx.mark_ordered();
                }
                asio::steady_timer t(co_await asio::this_coro::executor,
                                     std::chrono::milliseconds(std::stoi(arg)));
                runtime::cancel_hook hook(ctx.cancellation(), [&t] { t.cancel(); });
                boost::system::error_code ec;
                co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                if (ctx.cancelled()) {
                    ++cancelled;
                }
                out.response.buffer = {'w', 'o', 'k', 'e'};
                break;
            }
            case 'n':
                out.outcome = request_outcome::no_response;
                break;
            case 'c':
                out.outcome = request_outcome::close;
                break;
            case 'f': {
                int fd = ::open(arg.c_str(), O_RDONLY);
                auto file = std::make_shared<const file_handle>(fd);
                out.response.buffer = {'<', '>'};
                out.response.splices.push_back({1, file_slice{file, 1, 4}});
                break;
            }
            case 'F': {
                int fd = ::open(arg.c_str(), O_RDONLY);
                auto file = std::make_shared<const file_handle>(fd);
                auto length = static_cast<uint32_t>(::lseek(fd, 0, SEEK_END));
                out.response.buffer = {'|'};
                out.response.splices.push_back({0, file_slice{file, 0, length}});
                out.response.splices.push_back({1, file_slice{file, 0, length}});
                break;
            }
            default:
                out.outcome = request_outcome::close_malformed;
        }
        if (out.outcome == request_outcome::respond) {
            frame_it(out.response);
        }
        co_return out;
    }

    std::atomic<int> cancelled{0};

    // Prepends the size prefix, shifting splice positions to match.
    static void frame_it(response& r) {
        auto size = static_cast<uint32_t>(r.size());
        std::vector<uint8_t> prefix = {uint8_t(size >> 24), uint8_t(size >> 16), uint8_t(size >> 8),
                                       uint8_t(size)};
        r.buffer.insert(r.buffer.begin(), prefix.begin(), prefix.end());
        for (auto& s : r.splices) {
            s.at += 4;
        }
    }
};

class server_test : public ::testing::Test {
protected:
    void SetUp() override {
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
        server_options opts;
        opts.listeners.push_back({"PLAINTEXT", "127.0.0.1", 0});
        opts.limits.max_request_bytes = 1024;
        opts.limits.queued_max_requests = 4;
        opts.limits.max_pending_request_bytes = pending_bytes_cap;
        opts.limits.max_idle = std::chrono::milliseconds(1500);
        srv = std::make_unique<server>(*pool, dispatcher, metrics, opts);
        ASSERT_EQ(srv->start(), "");
    }
    void TearDown() override {
        srv->drain(std::chrono::milliseconds(2000));
        srv.reset();
        pool->stop();
    }

    size_t pending_bytes_cap = connection_limits{}.max_pending_request_bytes;
    test_dispatcher dispatcher;
    probe metrics;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<server> srv;
};

TEST_F(server_test, test_request_gets_its_response) {
    raw_client c(srv->bound_port());
    c.send_frame("ehello");
    EXPECT_EQ(c.read_frame(), "hello");
    EXPECT_EQ(metrics.requests(), 1u);
}

TEST_F(server_test, test_pipelined_responses_keep_request_order_even_when_first_is_slow) {
    raw_client c(srv->bound_port());
    c.send_frame("d200,slow");
    c.send_frame("efast");
    c.send_frame("d10,medium");
    EXPECT_EQ(c.read_frame(), "slow");
    EXPECT_EQ(c.read_frame(), "fast");
    EXPECT_EQ(c.read_frame(), "medium");
}

TEST_F(server_test, test_more_pipelined_requests_than_the_queue_limit_all_answer) {
    raw_client c(srv->bound_port());
    for (int i = 0; i < 20; ++i) {
        c.send_frame("e" + std::to_string(i));
    }
    for (int i = 0; i < 20; ++i) {
        EXPECT_EQ(c.read_frame(), std::to_string(i));
    }
}

class server_small_pending_test : public server_test {
protected:
    server_small_pending_test() { pending_bytes_cap = 10; }
};

TEST_F(server_small_pending_test, test_pending_request_bytes_cap_holds_back_reading) {
    // Each "d150,N" frame is 6 bytes and lets the next request start at once. A 10-byte cap
    // holds 2 at a time, so 8 of them need four 150 ms waits one after the other; the
    // 4-request count cap alone would need two.
    raw_client c(srv->bound_port());
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 8; ++i) {
        c.send_frame("d150," + std::to_string(i));
    }
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(c.read_frame(), std::to_string(i));
    }
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(590));
}

TEST_F(server_test, test_no_response_request_is_skipped_in_the_stream) {
    raw_client c(srv->bound_port());
    c.send_frame("n");
    c.send_frame("eafter");
    EXPECT_EQ(c.read_frame(), "after");
}

TEST_F(server_test, test_oversized_size_prefix_closes_and_counts) {
    raw_client c(srv->bound_port());
    c.send_size(1025);
    EXPECT_TRUE(c.closed_by_peer());
    EXPECT_EQ(metrics.malformed_requests(), 1u);
    raw_client d(srv->bound_port());
    d.send_frame("estill serving");
    EXPECT_EQ(d.read_frame(), "still serving");
}

TEST_F(server_test, test_negative_size_prefix_closes_and_counts) {
    raw_client c(srv->bound_port());
    c.send_size(-5);
    EXPECT_TRUE(c.closed_by_peer());
    EXPECT_EQ(metrics.malformed_requests(), 1u);
}

TEST_F(server_test, test_truncated_frame_is_counted_when_peer_goes_away) {
    {
        raw_client c(srv->bound_port());
        c.send_size(100);
        c.send_raw({'e', 'x'});
        c.shutdown_send();
        EXPECT_TRUE(c.closed_by_peer());
    }
    EXPECT_EQ(metrics.malformed_requests(), 1u);
}

TEST_F(server_test, test_close_outcome_answers_earlier_requests_then_closes) {
    raw_client c(srv->bound_port());
    c.send_frame("efirst");
    c.send_frame("c");
    c.send_frame("enever");
    EXPECT_EQ(c.read_frame(), "first");
    EXPECT_EQ(c.read_frame(), std::nullopt);
}

TEST_F(server_test, test_malformed_outcome_closes_and_counts) {
    raw_client c(srv->bound_port());
    c.send_frame("m");
    EXPECT_TRUE(c.closed_by_peer());
    EXPECT_EQ(metrics.malformed_requests(), 1u);
}

TEST_F(server_test, test_file_slices_are_spliced_between_buffer_bytes) {
    std::string path = ::testing::TempDir() + "net_splice_test.bin";
    {
        std::ofstream out(path, std::ios::binary);
        out << "0ABCD9";
    }
    raw_client c(srv->bound_port());
    c.send_frame("f" + path);
    EXPECT_EQ(c.read_frame(), "<ABCD>");
    std::remove(path.c_str());
}

TEST_F(server_test, test_large_spliced_response_arrives_whole) {
    std::string path = ::testing::TempDir() + "net_splice_large.bin";
    std::string content(8 << 20, 'z');
    {
        std::ofstream out(path, std::ios::binary);
        out << content;
    }
    raw_client c(srv->bound_port());
    c.send_frame("F" + path);
    auto got = c.read_frame();
    ASSERT_TRUE(got);
    EXPECT_EQ(*got, content + "|" + content);
    std::remove(path.c_str());
}

TEST_F(server_test, test_drain_answers_in_flight_long_poll_before_closing) {
    raw_client c(srv->bound_port());
    c.send_frame("d300,done");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::thread t([&] { srv->drain(std::chrono::milliseconds(3000)); });
    EXPECT_EQ(c.read_frame(), "done");
    EXPECT_EQ(c.read_frame(), std::nullopt);
    t.join();
    EXPECT_EQ(metrics.connections_active(), 0);
}

TEST_F(server_test, test_drain_deadline_closes_stuck_connections) {
    raw_client c(srv->bound_port());
    c.send_frame("d60000,never");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto start = std::chrono::steady_clock::now();
    srv->drain(std::chrono::milliseconds(200));
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(c.read_frame(), std::nullopt);
}

TEST_F(server_test, test_idle_connection_is_closed_after_max_idle) {
    raw_client c(srv->bound_port());
    c.send_frame("eping");
    EXPECT_EQ(c.read_frame(), "ping");
    auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE(c.closed_by_peer());
    auto idle = std::chrono::steady_clock::now() - start;
    EXPECT_GE(idle, std::chrono::milliseconds(1400));
    EXPECT_LT(idle, std::chrono::milliseconds(4000));
}

// Waits until `cond` holds or `within` passes.
template <class Cond>
bool eventually(Cond cond, std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

TEST_F(server_test, test_peer_close_cancels_a_long_poll_and_frees_the_connection) {
    {
        raw_client c(srv->bound_port());
        c.send_frame("w60000");
        ASSERT_TRUE(eventually([&] { return metrics.connections_active() == 1; }, 1s));
    }
    EXPECT_TRUE(eventually([&] { return dispatcher.cancelled == 1; }, 1s));
    EXPECT_TRUE(eventually([&] { return metrics.connections_active() == 0; }, 1s));
}

TEST_F(server_test, test_peer_close_is_noticed_while_the_reader_waits_for_ordering) {
    {
        raw_client c(srv->bound_port());
        c.send_frame("W60000");  // never ordered: the reader does not read the socket
        std::this_thread::sleep_for(50ms);
    }
    EXPECT_TRUE(eventually([&] { return dispatcher.cancelled == 1; }, 1s));
    EXPECT_TRUE(eventually([&] { return metrics.connections_active() == 0; }, 1s));
}

TEST_F(server_test, test_request_finishing_normally_is_not_cancelled) {
    raw_client c(srv->bound_port());
    c.send_frame("w10");
    EXPECT_EQ(c.read_frame(), "woke");
    EXPECT_EQ(dispatcher.cancelled, 0);
}

TEST_F(server_test, test_connections_are_spread_over_shards) {
    std::vector<std::unique_ptr<raw_client>> clients;
    for (int i = 0; i < 4; ++i) {
        clients.push_back(std::make_unique<raw_client>(srv->bound_port()));
        clients.back()->send_frame("eping");
        EXPECT_EQ(clients.back()->read_frame(), "ping");
    }
    EXPECT_EQ(metrics.connections_accepted(), 4u);
}

}  // namespace
}  // namespace spool::broker::net
