// Memory behaviour of validation and decompression, measured by replacing the global operator
// new/delete in this test binary (which is why these tests live in their own executable). The
// codec libraries allocate their small internal state with malloc, which is not counted; every
// buffer this module sizes from input goes through new[] and is.

#include "protocol/records/batch_parser.h"
#include "protocol/records/compression.h"
#include "protocol/records/errc.h"
#include "protocol/records/tests/sample_records.h"

#include <gtest/gtest.h>
#include <snappy.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<size_t> live_bytes{0};
std::atomic<size_t> peak_bytes{0};
std::atomic<size_t> allocations{0};

// Each block carries its size in a 16-byte prefix so delete can account for it.
constexpr size_t prefix = 16;

void* counted_alloc(size_t n) {
    void* raw = std::malloc(n + prefix);
    if (raw == nullptr) {
        throw std::bad_alloc();
    }
    *static_cast<size_t*>(raw) = n;
    size_t now = live_bytes.fetch_add(n) + n;
    size_t peak = peak_bytes.load();
    while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
    }
    allocations.fetch_add(1);
    return static_cast<char*>(raw) + prefix;
}

void counted_free(void* p) {
    if (p == nullptr) {
        return;
    }
    void* raw = static_cast<char*>(p) - prefix;
    live_bytes.fetch_sub(*static_cast<size_t*>(raw));
    std::free(raw);
}

// Starts a measurement: the peak is counted from the current live bytes.
struct allocation_probe {
    size_t base_live;
    size_t base_count;
    allocation_probe() : base_live(live_bytes.load()), base_count(allocations.load()) {
        peak_bytes.store(base_live);
    }
    size_t peak_extra() const { return peak_bytes.load() - base_live; }
    size_t count() const { return allocations.load() - base_count; }
};

}  // namespace

void* operator new(size_t n) {
    return counted_alloc(n);
}
void* operator new[](size_t n) {
    return counted_alloc(n);
}
void operator delete(void* p) noexcept {
    counted_free(p);
}
void operator delete[](void* p) noexcept {
    counted_free(p);
}
void operator delete(void* p, size_t) noexcept {
    counted_free(p);
}
void operator delete[](void* p, size_t) noexcept {
    counted_free(p);
}

namespace spool::protocol::records {
namespace {

constexpr size_t cap = 1 << 20;
constexpr size_t bomb_size = 64 << 20;

struct bomb_case {
    compression codec;
    std::string name;
};

class compression_bomb : public ::testing::TestWithParam<bomb_case> {};

// 64 MiB of zeros: gzip and zstd pack it more than 1000x; lz4 (at most ~255x) and snappy
// (~21x) cannot reach 1000x honestly, but the stream still expands 64x past the cap.
TEST_P(compression_bomb, test_bomb_is_refused_without_allocating_what_it_expands_to) {
    std::vector<uint8_t> packed;
    {
        std::vector<uint8_t> zeros(bomb_size, 0);
        ASSERT_FALSE(compress(GetParam().codec, zeros, packed));
    }
    if (GetParam().codec == compression::gzip || GetParam().codec == compression::zstd) {
        ASSERT_GE(bomb_size / packed.size(), 1000u) << "not a 1000x bomb";
    }
    decompress_buffer buffer;
    allocation_probe probe;
    EXPECT_EQ(decompress(GetParam().codec, packed, buffer, cap), errc::decompressed_too_large);
    EXPECT_LE(buffer.capacity(), cap + 1);
    // Geometric growth may briefly hold the old and the new buffer.
    EXPECT_LE(probe.peak_extra(), 2 * cap + 64 * 1024);
}

TEST_P(compression_bomb, test_bomb_inside_a_batch_is_refused_as_message_too_large) {
    std::vector<uint8_t> zeros(bomb_size / 4, 0);
    batch_options options;
    options.codec = GetParam().codec;
    batch_builder builder(options);
    builder.add(0, nullable_bytes::null(), nullable_bytes::of(zeros));
    std::vector<uint8_t> batch;
    ASSERT_FALSE(builder.build(batch));
    zeros = {};
    validate_options o;
    o.max_decompressed_size = cap;
    decompress_buffer scratch;
    allocation_probe probe;
    auto r = validate_batch_deep(batch, o, scratch);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), errc::decompressed_too_large);
    EXPECT_EQ(to_kafka_error_code(r.error()), 10);
    EXPECT_LE(probe.peak_extra(), 2 * cap + 64 * 1024);
}

INSTANTIATE_TEST_SUITE_P(codecs, compression_bomb,
                         ::testing::Values(bomb_case{compression::gzip, "gzip"},
                                           bomb_case{compression::snappy, "snappy"},
                                           bomb_case{compression::lz4, "lz4"},
                                           bomb_case{compression::zstd, "zstd"}),
                         [](const auto& info) { return info.param.name; });

TEST(compression_bomb, test_snappy_block_claiming_1000x_allocates_nothing) {
    std::string block;
    std::string zeros(4096, 0);
    snappy::Compress(zeros.data(), zeros.size(), &block);
    // Rewrite the declared length to 1000x the block, keeping the body.
    std::string body = block.substr(2);  // 4096 is a two-byte varint
    uint32_t claim = static_cast<uint32_t>(block.size() * 1000);
    std::vector<uint8_t> lie;
    while (claim >= 0x80) {
        lie.push_back(static_cast<uint8_t>(claim | 0x80));
        claim >>= 7;
    }
    lie.push_back(static_cast<uint8_t>(claim));
    lie.insert(lie.end(), body.begin(), body.end());
    decompress_buffer buffer;
    allocation_probe probe;
    EXPECT_NE(decompress(compression::snappy, lie, buffer, SIZE_MAX), std::error_code{});
    EXPECT_EQ(probe.peak_extra(), 0u);
}

TEST(validation_allocations, test_validating_an_uncompressed_batch_allocates_nothing) {
    std::vector<testing::sample_record> records;
    for (int i = 0; i < 1024; ++i) {
        records.push_back({i, "key", std::string(1000, 'x'), {{"h", "v"}}});
    }
    auto batch = testing::build_batch(records);
    decompress_buffer scratch;
    allocation_probe probe;
    auto r = validate_batch_deep(batch, {}, scratch);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().record_count, 1024);
    EXPECT_EQ(probe.count(), 0u);
}

TEST(validation_allocations, test_validating_compressed_batches_reuses_one_buffer) {
    std::vector<testing::sample_record> records;
    for (int i = 0; i < 512; ++i) {
        records.push_back({i, std::nullopt, std::string(1000, 'y'), {}});
    }
    for (auto codec :
         {compression::gzip, compression::snappy, compression::lz4, compression::zstd}) {
        batch_options options;
        options.codec = codec;
        auto batch = testing::build_batch(records, options);
        decompress_buffer scratch;
        ASSERT_TRUE(validate_batch_deep(batch, {}, scratch));  // warms the buffer
        allocation_probe probe;
        ASSERT_TRUE(validate_batch_deep(batch, {}, scratch));
        EXPECT_EQ(probe.count(), 0u) << to_string(codec);
    }
}

}  // namespace
}  // namespace spool::protocol::records
