#include "broker/security/jwks_source.h"

#include "common/log.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace spool::broker::security {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;

// Largest JWKS document read: identity providers serve a few KiB.
constexpr size_t max_document = 1 << 20;
constexpr auto unknown_key_refresh_interval = std::chrono::seconds(10);
constexpr auto file_check_interval = std::chrono::seconds(1);

struct parsed_url {
    std::string scheme, host, port, target;
};

std::optional<parsed_url> parse_url(const std::string& url) {
    auto colon = url.find("://");
    if (colon == std::string::npos) {
        return std::nullopt;
    }
    parsed_url u;
    u.scheme = url.substr(0, colon);
    auto rest = url.substr(colon + 3);
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    u.target = slash == std::string::npos ? "/" : rest.substr(slash);
    auto port_at = authority.rfind(':');
    if (port_at != std::string::npos && authority.find(']') == std::string::npos) {
        u.host = authority.substr(0, port_at);
        u.port = authority.substr(port_at + 1);
    } else {
        u.host = authority;
        u.port = u.scheme == "https" ? "443" : "80";
    }
    if (u.host.empty()) {
        return std::nullopt;
    }
    return u;
}

// `file:/path`, `file:///path` or `file://localhost/path`.
std::string file_path(const std::string& url) {
    std::string rest = url.substr(5);
    if (rest.starts_with("//localhost/")) {
        return rest.substr(11);
    }
    if (rest.starts_with("//")) {
        return rest.substr(2);
    }
    return rest;
}

template <class Stream>
std::optional<std::string> get(Stream& stream, const parsed_url& u, std::string* error) {
    http::request<http::empty_body> req{http::verb::get, u.target, 11};
    req.set(http::field::host, u.host);
    req.set(http::field::accept, "application/json");
    req.set(http::field::user_agent, "spool-broker");
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(max_document);
    http::read(stream, buffer, parser);
    auto& res = parser.get();
    if (res.result() != http::status::ok) {
        *error = fmt::format("HTTP {} from {}", res.result_int(), u.host);
        return std::nullopt;
    }
    return std::move(res.body());
}

std::optional<std::string> fetch(const parsed_url& u, std::chrono::milliseconds timeout,
                                 std::string* error) {
    try {
        asio::io_context io;
        asio::ip::tcp::resolver resolver(io);
        auto endpoints = resolver.resolve(u.host, u.port);
        if (u.scheme == "http") {
            beast::tcp_stream stream(io);
            stream.expires_after(timeout);
            stream.connect(endpoints);
            return get(stream, u, error);
        }
        asio::ssl::context ctx(asio::ssl::context::tls_client);
        ctx.set_default_verify_paths();
        ctx.set_verify_mode(asio::ssl::verify_peer);
        beast::ssl_stream<beast::tcp_stream> stream(io, ctx);
        SSL_set_tlsext_host_name(stream.native_handle(), u.host.c_str());
        stream.set_verify_callback(asio::ssl::host_name_verification(u.host));
        beast::get_lowest_layer(stream).expires_after(timeout);
        beast::get_lowest_layer(stream).connect(endpoints);
        stream.handshake(asio::ssl::stream_base::client);
        return get(stream, u, error);
    } catch (const std::exception& e) {
        *error = e.what();
        return std::nullopt;
    }
}

}  // namespace

std::unique_ptr<jwks_source> jwks_source::make(jwks_source_options options, std::string* error) {
    const auto& url = options.url;
    if (url.starts_with("file:")) {
        if (file_path(url).empty()) {
            *error = fmt::format("sasl.oauthbearer.jwks.endpoint.url {} names no file", url);
            return nullptr;
        }
    } else if (auto u = parse_url(url); !u || (u->scheme != "https" && u->scheme != "http")) {
        *error = fmt::format(
            "sasl.oauthbearer.jwks.endpoint.url {} is not a file:, https: or http: URL", url);
        return nullptr;
    }
    return std::unique_ptr<jwks_source>(new jwks_source(std::move(options)));
}

jwks_source::jwks_source(jwks_source_options options) : _options(std::move(options)) {}

jwks_source::~jwks_source() {
    {
        std::lock_guard lock(_mutex);
        _stopping = true;
    }
    _wake.notify_all();
    if (_thread.joinable()) {
        _thread.join();
    }
}

void jwks_source::start() {
    _thread = std::thread([this] { run(); });
}

void jwks_source::refresh_soon() {
    {
        std::lock_guard lock(_mutex);
        auto now = std::chrono::steady_clock::now();
        if (now - _last_requested_refresh < unknown_key_refresh_interval) {
            return;
        }
        _last_requested_refresh = now;
        _refresh_requested = true;
    }
    _wake.notify_all();
}

std::optional<std::string> jwks_source::read_document(std::string* error) {
    const auto& url = _options.url;
    if (!url.starts_with("file:")) {
        return fetch(*parse_url(url), _options.request_timeout, error);
    }
    fs::path path = file_path(url);
    std::error_code ec;
    auto mtime = fs::last_write_time(path, ec);
    auto size = ec ? 0 : fs::file_size(path, ec);
    if (ec) {
        *error = fmt::format("{}: {}", path.string(), ec.message());
        return std::nullopt;
    }
    std::pair<int64_t, int64_t> seen{mtime.time_since_epoch().count(),
                                     static_cast<int64_t>(size)};
    if (_file_seen == seen && current()) {
        return std::string();  // unchanged: nothing to parse
    }
    if (size > max_document) {
        *error = fmt::format("{} is larger than {} bytes", path.string(), max_document);
        return std::nullopt;
    }
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        *error = fmt::format("{} could not be read", path.string());
        return std::nullopt;
    }
    _file_seen = seen;
    return text.str();
}

bool jwks_source::load_once(std::string* error) {
    auto doc = read_document(error);
    if (!doc) {
        return false;
    }
    if (doc->empty() && current()) {
        return true;
    }
    std::vector<std::string> skipped;
    auto set = parse_jwks(*doc, error, &skipped);
    if (!set) {
        _file_seen.reset();  // a half-written file: read it again next time
        return false;
    }
    if (set->keys.empty()) {
        *error = fmt::format("no key Spool can verify with ({})", fmt::join(skipped, "; "));
        _file_seen.reset();
        return false;
    }
    auto log = log::get("security");
    for (const auto& s : skipped) {
        log->info("JWKS {}: key left out: {}", _options.url, s);
    }
    log->info("JWKS {}: {} verification key(s) loaded", _options.url, set->keys.size());
    _current.store(std::make_shared<const jwk_set>(std::move(*set)));
    return true;
}

void jwks_source::run() {
    const bool file = _options.url.starts_with("file:");
    auto backoff = _options.retry_backoff;
    bool failing = false;
    while (true) {
        std::string error;
        bool ok = load_once(&error);
        if (!ok && !failing) {
            log::get("security")->warn(
                "JWKS {} could not be loaded: {}; {}", _options.url, error,
                current() ? "the previous key set stays in use" : "OAUTHBEARER logins fail until it loads");
        }
        if (ok && failing) {
            log::get("security")->info("JWKS {} loads again", _options.url);
        }
        failing = !ok;
        std::chrono::milliseconds wait = file ? std::chrono::milliseconds(file_check_interval)
                                              : _options.refresh;
        if (!ok && !file) {
            wait = backoff;
            backoff = std::min(backoff * 2, _options.retry_backoff_max);
        } else if (ok) {
            backoff = _options.retry_backoff;
        }
        std::unique_lock lock(_mutex);
        _wake.wait_for(lock, wait, [&] { return _stopping || _refresh_requested; });
        if (_stopping) {
            return;
        }
        _refresh_requested = false;
    }
}

}  // namespace spool::broker::security
