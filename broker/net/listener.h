#pragma once

// Listener URIs as Kafka writes them: "PLAINTEXT://host:port" ("[::1]:9092" for IPv6; an empty
// host binds every interface). Only PLAINTEXT is served so far.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace spool::broker::net {

struct listener_address {
    std::string name;  // "PLAINTEXT"
    std::string host;  // may be empty
    uint16_t port = 0;
};

// Parses one URI; on error returns nullopt and sets *error naming the text.
std::optional<listener_address> parse_listener(std::string_view uri, std::string* error);

}  // namespace spool::broker::net
