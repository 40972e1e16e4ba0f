#include "broker/net/listener.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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
    // Kafka's listener names: letters, digits and underscores (ListenerName is case-sensitive).
    for (char ch : out.name) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') {
            return bad("a listener name has only letters, digits and '_'");
        }
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

std::string security_protocol_of(std::string_view name,
                                 const std::vector<std::string>& protocol_map) {
    for (const auto& entry : protocol_map) {
        auto colon = entry.find(':');
        if (colon != std::string::npos && std::string_view(entry).substr(0, colon) == name) {
            return entry.substr(colon + 1);
        }
    }
    return {};
}

std::string check_listeners(const std::vector<listener_address>& bound,
                            const std::vector<listener_address>& advertised,
                            const std::vector<std::string>& protocol_map) {
    for (size_t i = 0; i < bound.size(); ++i) {
        const auto& l = bound[i];
        auto protocol = security_protocol_of(l.name, protocol_map);
        if (protocol.empty()) {
            return fmt::format(
                "listener {} has no security protocol in listener.security.protocol.map (add "
                "{}:PLAINTEXT)",
                l.name, l.name);
        }
        if (protocol != "PLAINTEXT" && protocol != "SSL" && protocol != "SASL_PLAINTEXT" &&
            protocol != "SASL_SSL") {
            return fmt::format(
                "listener {} uses {}; the security protocols are PLAINTEXT, SSL, SASL_PLAINTEXT "
                "and SASL_SSL",
                l.name, protocol);
        }
        for (size_t j = 0; j < i; ++j) {
            if (bound[j].name == l.name) {
                return fmt::format("listener name {} appears twice in listeners", l.name);
            }
            if (l.port != 0 && bound[j].port == l.port) {
                return fmt::format("listeners {} and {} both use port {}", bound[j].name, l.name,
                                   l.port);
            }
        }
    }
    for (const auto& a : advertised) {
        auto same_name = [&](const listener_address& b) { return b.name == a.name; };
        if (std::find_if(bound.begin(), bound.end(), same_name) == bound.end()) {
            return fmt::format("advertised listener {} is not one of listeners", a.name);
        }
    }
    return {};
}

}  // namespace spool::broker::net
