#include "protocol/records/batch_parser.h"
#include "protocol/records/errc.h"
#include "protocol/records/record_reader.h"
#include "protocol/records/tests/sample_records.h"

#include <gtest/gtest.h>

namespace spool::protocol::records {
namespace {

using testing::build_batch;
using testing::sample_records;

// A parse that succeeded must be usable: the records it vouched for iterate cleanly, in the
// announced number, inside the buffer.
void expect_consistent(std::span<const uint8_t> buffer, const batch_info& info,
                       const decompress_buffer& scratch) {
    ASSERT_LE(info.offset + info.size, buffer.size());
    if (!info.records_checked) {
        return;
    }
    auto records = info.is_compressed() ? scratch.data() : records_section(buffer, info);
    record_reader reader(records, info.record_count);
    record_view rv;
    int32_t seen = 0;
    while (reader.next(rv)) {
        ++seen;
        auto headers = rv.headers();
        record_header_view hv;
        int32_t header_seen = 0;
        while (headers.next(hv)) {
            ++header_seen;
        }
        ASSERT_EQ(header_seen, rv.header_count);
    }
    ASSERT_FALSE(reader.error());
    ASSERT_EQ(seen, info.record_count);
}

class batch_corruption : public ::testing::TestWithParam<compression> {};

// Each byte of a small batch is damaged in three ways. With the CRC checked every change inside
// the CRC's coverage must be caught; without it (as a follower or recovery tool might run) the
// parser still must not crash, overrun, or report records it cannot deliver.
TEST_P(batch_corruption, test_damage_at_every_byte_is_detected_or_parses_consistently) {
    batch_options o;
    o.codec = GetParam();
    auto batch = build_batch(sample_records(4), o);
    decompress_buffer scratch;
    validate_options with_crc;
    validate_options no_crc;
    no_crc.verify_crc = false;
    no_crc.origin = batch_origin::log;
    no_crc.max_decompressed_size = 1 << 20;
    for (size_t i = 0; i < batch.size(); ++i) {
        for (uint8_t mask : {0x01, 0x80, 0xff}) {
            auto damaged = batch;
            damaged[i] ^= mask;
            auto checked = validate_batch_deep(damaged, with_crc, scratch);
            if (i >= batch_offset::crc) {
                EXPECT_FALSE(checked) << "byte " << i << " mask " << int(mask);
            } else if (checked) {
                expect_consistent(damaged, checked.value(), scratch);
            }
            auto unchecked = validate_batch_deep(damaged, no_crc, scratch);
            if (unchecked) {
                expect_consistent(damaged, unchecked.value(), scratch);
            }
        }
    }
}

TEST_P(batch_corruption, test_truncation_at_every_byte_is_corrupt) {
    batch_options o;
    o.codec = GetParam();
    auto batch = build_batch(sample_records(4), o);
    decompress_buffer scratch;
    for (size_t n = 0; n < batch.size(); ++n) {
        // A copy of exactly n bytes, so ASan sees any read past the end.
        std::vector<uint8_t> truncated(batch.begin(), batch.begin() + n);
        auto r = validate_batch_deep(truncated, {}, scratch);
        ASSERT_FALSE(r) << "length " << n;
        EXPECT_EQ(r.error(), errc::corrupt_message) << "length " << n;
    }
}

INSTANTIATE_TEST_SUITE_P(codecs, batch_corruption,
                         ::testing::Values(compression::none, compression::gzip,
                                           compression::snappy, compression::lz4,
                                           compression::zstd),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(batch_corruption, test_damaged_records_section_with_recomputed_crc_never_overruns) {
    // Damage that also fixes the CRC reaches the record parser; it must fail cleanly or parse
    // consistently.
    auto batch = build_batch(sample_records(6));
    decompress_buffer scratch;
    for (size_t i = batch_header_size; i < batch.size(); ++i) {
        for (uint8_t mask : {0x01, 0x40, 0x80, 0xff}) {
            std::vector<uint8_t> damaged(batch);
            damaged[i] ^= mask;
            validate_options o;
            o.verify_crc = false;
            auto r = validate_batch(damaged, o);
            if (r) {
                expect_consistent(damaged, r.value(), scratch);
            } else {
                EXPECT_EQ(r.error(), errc::invalid_record) << "byte " << i;
            }
        }
    }
}

}  // namespace
}  // namespace spool::protocol::records
