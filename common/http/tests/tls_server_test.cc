// The HTTP server over TLS (server_options::tls) with a real Beast TLS client: requests are
// served, the gate sees the verified client certificate's subject, and a client that never
// finishes its handshake (silent or sending garbage) is closed while others are served. The
// certificates come from the openssl CLI; a missing openssl fails the suite.

#include "common/http/server.h"

#include "common/http/tests/test_client.h"
#include "tests/integration/test_pki.h"

#include <boost/asio/ssl.hpp>
#include <nlohmann/json.hpp>
#include <boost/beast/ssl.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

namespace spool::http {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace ssl = boost::asio::ssl;

class tls_server_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir = new fs::path(fs::temp_directory_path() /
                           ("spool-http-tls-" + std::to_string(::getpid())));
        fs::create_directories(*dir);
        pki = spool::tests::make_pki(*dir);
        if (pki.empty())
            pki = spool::tests::make_client_certificate(*dir, "admin", "/O=Spool/CN=admin");
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(*dir, ec);
        delete dir;
    }
    void SetUp() override {
        ASSERT_EQ(pki, "") << "openssl failed (is it installed?)";
        auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
        ctx->use_certificate_chain_file(file("broker.crt"));
        ctx->use_private_key_file(file("broker.key"), ssl::context::pem);
        ctx->load_verify_file(file("ca.pem"));
        ctx->set_verify_mode(ssl::verify_peer);  // requested: a client without one is fine
        server_options o;
        o.endpoint = parse_endpoint("127.0.0.1:0").value();
        o.tls = [ctx] { return ctx; };
        o.handshake_timeout = 300ms;
        o.gate = [this](const request&, const peer_info& peer) -> std::optional<response> {
            std::lock_guard lock(mutex);
            seen_tls = peer.tls;
            seen_subject = peer.certificate_subject;
            return std::nullopt;
        };
        router r;
        r.add(verb::get, "/hello", [](const request&, const path_params&) {
            return json_response(status::ok, {{"hello", "world"}});
        });
        srv = std::make_unique<server>(std::move(o), std::move(r));
        ASSERT_TRUE(srv->start());
        ep = srv->local_endpoint();
    }
    void TearDown() override {
        if (srv)
            srv->stop();
    }
    static std::string file(const char* name) { return (*dir / name).string(); }

    // One GET over TLS, with the client certificate when asked; the status, or 0 on failure.
    unsigned https_get(bool with_certificate) {
        ssl::context ctx(ssl::context::tls_client);
        ctx.load_verify_file(file("ca.pem"));
        ctx.set_verify_mode(ssl::verify_peer);
        if (with_certificate) {
            ctx.use_certificate_file(file("admin.crt"), ssl::context::pem);
            ctx.use_private_key_file(file("admin.key"), ssl::context::pem);
        }
        net::io_context io;
        beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
        beast::error_code ec;
        beast::get_lowest_layer(stream).expires_after(10s);
        beast::get_lowest_layer(stream).connect(ep, ec);
        if (!ec)
            stream.handshake(ssl::stream_base::client, ec);
        if (ec)
            return 0;
        beast::http::request<beast::http::string_body> req{verb::get, "/hello", 11};
        req.set(beast::http::field::host, "localhost");
        beast::http::write(stream, req, ec);
        beast::flat_buffer buffer;
        beast::http::response<beast::http::string_body> res;
        if (!ec)
            beast::http::read(stream, buffer, res, ec);
        return ec ? 0 : res.result_int();
    }

    static fs::path* dir;
    static std::string pki;
    std::unique_ptr<server> srv;
    net::ip::tcp::endpoint ep;
    std::mutex mutex;
    bool seen_tls = false;
    std::optional<std::string> seen_subject;
};
fs::path* tls_server_test::dir = nullptr;
std::string tls_server_test::pki;

TEST_F(tls_server_test, test_https_request_is_served_and_the_gate_sees_no_certificate) {
    EXPECT_EQ(https_get(false), 200u);
    std::lock_guard lock(mutex);
    EXPECT_TRUE(seen_tls);
    EXPECT_FALSE(seen_subject.has_value());
}

TEST_F(tls_server_test, test_gate_sees_the_verified_client_certificate_subject) {
    EXPECT_EQ(https_get(true), 200u);
    std::lock_guard lock(mutex);
    ASSERT_TRUE(seen_subject.has_value());
    EXPECT_EQ(*seen_subject, "CN=admin,O=Spool");
}

TEST_F(tls_server_test, test_silent_and_garbage_handshakes_are_closed_and_others_served) {
    net::io_context io;
    auto silent = testing::raw_connect(io, ep);
    auto garbage = testing::raw_connect(io, ep);
    std::string junk = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";  // plain HTTP on the TLS port
    net::write(garbage, net::buffer(junk));
    EXPECT_TRUE(testing::read_until_closed(garbage, 10s).closed);
    EXPECT_EQ(https_get(false), 200u);
    // No byte at all: closed by the handshake timeout (300 ms), well within the deadline.
    EXPECT_TRUE(testing::read_until_closed(silent, 10s).closed);
    EXPECT_EQ(https_get(false), 200u);
}

}  // namespace
}  // namespace spool::http
