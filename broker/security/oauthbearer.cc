#include "broker/security/oauthbearer.h"

#include <algorithm>
#include <cctype>

namespace spool::broker::security {

namespace {

constexpr char separator = '\x01';

// Kafka's SASLNAME: %x01-7F except '=' and ',', or the escapes =2C and =3D.
std::optional<std::string> saslname(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '=') {
            if (s.substr(i, 3) == "=2C") {
                out += ',';
            } else if (s.substr(i, 3) == "=3D") {
                out += '=';
            } else {
                return std::nullopt;
            }
            i += 2;
        } else if (c == ',' || c == 0 || c > 0x7f) {
            return std::nullopt;
        } else {
            out += static_cast<char>(c);
        }
    }
    if (out.empty()) {
        return std::nullopt;
    }
    return out;
}

bool key_ok(std::string_view k) {
    return !k.empty() && std::ranges::all_of(k, [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

// Kafka's VALUE: [\x21-\x7E \t\r\n]+
bool value_ok(std::string_view v) {
    return !v.empty() && std::ranges::all_of(v, [](char ch) {
        auto c = static_cast<unsigned char>(ch);
        return (c >= 0x21 && c <= 0x7e) || c == ' ' || c == '\t' || c == '\r' || c == '\n';
    });
}

bool token_ok(std::string_view t) {
    return !t.empty() && std::ranges::all_of(t, [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '-' || ch == '_' ||
               ch == '.';
    });
}

}  // namespace

std::optional<oauthbearer_initial_response> parse_oauthbearer_initial_response(
    std::string_view text) {
    // GS2 header: "n," then an optional "a=<authzid>", then ",".
    if (!text.starts_with("n,")) {
        return std::nullopt;
    }
    text.remove_prefix(2);
    oauthbearer_initial_response out;
    auto comma = text.find(',');
    if (comma == std::string_view::npos) {
        return std::nullopt;
    }
    if (comma > 0) {
        auto a = text.substr(0, comma);
        if (!a.starts_with("a=")) {
            return std::nullopt;
        }
        auto name = saslname(a.substr(2));
        if (!name) {
            return std::nullopt;
        }
        out.authzid = std::move(*name);
    }
    text.remove_prefix(comma + 1);
    // ^A (key=value^A)* ^A
    if (text.size() < 2 || text.front() != separator || text.back() != separator) {
        return std::nullopt;
    }
    text.remove_prefix(1);
    text.remove_suffix(1);
    bool have_auth = false;
    while (!text.empty()) {
        auto end = text.find(separator);
        if (end == std::string_view::npos) {
            return std::nullopt;
        }
        auto pair = text.substr(0, end);
        text.remove_prefix(end + 1);
        auto eq = pair.find('=');
        if (eq == std::string_view::npos || !key_ok(pair.substr(0, eq)) ||
            !value_ok(pair.substr(eq + 1))) {
            return std::nullopt;
        }
        std::string key(pair.substr(0, eq));
        std::string_view value = pair.substr(eq + 1);
        if (key != "auth") {
            out.extensions[key] = std::string(value);
            continue;
        }
        // auth=<scheme> <token>, the scheme Bearer in any case.
        auto space = value.find(' ');
        if (space == std::string_view::npos) {
            return std::nullopt;
        }
        auto scheme = value.substr(0, space);
        auto token = value.substr(value.find_first_not_of(' ', space) == std::string_view::npos
                                      ? value.size()
                                      : value.find_first_not_of(' ', space));
        std::string lower(scheme);
        for (char& c : lower) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        if (lower != "bearer" || !token_ok(token)) {
            return std::nullopt;
        }
        out.token = std::string(token);
        have_auth = true;
    }
    if (!have_auth) {
        return std::nullopt;
    }
    return out;
}

jwt_verdict oauthbearer_validator::validate(std::string_view token, int64_t now_ms) const {
    auto keys = _keys->current();
    if (!keys) {
        jwt_verdict v;
        v.error = "the JWKS has not been loaded yet";
        return v;
    }
    auto verdict = validate_jwt(token, *keys, _rules, now_ms);
    if (verdict.unknown_key) {
        _keys->refresh_soon();
    }
    return verdict;
}

}  // namespace spool::broker::security
