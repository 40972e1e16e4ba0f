// gzip content coding: Accept-Encoding as clients send it, the stream zlib itself decodes, and
// a real server answering a real Beast client both ways.

#include "common/http/content_coding.h"

#include "common/http/server.h"
#include "common/http/tests/test_client.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace spool::http {
namespace {

request with_accept_encoding(std::string value) {
    request req{verb::get, "/metrics", 11};
    req.set(beast_http::field::accept_encoding, value);
    return req;
}

// Decodes with zlib's own gzip reader, independent of the encoder under test.
std::string gunzip(const std::string& in) {
    z_stream s{};
    EXPECT_EQ(inflateInit2(&s, 15 + 16), Z_OK);  // gzip only: a zlib or raw stream fails
    std::string out;
    char buf[64 * 1024];
    s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    s.avail_in = static_cast<uInt>(in.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        s.next_out = reinterpret_cast<Bytef*>(buf);
        s.avail_out = sizeof buf;
        rc = inflate(&s, Z_NO_FLUSH);
        out.append(buf, sizeof buf - s.avail_out);
    }
    EXPECT_EQ(rc, Z_STREAM_END) << "not one complete gzip stream";
    EXPECT_EQ(s.avail_in, 0u) << "bytes after the gzip stream";
    inflateEnd(&s);
    return out;
}

// Looks like a scrape: many near-identical lines.
std::string metrics_like_text(int lines) {
    std::string text;
    for (int p = 0; p < lines; ++p) {
        text += "spool_log_end_offset{topic=\"big\",partition=\"" + std::to_string(p) + "\"} " +
                std::to_string(p * 7) + "\n";
    }
    return text;
}

TEST(content_coding, test_accepts_gzip_as_prometheus_and_browsers_ask) {
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("gzip")));  // Prometheus
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("gzip, deflate, br")));
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("deflate, GZIP;q=0.5")));
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("x-gzip")));
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("*")));
    EXPECT_TRUE(accepts_gzip(with_accept_encoding(" br ,\tgzip ; q=1.0 ")));
}

TEST(content_coding, test_no_header_or_a_refusal_keeps_the_body_plain) {
    EXPECT_FALSE(accepts_gzip(request{verb::get, "/metrics", 11}));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("")));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("identity")));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("deflate, br")));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("gzip;q=0")));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("gzip; q=0.000")));
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("*;q=0")));
    // An explicit refusal of gzip wins over the wildcard, and the reverse.
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("gzip;q=0, *")));
    EXPECT_TRUE(accepts_gzip(with_accept_encoding("*;q=0, gzip")));
    // "gzipped" is another coding, not gzip.
    EXPECT_FALSE(accepts_gzip(with_accept_encoding("gzipped")));
}

TEST(content_coding, test_gzip_is_a_gzip_stream_that_decodes_to_the_input) {
    for (const std::string& text : {std::string(), std::string("x"), metrics_like_text(50'000)}) {
        auto packed = gzip(text);
        ASSERT_TRUE(packed) << packed.error().message();
        ASSERT_GE(packed.value().size(), 2u);
        EXPECT_EQ(static_cast<uint8_t>(packed.value()[0]), 0x1f);  // RFC 1952 magic
        EXPECT_EQ(static_cast<uint8_t>(packed.value()[1]), 0x8b);
        EXPECT_EQ(gunzip(packed.value()), text);
    }
    auto big = metrics_like_text(50'000);
    EXPECT_LT(gzip(big).value().size() * 5, big.size()) << "metrics text should shrink 5x or more";
}

TEST(content_coding, test_encode_if_accepted_compresses_and_says_so_only_when_asked) {
    const auto text = metrics_like_text(1000);
    auto res = text_response(status::ok, text, "text/plain");
    encode_if_accepted(with_accept_encoding("gzip"), res);
    EXPECT_EQ(res[beast_http::field::content_encoding], "gzip");
    EXPECT_EQ(res[beast_http::field::vary], "Accept-Encoding");
    EXPECT_EQ(gunzip(res.body()), text);

    auto plain = text_response(status::ok, text, "text/plain");
    encode_if_accepted(with_accept_encoding("identity"), plain);
    EXPECT_EQ(plain.find(beast_http::field::content_encoding), plain.end());
    EXPECT_EQ(plain[beast_http::field::vary], "Accept-Encoding");
    EXPECT_EQ(plain.body(), text);
}

TEST(content_coding, test_server_answers_gzip_to_a_client_that_accepts_it) {
    const auto text = metrics_like_text(20'000);
    router r;
    r.add(verb::get, "/metrics", [&text](const request& req, const path_params&) {
        auto res = text_response(status::ok, text, "text/plain");
        encode_if_accepted(req, res);
        return res;
    });
    server_options o;
    o.endpoint = parse_endpoint("127.0.0.1:0").value();
    server s(o, std::move(r));
    ASSERT_TRUE(s.start());

    auto plain = testing::get(s.local_endpoint(), "/metrics");
    EXPECT_EQ(plain.find(beast_http::field::content_encoding), plain.end());
    EXPECT_EQ(plain.body(), text);

    testing::bhttp::request<testing::bhttp::string_body> req{verb::get, "/metrics", 11};
    req.set(beast_http::field::host, "localhost");
    req.set(beast_http::field::accept_encoding, "gzip");
    boost::asio::io_context io;
    auto fut = boost::asio::co_spawn(
        io, testing::one_request(s.local_endpoint(), std::move(req), std::chrono::seconds(5)),
        boost::asio::use_future);
    io.run();
    auto packed = fut.get();
    EXPECT_EQ(packed[beast_http::field::content_encoding], "gzip");
    EXPECT_EQ(packed[beast_http::field::content_length], std::to_string(packed.body().size()));
    EXPECT_LT(packed.body().size() * 5, text.size());
    EXPECT_EQ(gunzip(packed.body()), text);
    s.stop();
}

}  // namespace
}  // namespace spool::http
