#pragma once

// Big-endian loads and stores for on-disk index entries and batch headers.

#include <bit>
#include <cstdint>
#include <cstring>

namespace spool::broker::storage::be {

template <class T>
inline T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    if constexpr (std::endian::native == std::endian::little) {
        v = static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)) >> (64 - 8 * sizeof(T)));
    }
    return v;
}

template <class T>
inline void store(uint8_t* p, T v) {
    if constexpr (std::endian::native == std::endian::little) {
        v = static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)) >> (64 - 8 * sizeof(T)));
    }
    std::memcpy(p, &v, sizeof v);
}

}  // namespace spool::broker::storage::be
