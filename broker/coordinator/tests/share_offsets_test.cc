// share_groups' side of the share-group admin APIs: which partitions they cover (every partition
// ever assigned, or reset) and Kafka's rule that only an existing, empty group is altered,
// has offsets deleted or is deleted.

#include "broker/coordinator/errc.h"
#include "broker/coordinator/share_group.h"

#include <gtest/gtest.h>

namespace spool::broker::coordinator {
namespace {

protocol::uuid topic_id(uint8_t b) {
    protocol::uuid id{};
    id.bytes[0] = b;
    return id;
}

topic_image_ptr image() {
    auto t = std::make_shared<topic_image>();
    t->by_name["t"] = {topic_id(1), 3, false};
    t->names[topic_id(1)] = "t";
    t->by_name["u"] = {topic_id(2), 2, false};
    t->names[topic_id(2)] = "u";
    return t;
}

share_heartbeat_request join(const std::string& member, std::vector<std::string> topics) {
    share_heartbeat_request r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = 0;
    r.subscribed_topic_names = std::move(topics);
    r.topics = image();
    return r;
}

share_heartbeat_request leave(const std::string& member) {
    share_heartbeat_request r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = -1;
    return r;
}

TEST(share_offsets, assigned_partitions_stay_initialized_after_the_members_leave) {
    share_groups gs;
    share_config cfg;
    ASSERT_FALSE(gs.heartbeat(join("a", {"t"}), time_ms(0), cfg).error);
    ASSERT_FALSE(gs.heartbeat(leave("a"), time_ms(1), cfg).error);
    auto s = gs.initialized("g");
    ASSERT_FALSE(s.error);
    ASSERT_EQ(s.partitions.size(), 1u);
    EXPECT_EQ(s.partitions.at(topic_id(1)), (std::set<int32_t>{0, 1, 2}));
    EXPECT_EQ(gs.initialized("nope").error, make_error_code(errc::group_id_not_found));
}

TEST(share_offsets, alter_creates_a_missing_group) {
    share_groups gs;
    share_alter_request req;
    req.group_id = "new";
    req.partitions[topic_id(1)] = {0, 2};
    auto s = gs.alter(req);
    ASSERT_FALSE(s.error);
    EXPECT_TRUE(gs.contains("new"));
    EXPECT_EQ(gs.describe("new").state, "Empty");
    EXPECT_EQ(gs.initialized("new").partitions.at(topic_id(1)), (std::set<int32_t>{0, 2}));
}

TEST(share_offsets, alter_needs_an_empty_group_and_initializes_the_partitions) {
    share_groups gs;
    share_config cfg;
    share_alter_request req;
    req.group_id = "g";
    req.partitions[topic_id(2)] = {1};
    ASSERT_FALSE(gs.heartbeat(join("a", {"t"}), time_ms(0), cfg).error);
    auto busy = gs.alter(req);
    EXPECT_EQ(busy.error, make_error_code(errc::non_empty_group));
    EXPECT_FALSE(gs.initialized("g").partitions.contains(topic_id(2)));
    ASSERT_FALSE(gs.heartbeat(leave("a"), time_ms(1), cfg).error);
    auto ok = gs.alter(req);
    ASSERT_FALSE(ok.error);
    EXPECT_EQ(ok.partitions, req.partitions);
    EXPECT_EQ(gs.initialized("g").partitions.at(topic_id(2)), (std::set<int32_t>{1}));
}

TEST(share_offsets, delete_offsets_covers_initialized_topics_and_forgets_them) {
    share_groups gs;
    share_config cfg;
    ASSERT_FALSE(gs.heartbeat(join("a", {"t", "u"}), time_ms(0), cfg).error);
    share_topics_request req;
    req.group_id = "g";
    req.topics = {topic_id(1), topic_id(9)};
    EXPECT_EQ(gs.offsets_of(req).error, make_error_code(errc::non_empty_group));
    ASSERT_FALSE(gs.heartbeat(leave("a"), time_ms(1), cfg).error);
    auto s = gs.offsets_of(req);
    ASSERT_FALSE(s.error);
    ASSERT_EQ(s.partitions.size(), 1u);  // topic 9 never had state
    EXPECT_EQ(s.partitions.at(topic_id(1)).size(), 3u);
    gs.forget(req);
    auto left = gs.initialized("g").partitions;
    EXPECT_FALSE(left.contains(topic_id(1)));
    EXPECT_TRUE(left.contains(topic_id(2)));
}

TEST(share_offsets, delete_group_only_when_empty) {
    share_groups gs;
    share_config cfg;
    EXPECT_FALSE(gs.prepare_delete("g").share_group);  // not a share group: not ours
    ASSERT_FALSE(gs.heartbeat(join("a", {"u"}), time_ms(0), cfg).error);
    auto busy = gs.prepare_delete("g");
    EXPECT_TRUE(busy.share_group);
    EXPECT_EQ(busy.error, make_error_code(errc::non_empty_group));
    EXPECT_EQ(gs.remove("g"), make_error_code(errc::non_empty_group));
    ASSERT_FALSE(gs.heartbeat(leave("a"), time_ms(1), cfg).error);
    auto ok = gs.prepare_delete("g");
    ASSERT_FALSE(ok.error);
    EXPECT_EQ(ok.partitions.at(topic_id(2)).size(), 2u);
    EXPECT_FALSE(gs.remove("g"));
    EXPECT_FALSE(gs.contains("g"));
    EXPECT_EQ(gs.remove("g"), make_error_code(errc::group_id_not_found));
}

}  // namespace
}  // namespace spool::broker::coordinator
