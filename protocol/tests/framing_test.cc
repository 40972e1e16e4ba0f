// Request parsing and response framing around the generated codecs.

#include "protocol/api/framing.h"

#include "protocol/messages/all.h"

#include <gtest/gtest.h>

namespace spool::protocol {
namespace {

TEST(framing, test_request_round_trips_through_parse_and_decode) {
    metadata_request body;
    body.topics.emplace().emplace_back().name = "orders";
    auto frame = encode_request(5, std::string("app"), 12, body);
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(req.value().header_version, 2);
    EXPECT_EQ(req.value().header.client_id, std::optional<std::string>("app"));
    auto decoded = decode_request<metadata_request>(req.value());
    ASSERT_TRUE(decoded.has_value());
    EXPECT_TRUE(decoded.value() == body);
}

TEST(framing, test_unsupported_version_maps_to_unsupported_version) {
    api_versions_request body;
    auto frame = encode_request(1, std::nullopt, 3, body);
    frame[7] = 99;  // api_version 99
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    auto decoded = decode_request<api_versions_request>(req.value());
    ASSERT_FALSE(decoded.has_value());
    EXPECT_EQ(decoded.error(), make_error_code(error_code::unsupported_version));
}

TEST(framing, test_unknown_api_key_and_short_header_are_invalid_requests) {
    std::vector<uint8_t> unknown = {0x03, 0xe7, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff};
    auto a = parse_request(unknown);
    ASSERT_FALSE(a.has_value());
    EXPECT_EQ(a.error(), make_error_code(error_code::invalid_request));
    std::vector<uint8_t> short_header = {0x00, 0x03, 0x00, 0x01, 0x00};
    auto b = parse_request(short_header);
    ASSERT_FALSE(b.has_value());
    EXPECT_EQ(b.error(), make_error_code(error_code::invalid_request));
}

TEST(framing, test_decoding_as_the_wrong_api_is_refused) {
    auto frame = encode_request(1, std::nullopt, 1, heartbeat_request{});
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    EXPECT_FALSE(decode_request<metadata_request>(req.value()).has_value());
}

TEST(framing, test_malformed_body_is_an_invalid_request) {
    auto frame = encode_request(1, std::nullopt, 4, metadata_request{});
    frame.pop_back();
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    auto decoded = decode_request<metadata_request>(req.value());
    ASSERT_FALSE(decoded.has_value());
    EXPECT_EQ(decoded.error(), make_error_code(error_code::invalid_request));
}

// librdkafka 2.0.2 writes the tagged-field byte twice in ListGroups v3+ requests.
TEST(framing, test_trailing_byte_after_body_is_tolerated) {
    auto frame = encode_request(1, std::string("rdkafka"), 3, list_groups_request{});
    frame.push_back(0x00);
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    EXPECT_TRUE(decode_request<list_groups_request>(req.value()).has_value());
}

TEST(framing, test_header_versions_follow_flexibility_except_api_versions) {
    EXPECT_EQ(request_header_version(api_key::metadata, 8), 1);
    EXPECT_EQ(request_header_version(api_key::metadata, 9), 2);
    EXPECT_EQ(response_header_version(api_key::metadata, 8), 0);
    EXPECT_EQ(response_header_version(api_key::metadata, 9), 1);
    EXPECT_EQ(request_header_version(api_key::api_versions, 3), 2);
    EXPECT_EQ(response_header_version(api_key::api_versions, 3), 0);
    EXPECT_EQ(response_header_version(api_key::api_versions, 4), 0);
    EXPECT_EQ(api_name(api_key::fetch), "Fetch");
}

TEST(framing, test_flexible_response_has_tagged_header) {
    auto out = encode_response(3, 9, metadata_response{});
    // size | correlation id 3 | header tags 0 | body...
    ASSERT_GE(out.bytes.size(), 9u);
    EXPECT_EQ(out.bytes[7], 0x03);
    EXPECT_EQ(out.bytes[8], 0x00);
    EXPECT_EQ(out.bytes.size() - 4,
              response_header{}.encoded_size(1) + metadata_response{}.encoded_size(9));
}

}  // namespace
}  // namespace spool::protocol
