#include "broker/storage/leader_epoch_cache.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/layout.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using model::leader_epoch;
using model::offset;
using test::temp_dir;

TEST(leader_epoch_cache, test_checkpoint_uses_kafka_text_format_and_reloads) {
    temp_dir dir;
    {
        auto c = leader_epoch_cache::load(file_ops::posix(), dir.path());
        ASSERT_TRUE(c);
        ASSERT_TRUE(c.value().assign(leader_epoch(0), offset(0)));
        ASSERT_TRUE(c.value().assign(leader_epoch(3), offset(1500)));
        ASSERT_TRUE(c.value().assign(leader_epoch(3), offset(1600)));  // same epoch: no change
        ASSERT_TRUE(c.value().assign(leader_epoch(2), offset(1700)));  // older: ignored
    }
    auto text = read_file(dir.path() / "leader-epoch-checkpoint");
    ASSERT_TRUE(text);
    EXPECT_EQ(std::string(text.value().begin(), text.value().end()), "0\n2\n0 0\n3 1500\n");
    auto c = leader_epoch_cache::load(file_ops::posix(), dir.path());
    ASSERT_TRUE(c);
    EXPECT_EQ(c.value().entries().size(), 2u);
    EXPECT_EQ(c.value().latest_epoch(), leader_epoch(3));
}

TEST(leader_epoch_cache, test_end_offset_for_epoch_follows_offset_for_leader_epoch_rules) {
    temp_dir dir;
    auto c = leader_epoch_cache::load(file_ops::posix(), dir.path()).value();
    ASSERT_TRUE(c.assign(leader_epoch(1), offset(10)));
    ASSERT_TRUE(c.assign(leader_epoch(3), offset(50)));
    ASSERT_TRUE(c.assign(leader_epoch(6), offset(90)));
    EXPECT_EQ(c.end_offset_for(leader_epoch(0), offset(120)),
              (epoch_entry{leader_epoch(-1), offset(-1)}));
    EXPECT_EQ(c.end_offset_for(leader_epoch(1), offset(120)),
              (epoch_entry{leader_epoch(1), offset(50)}));
    // Epoch 2 was never a leader epoch here: answer the largest below it and where it ended.
    EXPECT_EQ(c.end_offset_for(leader_epoch(2), offset(120)),
              (epoch_entry{leader_epoch(1), offset(50)}));
    EXPECT_EQ(c.end_offset_for(leader_epoch(6), offset(120)),
              (epoch_entry{leader_epoch(6), offset(120)}));
    EXPECT_EQ(c.epoch_for(offset(49)), leader_epoch(1));
    EXPECT_EQ(c.epoch_for(offset(50)), leader_epoch(3));
}

TEST(leader_epoch_cache, test_truncation_from_either_end) {
    temp_dir dir;
    auto c = leader_epoch_cache::load(file_ops::posix(), dir.path()).value();
    ASSERT_TRUE(c.assign(leader_epoch(1), offset(0)));
    ASSERT_TRUE(c.assign(leader_epoch(2), offset(50)));
    ASSERT_TRUE(c.assign(leader_epoch(4), offset(90)));
    ASSERT_TRUE(c.truncate_from_end(offset(90)));
    EXPECT_EQ(c.latest_epoch(), leader_epoch(2));
    ASSERT_TRUE(c.truncate_from_start(offset(60)));
    ASSERT_EQ(c.entries().size(), 1u);
    EXPECT_EQ(c.entries()[0], (epoch_entry{leader_epoch(2), offset(60)}));
    auto reloaded = leader_epoch_cache::load(file_ops::posix(), dir.path()).value();
    EXPECT_EQ(reloaded.entries(), c.entries());
}

TEST(offset_checkpoint, test_round_trip_in_kafka_format) {
    temp_dir dir;
    offset_checkpoint cp;
    cp[{"orders", model::partition_id(0)}] = offset(42);
    cp[{"orders", model::partition_id(3)}] = offset(7);
    auto path = dir.path() / "recovery-point-offset-checkpoint";
    ASSERT_TRUE(write_offset_checkpoint(file_ops::posix(), path, cp));
    auto text = read_file(path).value();
    EXPECT_EQ(std::string(text.begin(), text.end()), "0\n2\norders 0 42\norders 3 7\n");
    EXPECT_EQ(read_offset_checkpoint(path).value(), cp);
    EXPECT_TRUE(read_offset_checkpoint(dir.path() / "absent").value().empty());
}

}  // namespace
}  // namespace spool::broker::storage
