#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/errc.h"
#include "protocol/records/tests/sample_records.h"
#include "protocol/wire/writer.h"

#include <gtest/gtest.h>

#include <functional>

namespace spool::protocol::records {
namespace {

using testing::build_batch;
using testing::sample_records;
using testing::wrap_records;

// Writes one record field by field; body lets a test append or replace fields.
std::vector<uint8_t> raw_record(const std::function<void(wire::writer&)>& body) {
    std::vector<uint8_t> fields;
    wire::writer f(fields);
    body(f);
    std::vector<uint8_t> out;
    wire::writer w(out);
    w.write_varint(static_cast<int32_t>(fields.size()));
    w.write_bytes(fields);
    return out;
}

// A well-formed record with the given offset delta; header_count is written as given and
// followed by `headers` well-formed headers.
std::vector<uint8_t> good_record(int32_t offset_delta, int32_t header_count = 0, int headers = 0) {
    return raw_record([&](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(0);
        w.write_varint(offset_delta);
        w.write_varint(1);
        w.write_raw("k");
        w.write_varint(2);
        w.write_raw("vv");
        w.write_varint(header_count);
        for (int i = 0; i < headers; ++i) {
            w.write_varint(1);
            w.write_raw("h");
            w.write_varint(-1);
        }
    });
}

std::error_code validate(std::span<const uint8_t> batch, validate_options o = {}) {
    auto r = validate_batch(batch, o);
    return r ? std::error_code{} : r.error();
}

TEST(batch_validation, test_well_formed_crafted_batch_passes) {
    auto records = good_record(0, 1, 1);
    auto r1 = good_record(1);
    records.insert(records.end(), r1.begin(), r1.end());
    EXPECT_FALSE(validate(wrap_records(records, 2, 1)));
}

TEST(batch_validation, test_magic_0_and_1_are_unsupported_and_map_to_invalid_record) {
    for (uint8_t magic : {0, 1}) {
        auto batch = build_batch(sample_records(2));
        batch[batch_offset::magic] = magic;
        EXPECT_EQ(validate(batch), errc::unsupported_magic);
        EXPECT_EQ(to_kafka_error_code(errc::unsupported_magic), 87);
    }
    // A legacy message set is shorter than a v2 header: still recognised by its magic.
    std::vector<uint8_t> legacy = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 14, 0x12, 0x34, 0x56, 0x78, 1};
    EXPECT_EQ(validate(legacy), errc::unsupported_magic);
}

TEST(batch_validation, test_unknown_magic_is_corrupt) {
    for (uint8_t magic : {3, 0x7f, 0xff}) {
        auto batch = build_batch(sample_records(2));
        batch[batch_offset::magic] = magic;
        EXPECT_EQ(validate(batch), errc::corrupt_message);
    }
}

TEST(batch_validation, test_impossible_lengths_are_corrupt) {
    auto batch = build_batch(sample_records(2));
    for (int32_t length :
         {-1, 0, min_batch_length - 1, static_cast<int32_t>(batch.size()), INT32_MAX}) {
        auto copy = batch;
        store_be32(copy.data() + batch_offset::batch_length, static_cast<uint32_t>(length));
        EXPECT_EQ(validate(copy), errc::corrupt_message) << "length " << length;
    }
    EXPECT_EQ(validate({}), errc::corrupt_message);
}

TEST(batch_validation, test_crc_mismatch_is_corrupt) {
    auto batch = build_batch(sample_records(2));
    batch.back() ^= 0x01;
    EXPECT_EQ(validate(batch), errc::corrupt_message);
    validate_options no_crc;
    no_crc.verify_crc = false;
    EXPECT_FALSE(validate(build_batch(sample_records(2)), no_crc));
}

TEST(batch_validation, test_unknown_codec_is_unsupported_compression) {
    for (int16_t codec : {5, 6, 7}) {
        auto batch = build_batch(sample_records(2));
        store_be16(batch.data() + batch_offset::attributes, static_cast<uint16_t>(codec));
        ASSERT_FALSE(update_crc(batch));
        EXPECT_EQ(validate(batch), errc::unsupported_compression);
        EXPECT_EQ(to_kafka_error_code(errc::unsupported_compression), 76);
    }
}

TEST(batch_validation, test_larger_than_max_message_bytes_is_message_too_large) {
    auto batch = build_batch(sample_records(20));
    validate_options o;
    o.max_batch_size = batch.size() - 1;
    EXPECT_EQ(validate(batch, o), errc::message_too_large);
    o.max_batch_size = batch.size();
    EXPECT_FALSE(validate(batch, o));
}

TEST(batch_validation, test_record_count_must_match_the_records_present) {
    auto records = good_record(0);
    auto r1 = good_record(1);
    records.insert(records.end(), r1.begin(), r1.end());
    EXPECT_EQ(validate(wrap_records(records, 3, 2)), errc::invalid_record);  // one missing
    EXPECT_EQ(validate(wrap_records(records, 1, 0)), errc::invalid_record);  // one extra
    EXPECT_EQ(validate(wrap_records(records, -1, 1)), errc::invalid_record);
    EXPECT_EQ(validate(wrap_records({}, 0, -1)), errc::invalid_record);  // empty from a client
    // A count no records section could hold is refused before walking.
    EXPECT_EQ(validate(wrap_records(records, INT32_MAX, INT32_MAX - 1)), errc::invalid_record);
}

TEST(batch_validation, test_last_offset_delta_and_offset_deltas_must_be_consistent) {
    auto records = good_record(0);
    auto r1 = good_record(1);
    records.insert(records.end(), r1.begin(), r1.end());
    EXPECT_EQ(validate(wrap_records(records, 2, 2)), errc::invalid_record);
    EXPECT_EQ(validate(wrap_records(records, 2, 0)), errc::invalid_record);

    auto gap = good_record(0);
    auto r5 = good_record(5);
    gap.insert(gap.end(), r5.begin(), r5.end());
    EXPECT_EQ(validate(wrap_records(gap, 2, 1)), errc::invalid_record);
    // The log keeps compacted batches with gaps, as long as deltas increase within the range.
    validate_options log;
    log.origin = batch_origin::log;
    EXPECT_FALSE(validate(wrap_records(gap, 2, 5, 0, 100), log));
    EXPECT_EQ(validate(wrap_records(gap, 2, 4, 0, 100), log), errc::invalid_record);
    auto backwards = good_record(3);
    auto r2 = good_record(2);
    backwards.insert(backwards.end(), r2.begin(), r2.end());
    EXPECT_EQ(validate(wrap_records(backwards, 2, 5, 0, 100), log), errc::invalid_record);
}

TEST(batch_validation, test_client_base_offset_must_be_zero) {
    auto records = good_record(0);
    EXPECT_EQ(validate(wrap_records(records, 1, 0, 0, 7)), errc::invalid_record);
}

TEST(batch_validation, test_negative_or_oversized_header_counts_are_invalid_records) {
    EXPECT_EQ(validate(wrap_records(good_record(0, -1), 1, 0)), errc::invalid_record);
    EXPECT_EQ(validate(wrap_records(good_record(0, 1000000), 1, 0)), errc::invalid_record);
    EXPECT_EQ(validate(wrap_records(good_record(0, 3, 2), 1, 0)), errc::invalid_record);
    EXPECT_FALSE(validate(wrap_records(good_record(0, 2, 2), 1, 0)));
}

TEST(batch_validation, test_record_level_parse_errors_are_invalid_records) {
    // Key longer than the record.
    auto long_key = raw_record([](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(0);
        w.write_varint(0);
        w.write_varint(100);
        w.write_raw("k");
        w.write_varint(-1);
        w.write_varint(0);
    });
    EXPECT_EQ(validate(wrap_records(long_key, 1, 0)), errc::invalid_record);
    // Value length below -1.
    auto bad_null = raw_record([](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(0);
        w.write_varint(0);
        w.write_varint(-1);
        w.write_varint(-2);
        w.write_varint(0);
    });
    EXPECT_EQ(validate(wrap_records(bad_null, 1, 0)), errc::invalid_record);
    // Trailing bytes inside the record's declared length.
    auto trailing = raw_record([](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(0);
        w.write_varint(0);
        w.write_varint(-1);
        w.write_varint(-1);
        w.write_varint(0);
        w.write_u8(0);
    });
    EXPECT_EQ(validate(wrap_records(trailing, 1, 0)), errc::invalid_record);
    // A negative header key length.
    auto bad_header = raw_record([](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(0);
        w.write_varint(0);
        w.write_varint(-1);
        w.write_varint(-1);
        w.write_varint(1);
        w.write_varint(-1);
        w.write_varint(-1);
    });
    EXPECT_EQ(validate(wrap_records(bad_header, 1, 0)), errc::invalid_record);
    // A varint that never ends.
    std::vector<uint8_t> endless = {0x20, 0,    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    EXPECT_EQ(validate(wrap_records(endless, 1, 0)), errc::invalid_record);
    // A record length that is negative or runs past the batch.
    std::vector<uint8_t> negative = {0x01, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(validate(wrap_records(negative, 1, 0)), errc::invalid_record);
    std::vector<uint8_t> past_end = {0x7e, 0, 0, 0, 1, 1, 0};
    EXPECT_EQ(validate(wrap_records(past_end, 1, 0)), errc::invalid_record);
}

TEST(batch_validation, test_compression_bits_on_an_inner_record_are_invalid_from_clients) {
    auto nested = raw_record([](wire::writer& w) {
        w.write_i8(1);  // gzip bits on the record
        w.write_varlong(0);
        w.write_varint(0);
        w.write_varint(-1);
        w.write_varint(-1);
        w.write_varint(0);
    });
    EXPECT_EQ(validate(wrap_records(nested, 1, 0)), errc::invalid_record);
}

TEST(batch_validation, test_compressed_batch_with_undecodable_payload_is_corrupt) {
    std::vector<uint8_t> garbage(64, 0x5a);
    for (int16_t codec : {1, 2, 3, 4}) {
        auto batch = wrap_records(garbage, 1, 0, codec);
        decompress_buffer scratch;
        auto r = validate_batch_deep(batch, {}, scratch);
        ASSERT_FALSE(r) << "codec " << codec;
        EXPECT_EQ(r.error(), errc::corrupt_message) << "codec " << codec;
    }
}

// records_batch_fuzz found it: a base timestamp near INT64_MAX plus a record's positive delta
// overflowed (undefined behaviour) computing the batch's max timestamp. Such a batch names no
// representable time: invalid_record.
TEST(batch_validation, test_a_timestamp_past_int64_max_is_an_invalid_record) {
    auto record = raw_record([](wire::writer& w) {
        w.write_i8(0);
        w.write_varlong(5);  // timestamp delta
        w.write_varint(0);   // offset delta
        w.write_varint(-1);  // null key
        w.write_varint(-1);  // null value
        w.write_varint(0);   // no headers
    });
    auto batch = wrap_records(record, 1, 0);
    // baseTimestamp: after baseOffset(8) batchLength(4) leaderEpoch(4) magic(1) crc(4)
    // attributes(2) lastOffsetDelta(4), big-endian.
    constexpr size_t base_timestamp_at = 27;
    for (size_t i = 0; i < 8; ++i) {
        batch[base_timestamp_at + i] = i == 0 ? 0x7f : 0xff;
    }
    validate_options o;
    o.verify_crc = false;  // the header was patched after the CRC was written
    EXPECT_EQ(validate(batch, o), make_error_code(errc::invalid_record));
    // The same batch at a representable time passes.
    batch[base_timestamp_at] = 0x00;
    EXPECT_FALSE(validate(batch, o));
}

TEST(batch_validation, test_trailing_bytes_after_the_last_batch_are_corrupt) {
    auto buffer = build_batch(sample_records(2));
    buffer.push_back(0);
    decompress_buffer scratch;
    EXPECT_EQ(validate_batches(buffer, {}, scratch).error(), errc::corrupt_message);
}

}  // namespace
}  // namespace spool::protocol::records
