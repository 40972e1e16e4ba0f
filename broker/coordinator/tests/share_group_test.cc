// share_groups: KIP-932 membership rules (join, heartbeat, leave, fencing, session expiry) and
// the balanced assignment.

#include "broker/coordinator/errc.h"
#include "broker/coordinator/share_group.h"

#include <gtest/gtest.h>

namespace spool::broker::coordinator {
namespace {

topic_image_ptr image(int32_t partitions) {
    auto t = std::make_shared<topic_image>();
    protocol::uuid id{};
    id.bytes[0] = 1;
    t->by_name["t"] = {id, partitions, false};
    t->names[id] = "t";
    return t;
}

share_heartbeat_request join(const std::string& member, topic_image_ptr topics) {
    share_heartbeat_request r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = 0;
    r.subscribed_topic_names = std::vector<std::string>{"t"};
    r.topics = std::move(topics);
    return r;
}

size_t owned(const share_heartbeat_result& r) {
    size_t n = 0;
    for (const auto& [t, ps] : r.assignment.value()) {
        n += ps.size();
    }
    return n;
}

TEST(share_groups, join_assigns_every_partition_and_members_share_them) {
    share_groups gs;
    share_config cfg;
    auto topics = image(2);
    auto a = gs.heartbeat(join("a", topics), time_ms(0), cfg);
    ASSERT_FALSE(a.error);
    EXPECT_EQ(a.member_epoch, 1);
    EXPECT_EQ(owned(a), 2u);
    auto b = gs.heartbeat(join("b", topics), time_ms(0), cfg);
    EXPECT_EQ(b.member_epoch, 2);
    EXPECT_EQ(owned(b), 1u);
    auto c = gs.heartbeat(join("c", topics), time_ms(0), cfg);
    EXPECT_EQ(owned(c), 1u);  // three members, two partitions: one is shared
    // a heartbeats at the epoch it was told (1) and gets the group's with its new share; an
    // epoch it was never told is fenced.
    share_heartbeat_request hb;
    hb.group_id = "g";
    hb.member_id = "a";
    hb.member_epoch = 1;
    auto a2 = gs.heartbeat(hb, time_ms(1), cfg);
    ASSERT_FALSE(a2.error);
    EXPECT_EQ(a2.member_epoch, 3);
    EXPECT_EQ(owned(a2), 1u);
    hb.member_epoch = 5;
    EXPECT_EQ(gs.heartbeat(hb, time_ms(1), cfg).error, make_error_code(errc::fenced_member_epoch));
}

TEST(share_groups, leave_and_session_expiry_reassign) {
    share_groups gs;
    share_config cfg;
    cfg.session_timeout_ms = 1000;
    auto topics = image(4);
    ASSERT_FALSE(gs.heartbeat(join("a", topics), time_ms(0), cfg).error);
    ASSERT_FALSE(gs.heartbeat(join("b", topics), time_ms(0), cfg).error);
    share_heartbeat_request leave;
    leave.group_id = "g";
    leave.member_id = "b";
    leave.member_epoch = -1;
    EXPECT_EQ(gs.heartbeat(leave, time_ms(10), cfg).member_epoch, -1);
    EXPECT_EQ(gs.describe("g").members.size(), 1u);
    EXPECT_EQ(gs.describe("g").members[0].assigned.begin()->second.size(), 4u);
    gs.expire(time_ms(2000));
    EXPECT_EQ(gs.describe("g").state, "Empty");
    share_heartbeat_request unknown;
    unknown.group_id = "g";
    unknown.member_id = "a";
    unknown.member_epoch = 1;
    EXPECT_EQ(gs.heartbeat(unknown, time_ms(2000), cfg).error,
              make_error_code(errc::unknown_member_id));
    auto bad = join("", topics);
    EXPECT_EQ(gs.heartbeat(bad, time_ms(0), cfg).error, make_error_code(errc::invalid_request));
}

}  // namespace
}  // namespace spool::broker::coordinator
