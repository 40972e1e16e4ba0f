// The fuzzer's request rewriting (request_clamps.h) and input framing (fuzz_session.h): what
// the fuzzer sends must stay a valid request of the same API and version, with only the
// documented fields changed.

#include "tests/fuzz/request_clamps.h"

#include "protocol/api/framing.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/metadata.h"
#include "tests/fuzz/fuzz_session.h"

#include <gtest/gtest.h>

namespace spool::tests::fuzz {
namespace {

namespace proto = spool::protocol;

template <class Request>
std::vector<uint8_t> frame_of(const Request& r, int16_t version) {
    auto f = proto::encode_request(7, std::string("fuzz"), version, r);
    return {f.begin() + 4, f.end()};
}

template <class Request>
Request decoded(const std::vector<uint8_t>& frame) {
    auto req = proto::parse_request(frame);
    EXPECT_TRUE(req.has_value());
    EXPECT_EQ(req.value().header.correlation_id, 7);
    auto r = proto::decode_request<Request>(req.value());
    EXPECT_TRUE(r.has_value());
    return r.value();
}

TEST(request_clamps, test_long_poll_fetch_waits_at_most_the_fuzz_bound) {
    proto::fetch_request r;
    r.max_wait_ms = INT32_MAX;
    r.min_bytes = 1 << 20;
    auto out = decoded<proto::fetch_request>(clamp_request(frame_of(r, 12)));
    EXPECT_EQ(out.max_wait_ms, fuzz_max_wait_ms);
    EXPECT_EQ(out.min_bytes, 1 << 20);
}

TEST(request_clamps, test_join_group_timeouts_are_bounded_and_member_id_adopted) {
    proto::join_group_request r;
    r.group_id = "g";
    r.session_timeout_ms = 45000;
    r.rebalance_timeout_ms = 300000;
    auto out = decoded<proto::join_group_request>(
        clamp_request(frame_of(r, 9), membership{"fuzz-member", 3}));
    EXPECT_EQ(out.session_timeout_ms, fuzz_max_group_timeout_ms);
    EXPECT_EQ(out.rebalance_timeout_ms, fuzz_max_group_timeout_ms);
    EXPECT_EQ(out.member_id, "fuzz-member");
}

TEST(request_clamps, test_heartbeat_names_the_connections_member_only_when_it_names_one) {
    proto::heartbeat_request r;
    r.group_id = "g";
    r.member_id = "captured-member";
    r.generation_id = 1;
    auto out = decoded<proto::heartbeat_request>(
        clamp_request(frame_of(r, 4), membership{"fuzz-member", 3}));
    EXPECT_EQ(out.member_id, "fuzz-member");
    EXPECT_EQ(out.generation_id, 3);
    r.member_id.clear();
    auto anonymous = frame_of(r, 4);
    EXPECT_EQ(clamp_request(anonymous, membership{"fuzz-member", 3}), anonymous);
}

TEST(request_clamps, test_other_requests_and_garbage_pass_unchanged) {
    proto::metadata_request r;
    auto frame = frame_of(r, 12);
    EXPECT_EQ(clamp_request(frame), frame);
    std::vector<uint8_t> garbage = {0x00, 0x01, 0xff};
    EXPECT_EQ(clamp_request(garbage), garbage);
}

TEST(fuzz_session, test_frames_split_as_sized_and_the_last_takes_what_is_left) {
    std::vector<uint8_t> a = {1, 2, 3}, b = {4, 5};
    auto input = join_frames({a, b});
    EXPECT_EQ(split_frames(input), (std::vector<std::vector<uint8_t>>{a, b}));
    input.pop_back();  // b truncated
    EXPECT_EQ(split_frames(input), (std::vector<std::vector<uint8_t>>{a, {4}}));
    std::vector<uint8_t> negative = {0x80, 0, 0, 0, 9};
    EXPECT_TRUE(split_frames(negative).empty());
}

}  // namespace
}  // namespace spool::tests::fuzz
