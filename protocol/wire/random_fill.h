#pragma once

// Random values for the generated randomize() functions: round-trip tests, the cross-check and
// fuzz seeds fill every field a version has. Values favour edges (0, -1, extremes) because that
// is where varint and length encodings break.

#include "protocol/wire/records_field.h"
#include "protocol/wire/tagged_fields.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace spool::protocol::wire {

template <class T>
T random_value(std::mt19937_64& rng) {
    if constexpr (std::is_same_v<T, bool>) {
        return (rng() & 1) != 0;
    } else if constexpr (std::is_integral_v<T>) {
        switch (rng() % 6) {
            case 0:
                return 0;
            case 1:
                return std::is_signed_v<T> ? static_cast<T>(-1) : T{1};
            case 2:
                return std::numeric_limits<T>::max();
            case 3:
                return std::numeric_limits<T>::min();
            case 4:
                return static_cast<T>(rng() % 200);
            default:
                return static_cast<T>(rng());
        }
    } else if constexpr (std::is_same_v<T, double>) {
        return static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 64.0;
    } else if constexpr (std::is_same_v<T, std::string>) {
        std::string s(rng() % 12, ' ');
        for (auto& c : s) {
            c = static_cast<char>('a' + rng() % 26);
        }
        return s;
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
        std::vector<uint8_t> b(rng() % 24);
        for (auto& c : b) {
            c = static_cast<uint8_t>(rng());
        }
        return b;
    } else if constexpr (std::is_same_v<T, uuid>) {
        uuid u;
        for (auto& c : u.bytes) {
            c = static_cast<uint8_t>(rng());
        }
        return u;
    } else {
        static_assert(sizeof(T) == 0, "no random_value for this type");
    }
}

inline void randomize_records(std::mt19937_64& rng, records_field& r, bool nullable) {
    if (nullable && rng() % 4 == 0) {
        r.set_null();
        return;
    }
    r.clear();
    r.append_owned(random_value<std::vector<uint8_t>>(rng));
}

// Sometimes adds unknown tagged fields with tags far above any Kafka defines, so round trips
// exercise preserving them.
inline void randomize_unknown_tags(std::mt19937_64& rng, unknown_tagged_fields& tags) {
    tags.clear();
    if (rng() % 4 != 0) {
        return;
    }
    uint32_t tag = 1000;
    for (size_t i = 0, n = 1 + rng() % 2; i < n; ++i) {
        tag += 1 + static_cast<uint32_t>(rng() % 200);
        tags.append(tag, random_value<std::vector<uint8_t>>(rng));
    }
}

}  // namespace spool::protocol::wire
