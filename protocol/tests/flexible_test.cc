// Flexible-version edge cases: tagged fields (known, unknown, malformed), compact nulls, and the
// request header's classic client_id inside header v2.

#include "protocol/api/framing.h"
#include "protocol/messages/all.h"

#include <gtest/gtest.h>

#include <vector>

namespace spool::protocol {
namespace {

template <class M>
std::vector<uint8_t> encode(const M& msg, int16_t version) {
    std::vector<uint8_t> out;
    wire::writer w(out);
    msg.encode(w, version);
    EXPECT_EQ(msg.encoded_size(version), out.size());
    return out;
}

// ApiVersions v3 request body with two unknown tagged fields:
//   compact "a" (2 'a') | compact "b" (2 'b') | tags: count 2 | tag 7 size 2 [01 02] | tag 9 size 0
TEST(flexible, test_unknown_tagged_fields_are_skipped_and_preserved) {
    std::vector<uint8_t> bytes = {0x02, 'a', 0x02, 'b', 0x02, 0x07, 0x02, 0x01, 0x02, 0x09, 0x00};
    api_versions_request req;
    wire::reader r(bytes);
    ASSERT_TRUE(req.decode(r, 3));
    EXPECT_EQ(r.remaining(), 0u);
    EXPECT_EQ(req.client_software_name, "a");
    EXPECT_EQ(req.client_software_version, "b");
    ASSERT_EQ(req.unknown_tags.count(), 2u);
    std::vector<uint32_t> tags;
    req.unknown_tags.for_each([&](uint32_t tag, std::span<const uint8_t>) { tags.push_back(tag); });
    EXPECT_EQ(tags, (std::vector<uint32_t>{7, 9}));
    EXPECT_EQ(encode(req, 3), bytes);
}

// Fetch v12 request, known tag 0 (ClusterId) plus tag 1, which only becomes ReplicaState in
// v15 and so is unknown at v12.
TEST(flexible, test_known_tagged_field_is_decoded_and_later_tags_kept) {
    fetch_request req;
    req.cluster_id = "abc";
    std::vector<uint8_t> one = {0x05};
    req.unknown_tags.append(1, one);
    auto bytes = encode(req, 12);
    // The body ends with: rack_id compact "" (1) | tags: count 2 | tag 0 size 4 [04 'a' 'b' 'c'] |
    // tag 1 size 1 [05]
    std::vector<uint8_t> tail = {0x01, 0x02, 0x00, 0x04, 0x04, 'a', 'b', 'c', 0x01, 0x01, 0x05};
    ASSERT_GE(bytes.size(), tail.size());
    EXPECT_TRUE(std::equal(tail.begin(), tail.end(), bytes.end() - static_cast<long>(tail.size())));

    fetch_request decoded;
    wire::reader r(bytes);
    ASSERT_TRUE(decoded.decode(r, 12));
    EXPECT_EQ(decoded.cluster_id, std::optional<std::string>("abc"));
    EXPECT_EQ(decoded.unknown_tags.count(), 1u);
    EXPECT_TRUE(decoded == req);
}

TEST(flexible, test_tagged_field_at_its_default_is_not_written) {
    fetch_request req;  // cluster_id defaults to null, replica_state to its defaults
    auto bytes = encode(req, 15);
    EXPECT_EQ(bytes.back(), 0x00);  // empty tag section
}

TEST(flexible, test_unknown_tags_interleave_with_known_ones_in_tag_order) {
    wire::unknown_tagged_fields unknown;
    std::vector<uint8_t> v = {0xee};
    unknown.append(1, v);
    unknown.append(5, v);
    std::vector<uint8_t> out;
    wire::writer w(out);
    wire::unknown_tag_cursor cursor(unknown);
    cursor.write_below(w, 3);
    w.write_uvarint(3);  // a known tag 3 with an empty value
    w.write_uvarint(0);
    cursor.write_rest(w);
    EXPECT_EQ(out, (std::vector<uint8_t>{0x01, 0x01, 0xee, 0x03, 0x00, 0x05, 0x01, 0xee}));
}

TEST(flexible, test_tagged_field_with_inconsistent_size_is_refused) {
    // Fetch v12 request with tag 0 (ClusterId) claiming 5 bytes but holding a 3-byte string.
    fetch_request req;
    auto bytes = encode(req, 12);
    bytes.back() = 0x01;  // one tagged field
    for (uint8_t b : std::vector<uint8_t>{0x00, 0x05, 0x04, 'a', 'b', 'c', 0x00}) {
        bytes.push_back(b);
    }
    fetch_request decoded;
    wire::reader r(bytes);
    EXPECT_FALSE(decoded.decode(r, 12));
    EXPECT_EQ(r.error(), wire::read_error::bad_length);
}

TEST(flexible, test_null_compact_string_where_nullable_decodes_to_nullopt) {
    // Metadata v12 request: topics compact [1] | topic_id (16 zero bytes) | name compact null |
    // topic tags 0 | allow_auto 1 | include_topic_authorized_operations 0 | tags 0.
    std::vector<uint8_t> bytes = {0x02};
    bytes.insert(bytes.end(), 16, 0x00);
    for (uint8_t b : std::vector<uint8_t>{0x00, 0x00, 0x01, 0x00, 0x00}) {
        bytes.push_back(b);
    }
    metadata_request req;
    wire::reader r(bytes);
    ASSERT_TRUE(req.decode(r, 12));
    ASSERT_TRUE(req.topics.has_value());
    ASSERT_EQ(req.topics->size(), 1u);
    EXPECT_FALSE((*req.topics)[0].name.has_value());
    EXPECT_EQ(encode(req, 12), bytes);
}

TEST(flexible, test_null_compact_string_where_not_nullable_is_refused) {
    std::vector<uint8_t> bytes = {0x00, 0x01, 0x00};  // client_software_name null
    api_versions_request req;
    wire::reader r(bytes);
    EXPECT_FALSE(req.decode(r, 3));
    EXPECT_EQ(r.error(), wire::read_error::unexpected_null);
}

TEST(flexible, test_null_value_in_a_version_without_nulls_is_encoded_empty) {
    metadata_request req;
    req.topics.reset();  // v0 has no null topics: "all topics" is an empty array there
    EXPECT_EQ(encode(req, 0), (std::vector<uint8_t>{0x00, 0x00, 0x00, 0x00}));
}

TEST(flexible, test_request_header_v2_keeps_classic_client_id_and_tags) {
    request_header h;
    h.request_api_key = 18;
    h.request_api_version = 3;
    h.correlation_id = 9;
    h.client_id = "c";
    std::vector<uint8_t> v = {0x01};
    h.unknown_tags.append(4, v);
    auto bytes = encode(h, 2);
    std::vector<uint8_t> expected = {0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x09,
                                     0x00, 0x01, 'c',  0x01, 0x04, 0x01, 0x01};
    EXPECT_EQ(bytes, expected);
    request_header decoded;
    wire::reader r(bytes);
    ASSERT_TRUE(decoded.decode(r, 2));
    EXPECT_TRUE(decoded == h);
}

}  // namespace
}  // namespace spool::protocol
