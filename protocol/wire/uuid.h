#pragma once

// Kafka's 16-byte UUID (topic ids, directory ids). On the wire it is 16 raw bytes, most
// significant first; as text it is Kafka's form, URL-safe base64 without padding (22 chars).
//
// A plain value type: copy freely, no threading concerns.

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace spool::protocol {

struct uuid {
    std::array<uint8_t, 16> bytes{};

    // A random id for a new topic, never the zero id, the reserved metadata id (1), or one whose
    // text starts with '-' (Kafka avoids those so ids can be passed on command lines).
    static uuid random();
    static std::optional<uuid> parse(std::string_view text);

    [[nodiscard]] std::string to_string() const;
    [[nodiscard]] bool is_zero() const { return *this == uuid{}; }

    auto operator<=>(const uuid&) const = default;
};

}  // namespace spool::protocol

template <>
struct std::hash<spool::protocol::uuid> {
    size_t operator()(const spool::protocol::uuid& u) const noexcept {
        uint64_t a = 0;
        uint64_t b = 0;
        for (int i = 0; i < 8; ++i) {
            a = (a << 8) | u.bytes[i];
            b = (b << 8) | u.bytes[8 + i];
        }
        return std::hash<uint64_t>{}(a ^ (b * 0x9e3779b97f4a7c15ULL));
    }
};
