// The HTTP server against a real Beast client and raw sockets over loopback.

#include "common/http/server.h"

#include "common/http/tests/test_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

namespace spool::http {
namespace {

using namespace std::chrono_literals;
using testing::client_response;

router demo_routes() {
    router r;
    r.add(verb::get, "/hello", [](const request&, const path_params&) {
        return json_response(status::ok, {{"hello", "world"}});
    });
    r.add(verb::post, "/echo", [](const request& req, const path_params&) {
        return text_response(status::ok, req.body(), "text/plain");
    });
    r.add(verb::get, "/items/{id}", [](const request&, const path_params& p) {
        return json_response(status::ok, {{"id", std::string(*p.get("id"))}});
    });
    r.add(verb::delete_, "/items/{id}", [](const request&, const path_params&) {
        return json_response(status::accepted, nlohmann::json::object());
    });
    r.add(verb::get, "/boom", [](const request&, const path_params&) -> response {
        throw std::runtime_error("handler exploded");
    });
    return r;
}

server_options loopback_options() {
    server_options o;
    o.endpoint = parse_endpoint("127.0.0.1:0").value();
    return o;
}

class server_test : public ::testing::Test {
protected:
    void start(server_options o = loopback_options()) {
        _server = std::make_unique<server>(o, demo_routes());
        ASSERT_TRUE(_server->start());
        _ep = _server->local_endpoint();
    }
    nlohmann::json body_of(const client_response& r) { return nlohmann::json::parse(r.body()); }

    std::unique_ptr<server> _server;
    boost::asio::ip::tcp::endpoint _ep;
};

TEST_F(server_test, test_get_on_registered_path_returns_handler_json) {
    start();
    auto res = testing::get(_ep, "/hello");
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res[boost::beast::http::field::content_type], "application/json");
    EXPECT_EQ(body_of(res)["hello"], "world");
}

TEST_F(server_test, test_path_capture_is_percent_decoded_and_query_ignored) {
    start();
    auto res = testing::get(_ep, "/items/a%2Eb?verbose=1");
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(body_of(res)["id"], "a.b");
}

TEST_F(server_test, test_unknown_path_returns_404_with_json_error) {
    start();
    auto res = testing::get(_ep, "/nope");
    EXPECT_EQ(res.result_int(), 404);
    auto body = body_of(res);
    EXPECT_EQ(body["status"], 404);
    EXPECT_TRUE(body["error"].is_string());
}

TEST_F(server_test, test_wrong_method_returns_405_with_allow_listing_methods) {
    start();
    auto res = testing::request(_ep, verb::put, "/items/7");
    EXPECT_EQ(res.result_int(), 405);
    EXPECT_EQ(res[boost::beast::http::field::allow], "DELETE, GET");
    EXPECT_EQ(body_of(res)["status"], 405);
}

TEST_F(server_test, test_body_over_limit_returns_413_and_closes) {
    auto o = loopback_options();
    o.max_body_bytes = 1024;
    start(o);
    auto ok = testing::request(_ep, verb::post, "/echo", std::string(1024, 'x'));
    EXPECT_EQ(ok.result_int(), 200);
    EXPECT_EQ(ok.body().size(), 1024u);
    auto res = testing::request(_ep, verb::post, "/echo", std::string(1025, 'x'));
    EXPECT_EQ(res.result_int(), 413);
    EXPECT_EQ(body_of(res)["status"], 413);
    EXPECT_FALSE(res.keep_alive());
}

TEST_F(server_test, test_chunked_body_over_limit_returns_413) {
    auto o = loopback_options();
    o.max_body_bytes = 16;
    start(o);
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    std::string req =
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        "10\r\n0123456789abcdef\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(req));
    auto out = testing::read_until_closed(s, 5s);
    EXPECT_TRUE(out.closed);
    EXPECT_NE(out.data.find("HTTP/1.1 413"), std::string::npos) << out.data;
}

TEST_F(server_test, test_expect_100_continue_gets_interim_response_before_body) {
    start();
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    std::string head =
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n"
        "Connection: close\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(head));
    // The client holds the body back until the server says go.
    char buf[64];
    size_t n = s.read_some(boost::asio::buffer(buf));
    EXPECT_EQ(std::string(buf, n).rfind("HTTP/1.1 100 Continue", 0), 0u);
    boost::asio::write(s, boost::asio::buffer(std::string("hello")));
    auto out = testing::read_until_closed(s, 5s);
    EXPECT_NE(out.data.find("HTTP/1.1 200"), std::string::npos) << out.data;
    EXPECT_NE(out.data.find("hello"), std::string::npos);
}

TEST_F(server_test, test_header_over_limit_returns_431) {
    auto o = loopback_options();
    o.max_header_bytes = 512;
    start(o);
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    std::string req =
        "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1000, 'a') + "\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(req));
    auto out = testing::read_until_closed(s, 5s);
    EXPECT_NE(out.data.find("HTTP/1.1 431"), std::string::npos) << out.data;
}

TEST_F(server_test, test_garbage_request_returns_400) {
    start();
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    boost::asio::write(s, boost::asio::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
    auto out = testing::read_until_closed(s, 5s);
    EXPECT_TRUE(out.closed);
    EXPECT_NE(out.data.find("HTTP/1.1 400"), std::string::npos) << out.data;
}

TEST_F(server_test, test_throwing_handler_returns_500_and_server_keeps_serving) {
    start();
    auto res = testing::get(_ep, "/boom");
    EXPECT_EQ(res.result_int(), 500);
    EXPECT_EQ(body_of(res)["error"], "handler exploded");
    EXPECT_EQ(testing::get(_ep, "/hello").result_int(), 200);
}

TEST_F(server_test, test_keep_alive_serves_several_requests_on_one_connection) {
    start();
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    std::string two =
        "GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /items/9 HTTP/1.1\r\nHost: x\r\n"
        "Connection: close\r\n\r\n";
    boost::asio::write(s, boost::asio::buffer(two));
    auto out = testing::read_until_closed(s, 5s);
    EXPECT_TRUE(out.closed);
    EXPECT_NE(out.data.find("\"hello\":\"world\""), std::string::npos);
    EXPECT_NE(out.data.find("\"id\":\"9\""), std::string::npos);
}

TEST_F(server_test, test_slowloris_header_is_cut_at_header_timeout_without_stalling_others) {
    auto o = loopback_options();
    o.header_timeout = 2s;
    start(o);
    boost::asio::io_context io;
    // Three clients that start a request and never finish its header.
    std::vector<boost::asio::ip::tcp::socket> slow;
    for (int i = 0; i < 3; ++i) {
        slow.push_back(testing::raw_connect(io, _ep));
        boost::asio::write(slow.back(),
                           boost::asio::buffer(std::string("GET /hello HTTP/1.1\r\nX-")));
    }
    auto begin = std::chrono::steady_clock::now();
    EXPECT_EQ(testing::request(_ep, verb::get, "/hello", {}, 1500ms).result_int(), 200);
    // Answered well before the slow clients' header timeout: they do not hold it up.
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
    for (auto& s : slow) {
        auto out = testing::read_until_closed(s, 6s);
        EXPECT_TRUE(out.closed) << "a slow client outlived the header timeout";
    }
}

TEST_F(server_test, test_idle_connection_is_closed_after_idle_timeout) {
    auto o = loopback_options();
    o.idle_timeout = 300ms;
    start(o);
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    auto begin = std::chrono::steady_clock::now();
    auto out = testing::read_until_closed(s, 3s);
    EXPECT_TRUE(out.closed);
    EXPECT_GE(std::chrono::steady_clock::now() - begin, 250ms);
    EXPECT_TRUE(out.data.empty());
}

TEST_F(server_test, test_connections_over_limit_get_fast_503_and_slots_free_after_timeout) {
    auto o = loopback_options();
    o.max_connections = 4;
    o.idle_timeout = 3s;
    start(o);
    boost::asio::io_context io;
    std::vector<boost::asio::ip::tcp::socket> idle;
    for (int i = 0; i < 4; ++i)
        idle.push_back(testing::raw_connect(io, _ep));
    // The accept loop counts a connection when it accepts it; wait until all four are in.
    for (int i = 0; i < 100 && _server->active_connections() < 4; ++i)
        std::this_thread::sleep_for(10ms);
    ASSERT_EQ(_server->active_connections(), 4u);

    auto begin = std::chrono::steady_clock::now();
    auto res = testing::request(_ep, verb::get, "/hello", {}, 2s);
    EXPECT_EQ(res.result_int(), 503);
    EXPECT_EQ(res[boost::beast::http::field::retry_after], "1");
    // Answered at once, not after the idle clients' 3 s timeout.
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 1500ms);

    // Once the idle clients time out their slots are free again.
    for (auto& s : idle)
        EXPECT_TRUE(testing::read_until_closed(s, 8s).closed);
    for (int i = 0; i < 100 && _server->active_connections() > 0; ++i)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(testing::get(_ep, "/hello").result_int(), 200);
}

TEST_F(server_test, test_stop_closes_open_connections_promptly) {
    start();
    boost::asio::io_context io;
    auto s = testing::raw_connect(io, _ep);
    boost::asio::write(s, boost::asio::buffer(std::string("GET /hel")));
    for (int i = 0; i < 100 && _server->active_connections() < 1; ++i)
        std::this_thread::sleep_for(10ms);
    auto begin = std::chrono::steady_clock::now();
    _server->stop();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, 1s);
    EXPECT_TRUE(testing::read_until_closed(s, 2s).closed);
    _server->stop();  // idempotent
}

TEST_F(server_test, test_start_fails_when_the_port_is_taken) {
    start();
    server_options o;
    o.endpoint = _ep;
    server second(o, router{});
    auto r = second.start();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), std::errc::address_in_use);
}

TEST(parse_endpoint, test_accepts_ipv4_ipv6_localhost_and_empty_host) {
    EXPECT_EQ(parse_endpoint("0.0.0.0:9644").value().port(), 9644);
    EXPECT_EQ(parse_endpoint("[::1]:80").value().address().to_string(), "::1");
    EXPECT_EQ(parse_endpoint("localhost:1").value().address().to_string(), "127.0.0.1");
    EXPECT_EQ(parse_endpoint(":9644").value().address().to_string(), "0.0.0.0");
}

TEST(parse_endpoint, test_rejects_missing_or_bad_port_and_hostnames) {
    EXPECT_FALSE(parse_endpoint("0.0.0.0"));
    EXPECT_FALSE(parse_endpoint("0.0.0.0:"));
    EXPECT_FALSE(parse_endpoint("0.0.0.0:70000"));
    EXPECT_FALSE(parse_endpoint("0.0.0.0:12x"));
    EXPECT_FALSE(parse_endpoint("example.com:80"));
}

}  // namespace
}  // namespace spool::http
