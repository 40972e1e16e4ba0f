#include "protocol/wire/uuid.h"

#include <random>

namespace spool::protocol {

namespace {

constexpr std::string_view alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int decode_char(char c) {
    auto pos = alphabet.find(c);
    return pos == std::string_view::npos ? -1 : static_cast<int>(pos);
}

}  // namespace

uuid uuid::random() {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    for (;;) {
        uuid u;
        for (int half = 0; half < 2; ++half) {
            uint64_t v = rng();
            for (int i = 0; i < 8; ++i) {
                u.bytes[half * 8 + i] = static_cast<uint8_t>(v >> (56 - 8 * i));
            }
        }
        uuid one;
        one.bytes[15] = 1;
        if (u.is_zero() || u == one || u.to_string().front() == '-') {
            continue;
        }
        return u;
    }
}

std::string uuid::to_string() const {
    std::string out;
    out.reserve(22);
    uint32_t acc = 0;
    int bits = 0;
    for (uint8_t b : bytes) {
        acc = (acc << 8) | b;
        bits += 8;
        while (bits >= 6) {
            bits -= 6;
            out.push_back(alphabet[(acc >> bits) & 0x3f]);
        }
    }
    // 128 bits leave 2 over: they become the high bits of a last character.
    out.push_back(alphabet[(acc << (6 - bits)) & 0x3f]);
    return out;
}

std::optional<uuid> uuid::parse(std::string_view text) {
    if (text.size() != 22) {
        return std::nullopt;
    }
    uuid u;
    uint32_t acc = 0;
    int bits = 0;
    size_t at = 0;
    for (char c : text) {
        int v = decode_char(c);
        if (v < 0) {
            return std::nullopt;
        }
        acc = (acc << 6) | static_cast<uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (at < u.bytes.size()) {
                u.bytes[at++] = static_cast<uint8_t>(acc >> bits);
            }
        }
    }
    // The 4 unused low bits of the last character must be zero, so each id has one spelling.
    if ((acc & ((1u << bits) - 1)) != 0) {
        return std::nullopt;
    }
    return u;
}

}  // namespace spool::protocol
