#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/crc32c.h"
#include "protocol/records/errc.h"
#include "protocol/records/record_reader.h"
#include "protocol/records/tests/sample_records.h"

#include <gtest/gtest.h>

namespace spool::protocol::records {
namespace {

using testing::build_batch;
using testing::decode_all;
using testing::sample_records;

struct codec_case {
    compression codec;
    bool xerial;
    std::string name;
};

class batch_roundtrip : public ::testing::TestWithParam<codec_case> {
protected:
    batch_options options() const {
        batch_options o;
        o.codec = GetParam().codec;
        o.codec_options.snappy_xerial = GetParam().xerial;
        return o;
    }
};

TEST_P(batch_roundtrip, test_built_batch_validates_and_decodes_to_the_original_records) {
    auto records = sample_records();
    auto batch = build_batch(records, options());
    decompress_buffer scratch;
    auto info = validate_batch_deep(batch, {}, scratch);
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_EQ(info.value().codec(), GetParam().codec);
    EXPECT_EQ(info.value().record_count, static_cast<int32_t>(records.size()));
    EXPECT_EQ(info.value().last_offset_delta, static_cast<int32_t>(records.size()) - 1);
    EXPECT_EQ(info.value().size, batch.size());
    EXPECT_EQ(info.value().base_timestamp, records.front().timestamp);
    EXPECT_EQ(info.value().max_timestamp, records.back().timestamp);
    EXPECT_EQ(info.value().max_record_timestamp, records.back().timestamp);
    EXPECT_TRUE(info.value().records_checked);
    EXPECT_TRUE(info.value().has_null_key);
    EXPECT_EQ(decode_all(batch, {}), records);
}

TEST_P(batch_roundtrip, test_producer_fields_and_transactional_flag_survive) {
    auto o = options();
    o.producer_id = 4242;
    o.producer_epoch = 7;
    o.base_sequence = 1000;
    o.transactional = true;
    auto batch = build_batch(sample_records(5), o);
    decompress_buffer scratch;
    auto info = validate_batch_deep(batch, {}, scratch);
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_EQ(info.value().producer_id, 4242);
    EXPECT_EQ(info.value().producer_epoch, 7);
    EXPECT_EQ(info.value().base_sequence, 1000);
    EXPECT_TRUE(info.value().is_transactional());
    EXPECT_FALSE(info.value().is_control());
}

TEST_P(batch_roundtrip, test_concatenated_batches_are_walked_in_order) {
    auto records = sample_records(30);
    std::vector<uint8_t> buffer;
    std::vector<testing::sample_record> part;
    for (size_t i = 0; i < records.size(); i += 10) {
        part.assign(records.begin() + i, records.begin() + i + 10);
        auto o = options();
        o.base_offset = static_cast<int64_t>(i);
        auto batch = build_batch(part, o);
        buffer.insert(buffer.end(), batch.begin(), batch.end());
    }
    validate_options log;
    log.origin = batch_origin::log;
    decompress_buffer scratch;
    auto summary = validate_batches(buffer, log, scratch);
    ASSERT_TRUE(summary) << summary.error().message();
    EXPECT_EQ(summary.value().batch_count, 3u);
    EXPECT_EQ(summary.value().record_count, 30);
    EXPECT_EQ(summary.value().first.offset, 0u);
    EXPECT_EQ(summary.value().last.base_offset, 20);
    EXPECT_EQ(summary.value().last.last_offset(), 29);
    EXPECT_EQ(summary.value().last.offset + summary.value().last.size, buffer.size());
    EXPECT_EQ(decode_all(buffer, log), records);
    // A client may only send base offset 0.
    EXPECT_EQ(validate_batches(buffer, {}, scratch).error(), errc::invalid_record);
}

TEST_P(batch_roundtrip, test_batch_records_gives_the_uncompressed_records_section) {
    auto records = sample_records(12);
    auto batch = build_batch(records, options());
    auto info = validate_batch(batch, {});
    ASSERT_TRUE(info) << info.error().message();
    decompress_buffer scratch;
    auto section = batch_records(batch, info.value(), scratch, 1 << 20);
    ASSERT_TRUE(section) << section.error().message();
    record_reader reader(section.value(), info.value().record_count);
    record_view rv;
    size_t i = 0;
    while (reader.next(rv)) {
        ASSERT_LT(i, records.size());
        EXPECT_EQ(info.value().base_offset + rv.offset_delta, static_cast<int64_t>(i));
        EXPECT_EQ(info.value().base_timestamp + rv.timestamp_delta, records[i].timestamp);
        EXPECT_EQ(rv.value.is_null, !records[i].value.has_value());
        ++i;
    }
    EXPECT_FALSE(reader.error());
    EXPECT_EQ(i, records.size());
}

INSTANTIATE_TEST_SUITE_P(codecs, batch_roundtrip,
                         ::testing::Values(codec_case{compression::none, false, "none"},
                                           codec_case{compression::gzip, false, "gzip"},
                                           codec_case{compression::snappy, false, "snappy"},
                                           codec_case{compression::snappy, true, "snappy_xerial"},
                                           codec_case{compression::lz4, false, "lz4"},
                                           codec_case{compression::zstd, false, "zstd"}),
                         [](const auto& info) { return info.param.name; });

TEST(batch_rewrite, test_base_offset_and_leader_epoch_keep_the_crc_valid) {
    auto batch = build_batch(sample_records(3));
    const uint32_t crc_before = load_be32(batch.data() + batch_offset::crc);
    ASSERT_FALSE(set_base_offset(batch, 123456789));
    ASSERT_FALSE(set_partition_leader_epoch(batch, 17));
    EXPECT_EQ(load_be32(batch.data() + batch_offset::crc), crc_before);
    validate_options log;
    log.origin = batch_origin::log;
    auto info = validate_batch(batch, log);
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_EQ(info.value().base_offset, 123456789);
    EXPECT_EQ(info.value().partition_leader_epoch, 17);
    EXPECT_EQ(info.value().last_offset(), 123456789 + 2);
}

TEST(batch_rewrite, test_log_append_time_sets_type_and_max_timestamp_and_recomputes_crc) {
    auto batch = build_batch(sample_records(3));
    const uint32_t crc_before = load_be32(batch.data() + batch_offset::crc);
    ASSERT_FALSE(set_log_append_time(batch, 1'800'000'000'000));
    auto info = validate_batch(batch, {});
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_EQ(info.value().ts_type(), timestamp_type::log_append_time);
    EXPECT_EQ(info.value().max_timestamp, 1'800'000'000'000);
    EXPECT_NE(info.value().crc, crc_before);
}

TEST(batch_rewrite, test_spans_shorter_than_a_header_are_refused_untouched) {
    std::vector<uint8_t> small(batch_header_size - 1, 0xab);
    EXPECT_EQ(set_base_offset(small, 1), errc::corrupt_message);
    EXPECT_EQ(set_partition_leader_epoch(small, 1), errc::corrupt_message);
    EXPECT_EQ(set_log_append_time(small, 1), errc::corrupt_message);
    EXPECT_EQ(small, std::vector<uint8_t>(batch_header_size - 1, 0xab));
}

TEST(control_batch, test_transaction_marker_round_trips_and_is_refused_from_clients) {
    control_batch_options o;
    o.producer_id = 99;
    o.producer_epoch = 3;
    o.coordinator_epoch = 12;
    o.timestamp = 1'700'000'000'000;
    o.base_offset = 500;
    std::vector<uint8_t> batch;
    ASSERT_FALSE(build_control_batch(control_type::commit, o, batch));

    validate_options log;
    log.origin = batch_origin::log;
    auto info = validate_batch(batch, log);
    ASSERT_TRUE(info) << info.error().message();
    EXPECT_TRUE(info.value().is_control());
    EXPECT_TRUE(info.value().is_transactional());
    EXPECT_EQ(info.value().producer_id, 99);
    EXPECT_EQ(info.value().producer_epoch, 3);

    record_reader reader(records_section(batch, info.value()), info.value().record_count);
    record_view record;
    ASSERT_TRUE(reader.next(record));
    control_marker marker;
    ASSERT_FALSE(parse_control_record(record, marker));
    EXPECT_EQ(marker.type, control_type::commit);
    EXPECT_EQ(marker.coordinator_epoch, 12);

    ASSERT_FALSE(set_base_offset(batch, 0));
    EXPECT_EQ(validate_batch(batch, {}).error(), errc::invalid_record);
}

}  // namespace
}  // namespace spool::protocol::records
