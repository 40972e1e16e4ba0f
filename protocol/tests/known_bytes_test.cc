// Hand-derived byte vectors: each is written out from the protocol spec (field by field, see the
// comments), not produced by our encoder, so they catch a generator that is consistently wrong.

#include "protocol/api/framing.h"
#include "protocol/messages/all.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spool::protocol {
namespace {

std::vector<uint8_t> encode_body(const auto& msg, int16_t version) {
    std::vector<uint8_t> out;
    wire::writer w(out);
    msg.encode(w, version);
    EXPECT_EQ(msg.encoded_size(version), out.size());
    return out;
}

std::vector<uint8_t> with_text(std::vector<uint8_t> prefix, std::string_view text,
                               std::vector<uint8_t> suffix = {}) {
    prefix.insert(prefix.end(), text.begin(), text.end());
    prefix.insert(prefix.end(), suffix.begin(), suffix.end());
    return prefix;
}

// ApiVersions v3 request as librdkafka 2.0.2 sends it (client.id "rdkafka"):
//   int32 size 36
//   header v2: api_key 18 | api_version 3 | correlation_id 1 |
//              client_id int16 length 7 "rdkafka" (classic, even in v2) | tagged fields: 0
//   body:      compact string "librdkafka" (uvarint 10+1) | compact string "2.0.2" (5+1) |
//              tagged fields: 0
std::vector<uint8_t> librdkafka_api_versions_v3() {
    std::vector<uint8_t> f = {0x00, 0x00, 0x00, 0x24, 0x00, 0x12, 0x00,
                              0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x07};
    f = with_text(f, "rdkafka", {0x00, 0x0b});
    f = with_text(f, "librdkafka", {0x06});
    f = with_text(f, "2.0.2", {0x00});
    return f;
}

TEST(known_bytes, test_librdkafka_api_versions_v3_request_decodes) {
    auto frame = librdkafka_api_versions_v3();
    ASSERT_EQ(frame.size(), 40u);
    auto req = parse_request(std::span(frame).subspan(4));
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(req.value().header_version, 2);
    EXPECT_EQ(req.value().key(), api_key::api_versions);
    EXPECT_EQ(req.value().version(), 3);
    EXPECT_EQ(req.value().header.correlation_id, 1);
    EXPECT_EQ(req.value().header.client_id, std::optional<std::string>("rdkafka"));
    auto body = decode_request<api_versions_request>(req.value());
    ASSERT_TRUE(body.has_value());
    EXPECT_EQ(body.value().client_software_name, "librdkafka");
    EXPECT_EQ(body.value().client_software_version, "2.0.2");
}

TEST(known_bytes, test_librdkafka_api_versions_v3_request_encodes_identically) {
    api_versions_request body;
    body.client_software_name = "librdkafka";
    body.client_software_version = "2.0.2";
    EXPECT_EQ(encode_request(1, std::string("rdkafka"), 3, body), librdkafka_api_versions_v3());
}

// ApiVersions v3 response: response header v0 (correlation id only, no tagged fields) even
// though v3 is flexible.
//   int32 size 19 | correlation_id 1 |
//   error_code 0 | compact array of 1 (uvarint 2): {api_key 18, min 0, max 4, tags 0} |
//   throttle_time_ms 0 | tagged fields: 0 (FinalizedFeaturesEpoch -1 is the default: omitted)
TEST(known_bytes, test_api_versions_v3_response_uses_header_v0) {
    api_versions_response resp;
    auto& key = resp.api_keys.emplace_back();
    key.api_key = 18;
    key.max_version = 4;
    auto out = encode_response(1, 3, resp);
    std::vector<uint8_t> expected = {0x00, 0x00, 0x00, 0x13, 0x00, 0x00, 0x00, 0x01,
                                     0x00, 0x00, 0x02, 0x00, 0x12, 0x00, 0x00, 0x00,
                                     0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    EXPECT_EQ(out.bytes, expected);
    EXPECT_TRUE(out.splices.empty());
}

// ApiVersions v0 response body: error_code 0 | int32 count 1 | api_key 18, min 0, max 4.
TEST(known_bytes, test_api_versions_v0_response_body) {
    api_versions_response resp;
    auto& key = resp.api_keys.emplace_back();
    key.api_key = 18;
    key.max_version = 4;
    resp.throttle_time_ms = 77;  // not in v0: must not appear
    std::vector<uint8_t> expected = {0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
                                     0x00, 0x12, 0x00, 0x00, 0x00, 0x04};
    EXPECT_EQ(encode_body(resp, 0), expected);
}

// Metadata v4 request: int32 count 1 | string int16 1 "t" | allow_auto_topic_creation 1.
TEST(known_bytes, test_metadata_v4_request) {
    std::vector<uint8_t> bytes = {0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't', 0x01};
    metadata_request req;
    wire::reader r(bytes);
    ASSERT_TRUE(req.decode(r, 4));
    ASSERT_TRUE(req.topics.has_value());
    ASSERT_EQ(req.topics->size(), 1u);
    EXPECT_EQ((*req.topics)[0].name, std::optional<std::string>("t"));
    EXPECT_TRUE(req.allow_auto_topic_creation);
    EXPECT_EQ(encode_body(req, 4), bytes);
}

// Metadata v9 request (flexible), all topics: compact null array (0) | allow_auto 1 |
// include_cluster_authorized_operations 0 | include_topic_authorized_operations 0 | tags 0.
TEST(known_bytes, test_metadata_v9_request_with_null_topics) {
    std::vector<uint8_t> bytes = {0x00, 0x01, 0x00, 0x00, 0x00};
    metadata_request req;
    wire::reader r(bytes);
    ASSERT_TRUE(req.decode(r, 9));
    EXPECT_FALSE(req.topics.has_value());
    EXPECT_EQ(encode_body(req, 9), bytes);
}

// Produce v3 request: transactional_id null (int16 -1) | acks -1 | timeout 30000 |
// topics [1]: name "t" | partitions [1]: index 0 | records int32 3 bytes aa bb cc.
TEST(known_bytes, test_produce_v3_request_records_are_a_view_into_the_frame) {
    std::vector<uint8_t> bytes = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x75, 0x30, 0x00, 0x00,
                                  0x00, 0x01, 0x00, 0x01, 't',  0x00, 0x00, 0x00, 0x01, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xaa, 0xbb, 0xcc};
    produce_request req;
    wire::reader r(bytes);
    ASSERT_TRUE(req.decode(r, 3));
    EXPECT_FALSE(req.transactional_id.has_value());
    EXPECT_EQ(req.acks, -1);
    EXPECT_EQ(req.timeout_ms, 30000);
    ASSERT_EQ(req.topic_data.size(), 1u);
    ASSERT_EQ(req.topic_data[0].partition_data.size(), 1u);
    const auto& records = req.topic_data[0].partition_data[0].records;
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records.bytes().data(), bytes.data() + 27);
    EXPECT_EQ(encode_body(req, 3), bytes);
}

// Fetch v12 response (flexible), one partition with default (empty, non-null) records:
// throttle 0 | error 0 | session 0 | compact [1] (2) | topic compact "t" (2 't') |
// partitions compact [1] (2) | index 0 | error 0 | hw 5 | lso -1 | log_start -1 |
// aborted_transactions compact null (0) | preferred_read_replica -1 | records compact empty (1) |
// partition tags 0 | topic tags 0 | tags 0.
TEST(known_bytes, test_fetch_v12_response_has_empty_not_null_records) {
    fetch_response resp;
    auto& topic = resp.responses.emplace_back();
    topic.topic = "t";
    auto& p = topic.partitions.emplace_back();
    p.high_watermark = 5;
    p.aborted_transactions.reset();
    std::vector<uint8_t> expected = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 't', 2,
                                     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,   5};
    for (int i = 0; i < 16; ++i) {
        expected.push_back(0xff);
    }
    expected.insert(expected.end(), {0x00, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00});
    EXPECT_EQ(encode_body(resp, 12), expected);
}

// Request header v1 for a non-flexible Produce v7 with a null client id (int16 -1).
TEST(known_bytes, test_request_header_v1_null_client_id) {
    std::vector<uint8_t> frame = {0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x2a, 0xff, 0xff};
    auto req = parse_request(frame);
    ASSERT_TRUE(req.has_value());
    EXPECT_EQ(req.value().header_version, 1);
    EXPECT_EQ(req.value().key(), api_key::produce);
    EXPECT_EQ(req.value().header.correlation_id, 42);
    EXPECT_FALSE(req.value().header.client_id.has_value());
    EXPECT_TRUE(req.value().body.empty());
}

}  // namespace
}  // namespace spool::protocol
