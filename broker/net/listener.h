#pragma once

// Listener URIs as Kafka writes them: "NAME://host:port" ("[::1]:9092" for IPv6; an empty host
// binds every interface). NAME is any name listener.security.protocol.map maps to a security
// protocol (e.g. "POD:PLAINTEXT", "CLIENT:SASL_SSL"): several listeners let one broker advertise
// a different address and security to each kind of client.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::net {

struct listener_address {
    std::string name;  // "PLAINTEXT", or a name listener.security.protocol.map maps
    std::string host;  // may be empty
    uint16_t port = 0;
};

// Parses one URI; on error returns nullopt and sets *error naming the text.
std::optional<listener_address> parse_listener(std::string_view uri, std::string* error);

// The security protocol `name` maps to in `protocol_map` (listener.security.protocol.map
// entries "NAME:PROTOCOL"); empty when it has none.
std::string security_protocol_of(std::string_view name,
                                 const std::vector<std::string>& protocol_map);

// Kafka's rules for a broker's listeners, checked at start: every name has a security protocol
// in `protocol_map`, one of PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL; bound names and ports
// are unique; every advertised name is a bound one.
// Returns the first problem, empty when they are fine.
std::string check_listeners(const std::vector<listener_address>& bound,
                            const std::vector<listener_address>& advertised,
                            const std::vector<std::string>& protocol_map);

}  // namespace spool::broker::net
