// The client when etcd fails: stopped, killed, frozen (SIGSTOP), a dead first endpoint, and
// endpoints that answer nonsense or claim huge bodies. Every wait is bounded by the options.
#include "broker/etcd/client.h"
#include "broker/etcd/tests/test_util.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/etcd_process.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

namespace spool::broker::etcd::testing {
namespace {

using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point start) {
    return std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
}

std::string dead_endpoint() {
    return "http://127.0.0.1:" + std::to_string(spool::tests::free_port());
}

TEST(etcd_failure, test_stopped_etcd_is_unavailable_within_the_timeout_and_recovers) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({etcd.endpoint()}, 2000ms));
    ASSERT_TRUE(run(io, c->put("/k", "before")));  // leaves a kept-alive connection in the pool

    ASSERT_TRUE(etcd.stop());
    auto start = clock_type::now();
    auto down = run(io, c->range("/k"));
    double took = ms_since(start);
    ASSERT_FALSE(down);
    EXPECT_EQ(down.error(), errc::unavailable);
    EXPECT_LT(took, 2000);

    ASSERT_TRUE(etcd.start()) << etcd.log_text();  // same data dir and port
    auto up = run(io, c->range("/k"));             // the same client, no new object
    ASSERT_TRUE(up) << up.error().message();
    ASSERT_EQ(up.value().kvs.size(), 1u);
    EXPECT_EQ(up.value().kvs[0].value, "before");
}

TEST(etcd_failure, test_frozen_etcd_times_out_within_the_request_timeout_and_recovers) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({etcd.endpoint()}, 1000ms));
    ASSERT_TRUE(run(io, c->put("/k", "v")));
    etcd.pause();
    auto start = clock_type::now();
    auto frozen = run(io, c->put("/k", "w"));
    double took = ms_since(start);
    etcd.resume();
    ASSERT_FALSE(frozen);
    EXPECT_EQ(frozen.error(), errc::timed_out);
    EXPECT_GE(took, 900);
    EXPECT_LT(took, 2500);  // the timeout plus scheduling on a loaded 2-core machine
    auto again = run(io, c->range("/k"));
    ASSERT_TRUE(again) << again.error().message();
}

TEST(etcd_failure, test_a_dead_first_endpoint_fails_over_to_the_next) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({dead_endpoint(), etcd.endpoint()}));
    auto start = clock_type::now();
    auto put = run(io, c->put("/f", "over"));
    ASSERT_TRUE(put) << put.error().message();
    EXPECT_LT(ms_since(start), 1000);  // a refused connection moves on at once
    auto w = run(io, c->watch("/f", {}, put.value()));
    ASSERT_TRUE(w) << w.error().message();
    auto batch = run(io, w.value()->next());
    ASSERT_TRUE(batch) << batch.error().message();
    EXPECT_EQ(batch.value().events.at(0).kv.value, "over");
}

TEST(etcd_failure, test_a_frozen_first_endpoint_fails_over_after_the_request_timeout) {
    spool::tests::etcd_process frozen;
    spool::tests::etcd_process live;
    ASSERT_TRUE(frozen.start()) << frozen.log_text();
    ASSERT_TRUE(live.start()) << live.log_text();
    frozen.pause();
    net::io_context io;
    auto c =
        client::make(io.get_executor(), options_for({frozen.endpoint(), live.endpoint()}, 1000ms));
    auto start = clock_type::now();
    auto put = run(io, c->put("/f", "v"));
    ASSERT_TRUE(put) << put.error().message();
    EXPECT_LT(ms_since(start), 2500);
    start = clock_type::now();
    ASSERT_TRUE(run(io, c->range("/f")));  // sticks to the endpoint that answered
    EXPECT_LT(ms_since(start), 500);
    // A watch does the same: the frozen endpoint is skipped once it does not confirm in time.
    auto fresh =
        client::make(io.get_executor(), options_for({frozen.endpoint(), live.endpoint()}, 1000ms));
    start = clock_type::now();
    auto w = run(io, fresh->watch("/f", {}, put.value()));
    ASSERT_TRUE(w) << w.error().message();
    EXPECT_LT(ms_since(start), 2500);
    auto batch = run(io, w.value()->next());
    ASSERT_TRUE(batch) << batch.error().message();
    EXPECT_EQ(batch.value().events.at(0).kv.value, "v");
    frozen.resume();
}

TEST(etcd_failure, test_host_name_endpoints_resolve_and_unknown_names_are_unavailable) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(),
                          options_for({"http://no-such-etcd.invalid:2379",
                                       "http://localhost:" + std::to_string(etcd.client_port())}));
    auto put = run(io, c->put("/n", "by name"));
    ASSERT_TRUE(put) << put.error().message();
    auto only_unknown =
        client::make(io.get_executor(), options_for({"http://no-such-etcd.invalid:2379"}));
    auto r = run(io, only_unknown->range("/n"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::unavailable);
}

TEST(etcd_failure, test_all_endpoints_dead_is_unavailable) {
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({dead_endpoint(), dead_endpoint()}));
    auto r = run(io, c->range("/k"));
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::unavailable);
    auto w = run(io, c->watch("/k", {}, 0));
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error(), errc::unavailable);
    auto none = client::make(io.get_executor(), options_for({}));
    EXPECT_EQ(run(io, none->range("/k")).error(), errc::unavailable);
}

net::awaitable<result<observed>> next_after_kill(client& c, spool::tests::etcd_process* etcd) {
    CO_TRY(w, co_await c.watch("/k/", prefix_end("/k/"), 0));
    etcd->kill9();
    co_return observe(co_await w->next());
}

TEST(etcd_failure, test_a_killed_etcd_ends_the_watch_with_unavailable) {
    spool::tests::etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    net::io_context io;
    auto c = client::make(io.get_executor(), options_for({etcd.endpoint()}));
    auto r = run(io, next_after_kill(*c, &etcd), 5s);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(r.value().ec, errc::unavailable);
}

// A fake endpoint: answers every connection with `reply` and keeps reading.
net::awaitable<void> serve_one(tcp::socket socket, std::string reply) {
    char buf[4096];
    boost::system::error_code ec;
    co_await socket.async_read_some(net::buffer(buf), net::redirect_error(net::use_awaitable, ec));
    co_await net::async_write(socket, net::buffer(reply),
                              net::redirect_error(net::use_awaitable, ec));
    while (!ec) {
        co_await socket.async_read_some(net::buffer(buf),
                                        net::redirect_error(net::use_awaitable, ec));
    }
}

net::awaitable<void> fake_etcd(tcp::acceptor* acceptor, std::string reply) {
    for (;;) {
        boost::system::error_code ec;
        auto socket = co_await acceptor->async_accept(net::redirect_error(net::use_awaitable, ec));
        if (ec) {
            co_return;
        }
        net::co_spawn(acceptor->get_executor(), serve_one(std::move(socket), reply), net::detached);
    }
}

std::error_code ask_fake(const std::string& reply, bool watch) {
    net::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    net::co_spawn(io, fake_etcd(&acceptor, reply), net::detached);
    auto c = client::make(
        io.get_executor(),
        options_for({"http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port())},
                    1000ms));
    std::error_code ec;
    if (watch) {
        auto w = run(io, c->watch("/k", {}, 0), 5s);
        ec = w ? std::error_code{} : w.error();
    } else {
        auto r = run(io, c->range("/k"), 5s);
        ec = r ? std::error_code{} : r.error();
    }
    c->cancel();
    acceptor.close();
    io.run_for(100ms);
    return ec;
}

TEST(etcd_failure, test_a_claimed_huge_body_is_refused_without_reading_it) {
    // 100 MB claimed and never sent: refused at the header, nothing allocated for it.
    EXPECT_EQ(ask_fake("HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n{", false),
              errc::bad_response);
}

TEST(etcd_failure, test_garbage_answers_are_bad_response) {
    EXPECT_EQ(ask_fake("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!", false),
              errc::bad_response);
    EXPECT_EQ(ask_fake("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]", false),
              errc::bad_response);
    // A watch whose first message is not "created".
    EXPECT_EQ(ask_fake("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "5\r\n[1,2]\r\n1\r\n\n\r\n",
                       true),
              errc::bad_response);
}

std::string chunk(std::string_view data) {
    char size[16];
    std::snprintf(size, sizeof size, "%zx", data.size());
    return std::string(size) + "\r\n" + std::string(data) + "\r\n";
}

struct stream_trace {
    std::vector<watch_batch> batches;
    observed end;
    observed after_end;
};

net::awaitable<result<stream_trace>> read_fake_stream(client& c) {
    CO_TRY(w, co_await c.watch("/k", {}, 0));
    stream_trace t;
    for (;;) {
        auto batch = co_await w->next();
        if (!batch) {
            t.end = observe(batch);
            break;
        }
        t.batches.push_back(std::move(batch).value());
    }
    t.after_end = observe(co_await w->next());
    co_return t;
}

TEST(etcd_failure, test_a_watch_reassembles_lines_across_chunks_and_ends_on_an_error_object) {
    std::string events = R"({"result":{"header":{"revision":"5"},"events":[{"kv":{"key":"aw==",)"
                         R"("mod_revision":"5","value":"dg=="}}]}})"
                         "\n";
    std::string reply = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                        chunk(R"({"result":{"header":{"revision":"4"},"created":true}})"
                              "\n") +
                        chunk(events.substr(0, 30)) + chunk(events.substr(30)) +
                        chunk(R"({"result":{"header":{"revision":"9"}}})"
                              "\n\n") +
                        chunk(R"({"error":{"grpc_code":14,"message":"transport is closing"}})"
                              "\n");
    net::io_context io;
    tcp::acceptor acceptor(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
    net::co_spawn(io, fake_etcd(&acceptor, reply), net::detached);
    auto c = client::make(
        io.get_executor(),
        options_for({"http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port())}));
    auto t = run(io, read_fake_stream(*c), 5s);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t.value().batches.size(), 2u);
    ASSERT_EQ(t.value().batches[0].events.size(), 1u);
    EXPECT_EQ(t.value().batches[0].events[0].kv.key, "k");
    EXPECT_EQ(t.value().batches[0].events[0].kv.value, "v");
    EXPECT_TRUE(t.value().batches[1].progress_notify);
    EXPECT_EQ(t.value().batches[1].revision, 9);
    EXPECT_EQ(t.value().end.ec, errc::unavailable);
    EXPECT_EQ(t.value().after_end.ec, errc::unavailable);  // the watch is over
    c->cancel();
    acceptor.close();
    io.run_for(100ms);
}

TEST(etcd_failure, test_an_endpoint_that_never_answers_times_out) {
    // Accepts and reads, never writes: the request timeout ends the wait, for calls and watches.
    auto start = clock_type::now();
    EXPECT_EQ(ask_fake("", false), errc::timed_out);
    EXPECT_EQ(ask_fake("", true), errc::timed_out);
    EXPECT_LT(ms_since(start), 3500);
}

}  // namespace
}  // namespace spool::broker::etcd::testing
