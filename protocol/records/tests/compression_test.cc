#include "protocol/records/compression.h"

#include "protocol/records/errc.h"

#include <gtest/gtest.h>
#include <snappy.h>
#include <zlib.h>

#include <random>

namespace spool::protocol::records {
namespace {

std::vector<uint8_t> compressible(size_t n) {
    std::vector<uint8_t> out(n);
    std::mt19937 rng(7);
    for (size_t i = 0; i < n; ++i) {
        out[i] = static_cast<uint8_t>("abcdefgh"[rng() % 8]);
    }
    return out;
}

std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> out(n);
    std::mt19937 rng(11);
    for (auto& b : out) {
        b = static_cast<uint8_t>(rng());
    }
    return out;
}

struct codec_case {
    compression codec;
    bool xerial;
    std::string name;
};

class codec_roundtrip : public ::testing::TestWithParam<codec_case> {
protected:
    std::vector<uint8_t> pack(std::span<const uint8_t> in) {
        compress_options o;
        o.snappy_xerial = GetParam().xerial;
        std::vector<uint8_t> out;
        EXPECT_FALSE(compress(GetParam().codec, in, out, o));
        return out;
    }
};

TEST_P(codec_roundtrip, test_compress_then_decompress_returns_the_input) {
    decompress_buffer buffer;
    for (size_t n : {size_t{1}, size_t{100}, size_t{65536}, size_t{1} << 20, size_t{3'000'001}}) {
        for (const auto& input : {compressible(n), random_bytes(n)}) {
            auto packed = pack(input);
            ASSERT_FALSE(decompress(GetParam().codec, packed, buffer, 64 << 20)) << n;
            ASSERT_EQ(buffer.size(), input.size());
            ASSERT_TRUE(std::equal(input.begin(), input.end(), buffer.data().begin()));
        }
    }
}

TEST_P(codec_roundtrip, test_output_of_exactly_the_cap_fits_and_one_byte_more_does_not) {
    auto input = compressible(200'000);
    auto packed = pack(input);
    decompress_buffer buffer;
    EXPECT_FALSE(decompress(GetParam().codec, packed, buffer, input.size()));
    EXPECT_EQ(buffer.size(), input.size());
    EXPECT_EQ(decompress(GetParam().codec, packed, buffer, input.size() - 1),
              errc::decompressed_too_large);
}

TEST_P(codec_roundtrip, test_truncated_input_is_corrupt) {
    auto packed = pack(compressible(100'000));
    decompress_buffer buffer;
    for (size_t n : {size_t{0}, size_t{1}, size_t{5}, packed.size() / 2, packed.size() - 1}) {
        std::vector<uint8_t> truncated(packed.begin(), packed.begin() + n);
        EXPECT_EQ(decompress(GetParam().codec, truncated, buffer, 64 << 20), errc::corrupt_message)
            << "length " << n;
    }
}

TEST_P(codec_roundtrip, test_reused_buffer_does_not_grow_again) {
    auto input = compressible(1 << 20);
    auto packed = pack(input);
    decompress_buffer buffer;
    ASSERT_FALSE(decompress(GetParam().codec, packed, buffer, 64 << 20));
    size_t capacity = buffer.capacity();
    const uint8_t* storage = buffer.data().data();
    ASSERT_FALSE(decompress(GetParam().codec, packed, buffer, 64 << 20));
    EXPECT_EQ(buffer.capacity(), capacity);
    EXPECT_EQ(buffer.data().data(), storage);
}

INSTANTIATE_TEST_SUITE_P(codecs, codec_roundtrip,
                         ::testing::Values(codec_case{compression::gzip, false, "gzip"},
                                           codec_case{compression::snappy, false, "snappy"},
                                           codec_case{compression::snappy, true, "snappy_xerial"},
                                           codec_case{compression::lz4, false, "lz4"},
                                           codec_case{compression::zstd, false, "zstd"}),
                         [](const auto& info) { return info.param.name; });

// The framing snappy-java writes, assembled here by hand from raw snappy blocks.
TEST(snappy_xerial, test_hand_built_xerial_stream_with_several_chunks_decodes) {
    std::string a(5000, 'a');
    std::string b = "hello xerial";
    std::vector<uint8_t> stream = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    for (const std::string& chunk : {a, b}) {
        std::string packed;
        snappy::Compress(chunk.data(), chunk.size(), &packed);
        uint8_t len[4];
        store_be32(len, static_cast<uint32_t>(packed.size()));
        stream.insert(stream.end(), len, len + 4);
        stream.insert(stream.end(), packed.begin(), packed.end());
    }
    decompress_buffer buffer;
    ASSERT_FALSE(decompress(compression::snappy, stream, buffer, 1 << 20));
    std::string out(reinterpret_cast<const char*>(buffer.data().data()), buffer.size());
    EXPECT_EQ(out, a + b);

    auto cut = stream;
    cut.resize(cut.size() - 3);
    EXPECT_EQ(decompress(compression::snappy, cut, buffer, 1 << 20), errc::corrupt_message);
}

TEST(snappy_raw, test_block_declaring_more_than_snappy_can_expand_is_refused) {
    // Varint length 1 GiB, then a few bytes: impossible, refused before allocating.
    std::vector<uint8_t> lie = {0x80, 0x80, 0x80, 0x80, 0x04, 0x00, 0x61};
    decompress_buffer buffer;
    EXPECT_EQ(decompress(compression::snappy, lie, buffer, SIZE_MAX), errc::corrupt_message);
    EXPECT_EQ(buffer.capacity(), 0u);
}

TEST(gzip, test_concatenated_members_decode_as_one_stream) {
    std::vector<uint8_t> stream;
    ASSERT_FALSE(compress(compression::gzip, compressible(1000), stream));
    ASSERT_FALSE(compress(compression::gzip, random_bytes(1000), stream));
    decompress_buffer buffer;
    ASSERT_FALSE(decompress(compression::gzip, stream, buffer, 1 << 20));
    auto expected = compressible(1000);
    auto second = random_bytes(1000);
    expected.insert(expected.end(), second.begin(), second.end());
    EXPECT_TRUE(
        std::equal(expected.begin(), expected.end(), buffer.data().begin(), buffer.data().end()));
}

TEST(compression, test_codec_none_is_not_decompressible) {
    decompress_buffer buffer;
    std::vector<uint8_t> data = {1, 2, 3};
    EXPECT_EQ(decompress(compression::none, data, buffer, 100), errc::unsupported_compression);
}

}  // namespace
}  // namespace spool::protocol::records
