// Pins Kafka's error numbers, names, retriability and the decode-failure mapping.

#include "protocol/errors.h"

#include <gtest/gtest.h>

namespace spool::protocol {
namespace {

TEST(errors, test_codes_have_kafkas_numbers) {
    EXPECT_EQ(static_cast<int16_t>(error_code::unknown_server_error), -1);
    EXPECT_EQ(static_cast<int16_t>(error_code::none), 0);
    EXPECT_EQ(static_cast<int16_t>(error_code::offset_out_of_range), 1);
    EXPECT_EQ(static_cast<int16_t>(error_code::corrupt_message), 2);
    EXPECT_EQ(static_cast<int16_t>(error_code::not_leader_or_follower), 6);
    EXPECT_EQ(static_cast<int16_t>(error_code::unsupported_version), 35);
    EXPECT_EQ(static_cast<int16_t>(error_code::invalid_request), 42);
    EXPECT_EQ(static_cast<int16_t>(error_code::unsupported_compression_type), 76);
    EXPECT_EQ(static_cast<int16_t>(error_code::invalid_record), 87);
    EXPECT_EQ(static_cast<int16_t>(error_code::transaction_abortable), 120);
}

TEST(errors, test_names_are_kafkas) {
    EXPECT_EQ(name(error_code::none), "NONE");
    EXPECT_EQ(name(error_code::not_leader_or_follower), "NOT_LEADER_OR_FOLLOWER");
    EXPECT_EQ(name(error_code::invalid_record), "INVALID_RECORD");
    EXPECT_EQ(name(static_cast<error_code>(30000)), "UNKNOWN");
    for (int16_t raw = -1; raw <= 120; ++raw) {
        EXPECT_TRUE(is_known_error_code(raw)) << raw;
        EXPECT_NE(name(static_cast<error_code>(raw)), "UNKNOWN") << raw;
    }
    EXPECT_FALSE(is_known_error_code(-2));
}

TEST(errors, test_retriable_flags_follow_the_client) {
    EXPECT_TRUE(is_retriable(error_code::not_leader_or_follower));
    EXPECT_TRUE(is_retriable(error_code::coordinator_load_in_progress));
    EXPECT_TRUE(is_retriable(error_code::unknown_topic_or_partition));
    EXPECT_FALSE(is_retriable(error_code::none));
    EXPECT_FALSE(is_retriable(error_code::invalid_request));
    EXPECT_FALSE(is_retriable(error_code::topic_authorization_failed));
}

TEST(errors, test_decode_failures_map_to_kafka_errors) {
    using wire::read_error;
    EXPECT_EQ(to_error_code(read_error::none, decode_context::request), error_code::none);
    EXPECT_EQ(to_error_code(read_error::underflow, decode_context::request),
              error_code::invalid_request);
    EXPECT_EQ(to_error_code(read_error::bad_length, decode_context::request),
              error_code::invalid_request);
    EXPECT_EQ(to_error_code(read_error::unexpected_null, decode_context::request),
              error_code::invalid_request);
    EXPECT_EQ(to_error_code(read_error::bad_varint, decode_context::records),
              error_code::corrupt_message);
    EXPECT_EQ(to_error_code(read_error::unsupported_version, decode_context::request),
              error_code::unsupported_version);
}

TEST(errors, test_error_codes_work_as_std_error_code) {
    std::error_code ec = error_code::message_too_large;
    EXPECT_EQ(ec.value(), 10);
    EXPECT_STREQ(ec.category().name(), "kafka");
    EXPECT_EQ(ec.message(), "MESSAGE_TOO_LARGE");
    std::error_code wire_ec = wire::read_error::underflow;
    EXPECT_STREQ(wire_ec.category().name(), "kafka.wire");
}

}  // namespace
}  // namespace spool::protocol
