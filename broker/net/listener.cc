#include "broker/net/listener.h"

#include <fmt/format.h>

#include <charconv>

namespace spool::broker::net {

std::optional<listener_address> parse_listener(std::string_view uri, std::string* error) {
    auto bad = [&](std::string_view why) -> std::optional<listener_address> {
        *error = fmt::format("invalid listener '{}': {}", uri, why);
        return std::nullopt;
    };
    auto sep = uri.find("://");
    if (sep == std::string_view::npos || sep == 0) {
        return bad("expected NAME://host:port");
    }
    listener_address out;
    out.name = std::string(uri.substr(0, sep));
    if (out.name != "PLAINTEXT") {
        return bad("only PLAINTEXT listeners are supported");
    }
    std::string_view rest = uri.substr(sep + 3);
    std::string_view host;
    std::string_view port;
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
            return bad("expected [ipv6]:port");
        }
        host = rest.substr(1, close - 1);
        port = rest.substr(close + 2);
    } else {
        auto colon = rest.rfind(':');
        if (colon == std::string_view::npos) {
            return bad("missing port");
        }
        host = rest.substr(0, colon);
        port = rest.substr(colon + 1);
    }
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (ec != std::errc() || ptr != port.data() + port.size() || port.empty() || value > 65535) {
        return bad("port must be 0-65535");
    }
    out.host = std::string(host);
    out.port = static_cast<uint16_t>(value);
    return out;
}

}  // namespace spool::broker::net
