// records_field: views into the frame, owned bytes, and file slices spliced into a Fetch
// response instead of copied.

#include "protocol/api/framing.h"
#include "protocol/messages/fetch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace spool::protocol {
namespace {

// A real temporary file (no mock: sendfile's input is a file descriptor).
std::shared_ptr<const file_handle> temp_file(std::string_view content) {
    char path[] = "/tmp/spool_records_field_XXXXXX";
    int fd = ::mkstemp(path);
    EXPECT_GE(fd, 0);
    ::unlink(path);
    EXPECT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    return std::make_shared<const file_handle>(fd);
}

fetch_response one_partition_response(records_field records) {
    fetch_response resp;
    auto& topic = resp.responses.emplace_back();
    topic.topic = "t";
    auto& p = topic.partitions.emplace_back();
    p.records = std::move(records);
    return resp;
}

TEST(records_field, test_default_is_empty_not_null) {
    records_field r;
    EXPECT_FALSE(r.is_null());
    EXPECT_TRUE(r.empty());
    std::vector<uint8_t> out;
    wire::writer w(out);
    r.encode(w, false, true);
    EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(records_field, test_null_encodes_as_minus_one_or_compact_zero) {
    auto r = records_field::null_value();
    std::vector<uint8_t> classic;
    wire::writer w1(classic);
    r.encode(w1, false, true);
    EXPECT_EQ(classic, (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff}));
    std::vector<uint8_t> compact;
    wire::writer w2(compact);
    r.encode(w2, true, true);
    EXPECT_EQ(compact, (std::vector<uint8_t>{0x00}));
    EXPECT_EQ(r.encoded_size(true, true), 1u);
}

TEST(records_field, test_file_slices_are_spliced_not_copied) {
    auto file = temp_file("0123456789");
    records_field records;
    records.append_owned({0xaa, 0xbb});
    records.append_slice(file_slice{file, 2, 5});
    records.append_view(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>("xy"), 2));
    ASSERT_EQ(records.size(), 9u);
    auto resp = one_partition_response(records);

    for (int16_t version : {4, 11, 12, 17}) {
        SCOPED_TRACE(version);
        auto spliced = encode_response(7, version, resp);
        auto copied = encode_response(7, version, resp, /*splice_files=*/false);
        ASSERT_EQ(spliced.splices.size(), 1u);
        EXPECT_TRUE(copied.splices.empty());
        // The size prefix and encoded_size count the slice bytes the buffer lacks.
        EXPECT_EQ(spliced.wire_size(), copied.bytes.size());
        EXPECT_EQ(spliced.bytes.size() + 5, copied.bytes.size());
        wire::reader prefix(spliced.bytes);
        EXPECT_EQ(static_cast<size_t>(prefix.read_i32()), spliced.wire_size() - 4);

        // Sending buffer up to the splice, then the file range, then the rest is the copy.
        std::vector<uint8_t> sent(spliced.bytes.begin(),
                                  spliced.bytes.begin() + static_cast<long>(spliced.splices[0].at));
        std::string_view file_part = "23456";
        sent.insert(sent.end(), file_part.begin(), file_part.end());
        sent.insert(sent.end(), spliced.bytes.begin() + static_cast<long>(spliced.splices[0].at),
                    spliced.bytes.end());
        EXPECT_EQ(sent, copied.bytes);
    }
}

TEST(records_field, test_decoded_records_view_the_frame) {
    auto resp = one_partition_response(records_field::view(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>("batch"), 5)));
    auto out = encode_response(1, 11, resp);
    wire::reader r(std::span(out.bytes).subspan(8));  // size prefix + header v0
    fetch_response decoded;
    ASSERT_TRUE(decoded.decode(r, 11));
    auto bytes = decoded.responses[0].partitions[0].records.bytes();
    ASSERT_EQ(bytes.size(), 5u);
    EXPECT_GE(bytes.data(), out.bytes.data());
    EXPECT_LT(bytes.data(), out.bytes.data() + out.bytes.size());
    EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "batch");
}

TEST(records_field, test_equality_compares_content_across_part_kinds) {
    records_field a;
    a.append_owned({1, 2, 3});
    std::vector<uint8_t> backing = {1, 2, 3};
    auto b = records_field::view(backing);
    EXPECT_TRUE(a == b);
    b.append_owned({4});
    EXPECT_FALSE(a == b);
    EXPECT_FALSE(records_field::null_value() == records_field{});
}

TEST(records_field, test_equality_compares_file_slices_by_identity_and_range) {
    auto file = temp_file("abcdef");
    records_field a;
    a.append_owned({1});
    a.append_slice(file_slice{file, 0, 3});
    records_field b;
    b.append_view(std::span<const uint8_t>(a.bytes().data(), 0));
    b.append_owned({1});
    b.append_slice(file_slice{file, 0, 3});
    EXPECT_TRUE(a == b);
    records_field c;
    c.append_owned({1});
    c.append_slice(file_slice{file, 1, 3});
    EXPECT_FALSE(a == c);
}

}  // namespace
}  // namespace spool::protocol
