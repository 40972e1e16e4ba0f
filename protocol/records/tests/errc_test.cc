#include "protocol/records/errc.h"

#include <gtest/gtest.h>

namespace spool::protocol::records {
namespace {

// Pins the Produce error each validation failure produces (Apache Kafka's LogValidator and
// ProduceRequest.validateRecords; see bad-inputs in the team reference).
TEST(records_errc, test_kafka_error_code_mapping_is_pinned) {
    EXPECT_EQ(to_kafka_error_code(errc::corrupt_message), 2);
    EXPECT_EQ(to_kafka_error_code(errc::message_too_large), 10);
    EXPECT_EQ(to_kafka_error_code(errc::unsupported_compression), 76);
    EXPECT_EQ(to_kafka_error_code(errc::invalid_record), 87);
    EXPECT_EQ(to_kafka_error_code(errc::unsupported_magic), 87);
    EXPECT_EQ(to_kafka_error_code(errc::decompressed_too_large), 10);
}

TEST(records_errc, test_error_codes_convert_and_describe_themselves) {
    std::error_code ec = errc::invalid_record;
    EXPECT_EQ(ec.category().name(), std::string("records"));
    EXPECT_EQ(ec.message(), "invalid record");
    EXPECT_EQ(to_kafka_error_code(ec), 87);
    EXPECT_EQ(to_kafka_error_code(std::error_code{}), 0);
    EXPECT_EQ(to_kafka_error_code(std::make_error_code(std::errc::io_error)), -1);
}

}  // namespace
}  // namespace spool::protocol::records
