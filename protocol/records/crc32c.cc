#include "protocol/records/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace spool::protocol::records {

namespace {

constexpr uint32_t polynomial = 0x82f63b78;

inline uint64_t load_u64_le(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

// Slice-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
struct slice_tables {
    std::array<std::array<uint32_t, 256>, 8> table{};

    constexpr slice_tables() {
        for (uint32_t n = 0; n < 256; ++n) {
            uint32_t crc = n;
            for (int k = 0; k < 8; ++k) {
                crc = (crc & 1) ? (crc >> 1) ^ polynomial : crc >> 1;
            }
            table[0][n] = crc;
        }
        for (uint32_t n = 0; n < 256; ++n) {
            uint32_t crc = table[0][n];
            for (size_t k = 1; k < 8; ++k) {
                crc = table[0][crc & 0xff] ^ (crc >> 8);
                table[k][n] = crc;
            }
        }
    }
};

constexpr slice_tables slice{};

#if defined(__x86_64__)

// Linear operators over GF(2) on the 32-bit CRC register, as 32 column vectors. They let the
// three interleaved streams be merged: the register after "A then B" equals
// shift_|B|(crc(A)) ^ crc_from_zero(B).
uint32_t gf2_times(const uint32_t* mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec != 0) {
        if (vec & 1) {
            sum ^= *mat;
        }
        vec >>= 1;
        ++mat;
    }
    return sum;
}

void gf2_square(uint32_t* square, const uint32_t* mat) {
    for (int n = 0; n < 32; ++n) {
        square[n] = gf2_times(mat, mat[n]);
    }
}

// Operator appending len zero bytes (len a power of two) to the register.
void zeros_operator(uint32_t* even, size_t len) {
    uint32_t odd[32];
    odd[0] = polynomial;  // one zero bit
    uint32_t row = 1;
    for (int n = 1; n < 32; ++n) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd);  // two zero bits
    gf2_square(odd, even);  // four zero bits
    for (;;) {
        gf2_square(even, odd);  // 8, 32, 128... bits
        len >>= 1;
        if (len == 0) {
            return;
        }
        gf2_square(odd, even);  // 16, 64, 256... bits
        len >>= 1;
        if (len == 0) {
            std::memcpy(even, odd, sizeof odd);
            return;
        }
    }
}

// The operator as four byte-indexed tables, so applying it costs four lookups.
struct shift_table {
    uint32_t zeros[4][256];

    explicit shift_table(size_t len) {
        uint32_t op[32];
        zeros_operator(op, len);
        for (uint32_t n = 0; n < 256; ++n) {
            zeros[0][n] = gf2_times(op, n);
            zeros[1][n] = gf2_times(op, n << 8);
            zeros[2][n] = gf2_times(op, n << 16);
            zeros[3][n] = gf2_times(op, n << 24);
        }
    }

    uint32_t apply(uint32_t crc) const {
        return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^ zeros[2][(crc >> 16) & 0xff] ^
               zeros[3][crc >> 24];
    }
};

// Stream lengths for the interleaved loops: long for bulk data, short for the tail.
constexpr size_t long_block = 8192;
constexpr size_t short_block = 256;

const shift_table& long_shift() {
    static const shift_table table(long_block);
    return table;
}

const shift_table& short_shift() {
    static const shift_table table(short_block);
    return table;
}

// Runs the three-stream loop over as many 3*block chunks as fit.
__attribute__((target("sse4.2"))) inline uint64_t crc_interleaved(uint64_t crc0,
                                                                  const uint8_t*& next, size_t& len,
                                                                  size_t block,
                                                                  const shift_table& shift) {
    while (len >= block * 3) {
        uint64_t crc1 = 0;
        uint64_t crc2 = 0;
        const uint8_t* end = next + block;
        do {
            crc0 = _mm_crc32_u64(crc0, load_u64_le(next));
            crc1 = _mm_crc32_u64(crc1, load_u64_le(next + block));
            crc2 = _mm_crc32_u64(crc2, load_u64_le(next + 2 * block));
            next += 8;
        } while (next < end);
        crc0 = shift.apply(static_cast<uint32_t>(crc0)) ^ crc1;
        crc0 = shift.apply(static_cast<uint32_t>(crc0)) ^ crc2;
        next += 2 * block;
        len -= 3 * block;
    }
    return crc0;
}

#endif  // __x86_64__

}  // namespace

namespace detail {

uint32_t crc32c_table(uint32_t crc, const uint8_t* data, size_t size) noexcept {
    const auto& t = slice.table;
    crc = ~crc;
    while (size >= 8) {
        uint64_t word = load_u64_le(data) ^ crc;
        crc = t[7][word & 0xff] ^ t[6][(word >> 8) & 0xff] ^ t[5][(word >> 16) & 0xff] ^
              t[4][(word >> 24) & 0xff] ^ t[3][(word >> 32) & 0xff] ^ t[2][(word >> 40) & 0xff] ^
              t[1][(word >> 48) & 0xff] ^ t[0][word >> 56];
        data += 8;
        size -= 8;
    }
    while (size-- > 0) {
        crc = t[0][(crc ^ *data++) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

#if defined(__x86_64__)

__attribute__((target("sse4.2"))) uint32_t crc32c_hardware(uint32_t crc, const uint8_t* data,
                                                           size_t size) noexcept {
    const uint8_t* next = data;
    size_t len = size;
    uint64_t crc0 = ~crc;
    while (len > 0 && (reinterpret_cast<uintptr_t>(next) & 7) != 0) {
        crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *next++);
        --len;
    }
    crc0 = crc_interleaved(crc0, next, len, long_block, long_shift());
    crc0 = crc_interleaved(crc0, next, len, short_block, short_shift());
    while (len >= 8) {
        crc0 = _mm_crc32_u64(crc0, load_u64_le(next));
        next += 8;
        len -= 8;
    }
    while (len > 0) {
        crc0 = _mm_crc32_u8(static_cast<uint32_t>(crc0), *next++);
        --len;
    }
    return ~static_cast<uint32_t>(crc0);
}

bool crc32c_hardware_available() noexcept {
    static const bool available = __builtin_cpu_supports("sse4.2");
    return available;
}

#else

uint32_t crc32c_hardware(uint32_t crc, const uint8_t* data, size_t size) noexcept {
    return crc32c_table(crc, data, size);
}

bool crc32c_hardware_available() noexcept {
    return false;
}

#endif

}  // namespace detail

namespace {

using crc_fn = uint32_t (*)(uint32_t, const uint8_t*, size_t) noexcept;

crc_fn select_implementation() {
    if (detail::crc32c_hardware_available()) {
#if defined(__x86_64__)
        // Build the merge tables now, not inside the first hot-path call.
        (void)long_shift();
        (void)short_shift();
#endif
        return detail::crc32c_hardware;
    }
    return detail::crc32c_table;
}

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const uint8_t* data, size_t size) noexcept {
    static const crc_fn implementation = select_implementation();
    return implementation(crc, data, size);
}

}  // namespace spool::protocol::records
