#include "protocol/records/crc32c.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string_view>
#include <vector>

namespace spool::protocol::records {
namespace {

std::span<const uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

struct vector_case {
    std::vector<uint8_t> data;
    uint32_t expected;
};

// RFC 3720 appendix B.4 (the CRC bytes there are listed least significant first).
std::vector<vector_case> rfc3720_vectors() {
    std::vector<vector_case> v;
    v.push_back({std::vector<uint8_t>(32, 0x00), 0x8a9136aa});
    v.push_back({std::vector<uint8_t>(32, 0xff), 0x62a8ab43});
    std::vector<uint8_t> ascending(32);
    std::iota(ascending.begin(), ascending.end(), uint8_t{0});
    v.push_back({ascending, 0x46dd794e});
    std::vector<uint8_t> descending(ascending.rbegin(), ascending.rend());
    v.push_back({descending, 0x113fdb5c});
    // An iSCSI read command PDU.
    v.push_back({{0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                  0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                  0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                  0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},
                 0xd9963a56});
    return v;
}

TEST(crc32c, test_matches_rfc3720_vectors_with_every_implementation) {
    for (const auto& c : rfc3720_vectors()) {
        EXPECT_EQ(crc32c(c.data), c.expected);
        EXPECT_EQ(detail::crc32c_table(0, c.data.data(), c.data.size()), c.expected);
        if (detail::crc32c_hardware_available()) {
            EXPECT_EQ(detail::crc32c_hardware(0, c.data.data(), c.data.size()), c.expected);
        }
    }
}

TEST(crc32c, test_check_value_of_123456789) {
    EXPECT_EQ(crc32c(bytes_of("123456789")), 0xe3069283u);
}

TEST(crc32c, test_empty_input_is_zero) {
    EXPECT_EQ(crc32c({}), 0u);
}

TEST(crc32c, test_hardware_and_table_agree_on_all_lengths_and_alignments) {
    if (!detail::crc32c_hardware_available()) {
        GTEST_SKIP() << "no SSE4.2 on this CPU";
    }
    std::mt19937 rng(42);
    std::vector<uint8_t> data(200 * 1024 + 16);
    for (auto& b : data) {
        b = static_cast<uint8_t>(rng());
    }
    // Lengths around every loop boundary: single bytes, 8-byte words, the 3x256 and 3x8192
    // interleaved blocks, with every starting alignment.
    std::vector<size_t> lengths;
    for (size_t n = 0; n < 80; ++n) {
        lengths.push_back(n);
    }
    for (size_t n : {767u, 768u, 769u, 1536u, 24575u, 24576u, 24577u, 50000u, 200u * 1024u}) {
        lengths.push_back(n);
    }
    for (size_t align = 0; align < 8; ++align) {
        for (size_t n : lengths) {
            const uint8_t* p = data.data() + align;
            ASSERT_EQ(detail::crc32c_hardware(0, p, n), detail::crc32c_table(0, p, n))
                << "length " << n << " alignment " << align;
        }
    }
}

TEST(crc32c, test_extend_in_pieces_equals_one_shot) {
    std::vector<uint8_t> data(100'000);
    std::iota(data.begin(), data.end(), uint8_t{7});
    uint32_t whole = crc32c(data);
    for (size_t split : {0u, 1u, 13u, 4096u, 30'000u, 99'999u}) {
        uint32_t crc = crc32c_extend(0, data.data(), split);
        crc = crc32c_extend(crc, data.data() + split, data.size() - split);
        EXPECT_EQ(crc, whole) << "split at " << split;
    }
}

}  // namespace
}  // namespace spool::protocol::records
