#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/tests/rdkafka_capture.h"
#include "protocol/records/tests/sample_records.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace spool::protocol::records {
namespace {

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class librdkafka_capture : public ::testing::TestWithParam<std::string> {
protected:
    std::vector<uint8_t> load() {
        auto bytes = read_file(std::string(SPOOL_RECORDS_TEST_DATA) + "/librdkafka-2.0.2-" +
                               GetParam() + ".bin");
        EXPECT_FALSE(bytes.empty()) << "missing capture for " << GetParam();
        return bytes;
    }
};

// Batches librdkafka 2.0.2 wrote (captured once, see tests/data/README.md).
TEST_P(librdkafka_capture, test_recorded_client_batches_decode_to_the_original_records) {
    auto bytes = load();
    validate_options log;
    log.origin = batch_origin::log;
    decompress_buffer scratch;
    auto summary = validate_batches(bytes, log, scratch);
    ASSERT_TRUE(summary) << summary.error().message();
    EXPECT_EQ(to_string(summary.value().first.codec()), GetParam());
    EXPECT_GT(summary.value().batch_count, 1u);
    EXPECT_EQ(summary.value().record_count, static_cast<int64_t>(testing::sample_records().size()));
    EXPECT_EQ(testing::decode_all(bytes, log), testing::sample_records());
}

// As a producer sent them (base offset 0) every batch passes the strict client checks.
TEST_P(librdkafka_capture, test_recorded_client_batches_pass_produce_validation) {
    auto bytes = load();
    decompress_buffer scratch;
    validate_options header_only;
    header_only.origin = batch_origin::log;
    size_t pos = 0;
    while (pos < bytes.size()) {
        std::span<uint8_t> batch(bytes.data() + pos, bytes.size() - pos);
        auto header = read_batch_header(batch, header_only);
        ASSERT_TRUE(header);
        batch = batch.first(header.value().size);
        ASSERT_FALSE(set_base_offset(batch, 0));
        auto info = validate_batch_deep(batch, {}, scratch);
        ASSERT_TRUE(info) << "batch at byte " << pos << ": " << info.error().message();
        EXPECT_TRUE(info.value().has_producer_id());
        pos += batch.size();
    }
}

INSTANTIATE_TEST_SUITE_P(codecs, librdkafka_capture, ::testing::ValuesIn(testing::capture_codecs()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spool::protocol::records
