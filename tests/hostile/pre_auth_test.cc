// Hostile clients before authentication, on a TLS listener and a SASL listener of a real broker:
// garbage instead of a ClientHello, a ClientHello then silence, a flood of handshakes that never
// finish; on SASL, frames beyond sasl.server.max.receive.size, requests other than SASL's, wrong
// passwords. Each must cost at most a log line (failures are logged a line a second at most), no
// descriptor that outlives its connection and no memory that stays, while a well-behaved client
// on the PLAINTEXT listener is served throughout. Outcomes are asserted, not durations: every
// "eventually closed" has a deadline of many seconds.

#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "tests/hostile/hostile_fixture.h"
#include "tests/integration/test_pki.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::hostile {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
namespace pr = spool::protocol;

// A real TLS 1.2/1.3 ClientHello, as OpenSSL's client writes it first.
std::vector<uint8_t> client_hello() {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL* ssl = SSL_new(ctx);
    BIO* in = BIO_new(BIO_s_mem());
    BIO* out = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl, in, out);
    SSL_set_connect_state(ssl);
    SSL_do_handshake(ssl);  // wants to read the ServerHello: the ClientHello is in `out`
    char* data = nullptr;
    long n = BIO_get_mem_data(out, &data);
    std::vector<uint8_t> hello(data, data + n);
    SSL_free(ssl);  // frees both BIOs
    SSL_CTX_free(ctx);
    return hello;
}

// Log lines containing `needle`.
size_t lines_with(const std::string& log, const std::string& needle) {
    size_t count = 0;
    for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
        ++count;
    }
    return count;
}

// The broker's log lines containing `needle`, once there is one (the log is written by a
// background thread, so a line may land a little after its cause) or 20 s passed.
size_t logged_lines(broker_process& b, const std::string& needle) {
    auto until = std::chrono::steady_clock::now() + 20s;
    size_t n = lines_with(b.log_text(), needle);
    while (n == 0 && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(50ms);
        n = lines_with(b.log_text(), needle);
    }
    return n;
}

// Reads and drops what the broker sends (a ServerHello, an alert) until it closes the
// connection; false when it is still open at `until`.
bool closed_before(raw_socket& s, std::chrono::steady_clock::time_point until) {
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return false;
        }
        pollfd p{s.fd(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
            continue;
        }
        uint8_t buf[16384];
        ssize_t r = ::recv(s.fd(), buf, sizeof buf, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
            return true;  // EOF or reset
        }
    }
}

// Whether the broker closed every socket within `deadline`.
bool all_closed_by_peer(std::vector<raw_socket>& sockets, std::chrono::seconds deadline) {
    auto until = std::chrono::steady_clock::now() + deadline;
    size_t closed = 0;
    for (auto& s : sockets) {
        closed += closed_before(s, until) ? 1 : 0;
    }
    std::printf("%zu of %zu connections closed by the broker\n", closed, sockets.size());
    return closed == sockets.size();
}

class pre_auth_test : public hostile_test {
protected:
    void start_secure() {
        ASSERT_TRUE(succeeded(sh("command -v openssl")))
            << "openssl is not installed (scripts/setup.sh --with-tests)";
        dir = fs::temp_directory_path() / ("spool-hostile-tls-" + std::to_string(::getpid()));
        fs::create_directories(dir);
        ASSERT_EQ(make_pki(dir), "");
        plain_port = free_port();
        tls_port = free_port();
        sasl_port = free_port();
        auto at = [](uint16_t p) { return "127.0.0.1:" + std::to_string(p); };
        start({"listeners=PLAINTEXT://" + at(plain_port) + ",TLS://" + at(tls_port) + ",SASL://" +
                   at(sasl_port),
               "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,TLS:SSL,SASL:SASL_PLAINTEXT",
               "ssl.keystore.type=PEM", "ssl.keystore.location=" + (dir / "broker.pem").string(),
               "ssl.truststore.type=PEM", "ssl.truststore.location=" + (dir / "ca.pem").string(),
               "ssl.handshake.timeout.ms=2000", "sasl.enabled.mechanisms=PLAIN",
               "connection.failed.authentication.delay.ms=500",
               "listener.name.sasl.plain.sasl.jaas.config="
               "org.apache.kafka.common.security.plain.PlainLoginModule required "
               "user_alice=\"alice-secret\";"});
    }
    void TearDown() override {
        hostile_test::TearDown();
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    // Descriptors and RSS return to the baseline once the hostile sockets are gone, and the
    // well-behaved client is answered.
    void expect_nothing_left(const char* what, int64_t fds_before, int64_t rss_before) {
        auto back = time_until_fds_at_most(pid(), fds_before, 30000ms);
        int64_t rss_after = rss_mb(pid());
        std::printf("%s: fds %lld -> back in %lld ms; RSS %lld -> %lld MB\n", what,
                    (long long)fds_before, (long long)back.count(), (long long)rss_before,
                    (long long)rss_after);
        EXPECT_GE(back.count(), 0) << what << ": fds did not return to " << fds_before << " ("
                                   << fd_count(pid()) << ")";
        EXPECT_LT(rss_after - rss_before, 48) << what << ": memory did not return";
        auto after = measure_latency(port(), good_topic, 50, 2ms);
        EXPECT_EQ(after.answered, after.sent) << what;
    }

    fs::path dir;
    uint16_t tls_port = 0;
    uint16_t sasl_port = 0;
};

TEST_F(pre_auth_test, test_garbage_instead_of_a_client_hello_is_closed_at_once) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    constexpr int n = 200;
    std::vector<raw_socket> sockets;
    std::vector<uint8_t> garbage(512);
    for (size_t i = 0; i < garbage.size(); ++i) {
        garbage[i] = static_cast<uint8_t>(i * 131 + 7);
    }
    for (int i = 0; i < n; ++i) {
        raw_socket s(tls_port);
        ASSERT_TRUE(s.valid()) << "connection " << i;
        s.send(garbage);
        sockets.push_back(std::move(s));
    }
    EXPECT_TRUE(all_closed_by_peer(sockets, 60s)) << "a garbage handshake was left open";
    sockets.clear();
    expect_nothing_left("200 garbage handshakes", fds_before, rss_before);
    auto failed = logged_lines(*broker, "TLS handshake failed");
    EXPECT_GE(failed, 1u);
    EXPECT_LT(failed, size_t(n) / 2) << "failed handshakes must be logged a line a second at most";
}

TEST_F(pre_auth_test, test_client_hello_then_silence_is_closed_by_the_handshake_timeout) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    raw_socket s(tls_port);
    ASSERT_TRUE(s.valid());
    auto hello = client_hello();
    ASSERT_GT(hello.size(), 5u);
    ASSERT_EQ(s.send(hello), hello.size());
    // The server answers (ServerHello ...), then waits for the client's next flight: it never
    // comes.
    bool closed = closed_before(s, std::chrono::steady_clock::now() + 60s);
    EXPECT_TRUE(closed) << "a silent half-handshake was never closed";
    s.close();
    EXPECT_EQ(logged_lines(*broker, "no TLS handshake within 2000 ms"), 1u) << broker->log_text();
    EXPECT_GE(time_until_fds_at_most(pid(), fds_before, 30000ms).count(), 0);
}

// Three floods in a row: the first shows what a flood costs while it lasts; the later ones that it
// leaves nothing behind. The allocator keeps some of the first flood's freed memory for reuse (RSS
// does not fall all the way back), so "nothing leaked" is asserted as no growth from one flood to
// the next, beside a bound on what the first may keep.
TEST_F(pre_auth_test, test_flood_of_unfinished_handshakes_leaves_nothing_behind) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    auto hello = client_hello();
    constexpr int n = 500;
    std::vector<int64_t> rss_after;
    for (int round = 0; round < 3; ++round) {
        std::vector<raw_socket> sockets;
        for (int i = 0; i < n; ++i) {
            raw_socket s(tls_port);
            ASSERT_TRUE(s.valid()) << "connection " << i;
            ASSERT_EQ(s.send(hello), hello.size());
            sockets.push_back(std::move(s));
        }
        // Served while the flood is held open.
        auto during = measure_latency(port(), good_topic, 100, 2ms);
        EXPECT_EQ(during.answered, during.sent);
        int64_t rss_held = rss_mb(pid());
        // Every half-handshake is closed by the broker (ssl.handshake.timeout.ms), not the test.
        EXPECT_TRUE(all_closed_by_peer(sockets, 90s)) << "a half-handshake was never closed";
        sockets.clear();
        auto back = time_until_fds_at_most(pid(), fds_before, 30000ms);
        EXPECT_GE(back.count(), 0) << "round " << round << ": fds did not return to "
                                   << fds_before << " (" << fd_count(pid()) << ")";
        rss_after.push_back(rss_mb(pid()));
        std::printf("500 unfinished handshakes, round %d: RSS %lld -> held %lld -> %lld MB\n",
                    round, (long long)rss_before, (long long)rss_held,
                    (long long)rss_after.back());
    }
    EXPECT_LT(rss_after.front() - rss_before, 96) << "what the first flood may keep";
    EXPECT_LT(rss_after.back() - rss_after.front(), 16) << "each flood must not add to the last";
    auto after = measure_latency(port(), good_topic, 50, 2ms);
    EXPECT_EQ(after.answered, after.sent);
    auto logged = logged_lines(*broker, "no TLS handshake within");
    EXPECT_GE(logged, 1u);
    EXPECT_LT(logged, size_t(3 * n) / 2)
        << "timed-out handshakes must be logged a line a second at most";
}

TEST_F(pre_auth_test, test_sasl_frames_beyond_the_receive_limit_close_without_being_read) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    // 200 clients each claim 600 KiB (over the 512 KiB sasl.server.max.receive.size) and send
    // 64 KiB of it: if the broker read or allocated the frames, it would hold 120 MB.
    std::vector<uint8_t> body(64 * 1024, 0x41);
    std::vector<raw_socket> sockets;
    for (int i = 0; i < 200; ++i) {
        raw_socket s(sasl_port);
        ASSERT_TRUE(s.valid()) << "connection " << i;
        s.send(be32(600 * 1024));
        s.set_non_blocking();
        s.send(body);
        sockets.push_back(std::move(s));
    }
    EXPECT_TRUE(all_closed_by_peer(sockets, 60s)) << "an oversized pre-authentication frame was "
                                                     "left open";
    EXPECT_LT(rss_mb(pid()) - rss_before, 48) << "claimed bytes must not be allocated";
    sockets.clear();
    expect_nothing_left("200 oversized SASL frames", fds_before, rss_before);
}

TEST_F(pre_auth_test, test_sasl_listener_closes_other_apis_before_authentication) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    auto frame = pr::encode_request(1, "hostile", 9, pr::metadata_request{});
    std::vector<raw_socket> sockets;
    for (int i = 0; i < 100; ++i) {
        raw_socket s(sasl_port);
        ASSERT_TRUE(s.valid());
        ASSERT_EQ(s.send(frame), frame.size());
        sockets.push_back(std::move(s));
    }
    EXPECT_TRUE(all_closed_by_peer(sockets, 60s)) << "a Metadata request before SASL was served";
    sockets.clear();
    expect_nothing_left("100 requests before SASL", fds_before, rss_before);
}

TEST_F(pre_auth_test, test_failed_authentications_are_answered_then_closed) {
    start_secure();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    for (int i = 0; i < 20; ++i) {
        kafka_client c(sasl_port);
        c.set_read_timeout(30s);
        pr::sasl_handshake_request hs;
        hs.mechanism = "PLAIN";
        auto h = c.call<pr::sasl_handshake_request, pr::sasl_handshake_response>(1, hs);
        ASSERT_TRUE(h.has_value());
        ASSERT_EQ(h->error_code, 0);
        pr::sasl_authenticate_request a;
        std::string token("\0alice\0wrong", 12);
        a.auth_bytes.assign(token.begin(), token.end());
        auto r = c.call<pr::sasl_authenticate_request, pr::sasl_authenticate_response>(2, a);
        ASSERT_TRUE(r.has_value()) << "a failed authentication must be answered";
        EXPECT_EQ(r->error_code, 58);  // SASL_AUTHENTICATION_FAILED
        EXPECT_TRUE(c.closed_by_peer()) << "then the connection closes";
    }
    expect_nothing_left("20 failed authentications", fds_before, rss_before);
}

}  // namespace
}  // namespace spool::tests::hostile
