#include "common/http/content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <optional>
#include <system_error>

namespace spool::http {

namespace {

std::string_view trim(std::string_view s) {
    auto space = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && space(s.back()))
        s.remove_suffix(1);
    return s;
}

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// A qvalue is 0 when its digits are all zero ("0", "0.", "0.000"); anything else prefers it.
// A malformed q is read as acceptable: the coding was listed, so the client can decode it.
bool q_is_zero(std::string_view q) {
    if (q.empty() || q.front() != '0')
        return false;
    q.remove_prefix(1);
    if (q.empty())
        return true;
    if (q.front() != '.')
        return false;
    q.remove_prefix(1);
    return q.find_first_not_of('0') == std::string_view::npos;
}

// One element of Accept-Encoding: "coding *( OWS ";" OWS name=value )". Returns whether the
// coding is wanted (q > 0) if the element names `coding`.
std::optional<bool> element_accepts(std::string_view element, std::string_view coding) {
    auto semi = element.find(';');
    if (!iequals(trim(element.substr(0, semi)), coding))
        return std::nullopt;
    while (semi != std::string_view::npos) {
        element.remove_prefix(semi + 1);
        semi = element.find(';');
        auto param = trim(element.substr(0, semi));
        auto eq = param.find('=');
        if (eq != std::string_view::npos && iequals(trim(param.substr(0, eq)), "q"))
            return !q_is_zero(trim(param.substr(eq + 1)));
    }
    return true;
}

class deflater {
public:
    deflater() {
        // 15 + 16: a 32 KiB window with a gzip (RFC 1952) header and trailer instead of zlib's.
        _ready = deflateInit2(&_stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) ==
                 Z_OK;
    }
    ~deflater() {
        if (_ready)
            deflateEnd(&_stream);
    }
    deflater(const deflater&) = delete;
    deflater& operator=(const deflater&) = delete;

    result<std::string> run(std::string_view in) {
        if (!_ready || in.size() > UINT_MAX)
            return std::make_error_code(std::errc::not_enough_memory);
        _stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
        _stream.avail_in = static_cast<uInt>(in.size());
        // Text compresses ~10x or better: start at an eighth and grow, rather than holding
        // deflateBound (more than the input) for every scrape.
        std::string out(in.size() / 8 + 1024, '\0');
        size_t used = 0;
        for (;;) {
            _stream.next_out = reinterpret_cast<Bytef*>(out.data() + used);
            _stream.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - used, UINT_MAX));
            const size_t room = _stream.avail_out;
            int rc = deflate(&_stream, Z_FINISH);
            used += room - _stream.avail_out;
            if (rc == Z_STREAM_END)
                break;
            if (rc != Z_OK && rc != Z_BUF_ERROR)
                return std::make_error_code(std::errc::not_enough_memory);
            out.resize(out.size() * 2);
        }
        out.resize(used);
        return out;
    }

private:
    z_stream _stream{};
    bool _ready = false;
};

}  // namespace

bool accepts_gzip(const request& req) {
    auto it = req.find(beast_http::field::accept_encoding);
    if (it == req.end())
        return false;
    std::string_view header(it->value().data(), it->value().size());
    std::optional<bool> gzip_named, any_named;
    while (!header.empty()) {
        auto comma = header.find(',');
        auto element = header.substr(0, comma);
        if (auto a = element_accepts(element, "gzip"); a && !gzip_named)
            gzip_named = a;
        if (auto a = element_accepts(element, "x-gzip"); a && !gzip_named)
            gzip_named = a;
        if (auto a = element_accepts(element, "*"); a && !any_named)
            any_named = a;
        header.remove_prefix(comma == std::string_view::npos ? header.size() : comma + 1);
    }
    // An explicit gzip entry wins over "*" (RFC 9110 12.5.3).
    return gzip_named.value_or(any_named.value_or(false));
}

result<std::string> gzip(std::string_view body) {
    deflater d;
    return d.run(body);
}

void encode_if_accepted(const request& req, response& res) {
    res.set(beast_http::field::vary, "Accept-Encoding");
    if (res.body().empty() || !accepts_gzip(req))
        return;
    auto packed = gzip(res.body());
    if (!packed)
        return;
    res.body() = std::move(packed).value();
    res.set(beast_http::field::content_encoding, "gzip");
}

}  // namespace spool::http
