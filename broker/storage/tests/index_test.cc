#include "broker/storage/checkpoint_file.h"
#include "broker/storage/offset_index.h"
#include "broker/storage/time_index.h"
#include "test_util.h"

#include <gtest/gtest.h>

namespace spool::broker::storage {
namespace {

using test::temp_dir;

TEST(offset_index, test_lookup_returns_last_entry_at_or_below_target) {
    temp_dir dir;
    auto idx =
        offset_index::open(file_ops::posix(), dir.path() / "a.index", model::offset(100), 4096);
    ASSERT_TRUE(idx);
    auto& i = idx.value();
    i.append(model::offset(110), 1000);
    i.append(model::offset(120), 2000);
    i.append(model::offset(135), 3000);
    EXPECT_EQ(i.lookup(model::offset(100)).position, 0u);
    EXPECT_EQ(i.lookup(model::offset(100)).offset, model::offset(100));
    EXPECT_EQ(i.lookup(model::offset(109)).position, 0u);
    EXPECT_EQ(i.lookup(model::offset(110)).position, 1000u);
    EXPECT_EQ(i.lookup(model::offset(134)).position, 2000u);
    EXPECT_EQ(i.lookup(model::offset(10'000)).position, 3000u);
    i.truncate_to(model::offset(120));
    EXPECT_EQ(i.entries(), 1u);
    EXPECT_EQ(i.lookup(model::offset(500)).position, 1000u);
}

TEST(offset_index, test_trimmed_index_reopens_with_its_entries_big_endian_on_disk) {
    temp_dir dir;
    auto path = dir.path() / "b.index";
    {
        auto idx = offset_index::open(file_ops::posix(), path, model::offset(0), 4096);
        ASSERT_TRUE(idx);
        EXPECT_EQ(std::filesystem::file_size(path), 4096u);  // preallocated
        idx.value().append(model::offset(5), 300);
        idx.value().append(model::offset(9), 700);
        ASSERT_TRUE(idx.value().file().trim(file_ops::posix()));
    }
    EXPECT_EQ(std::filesystem::file_size(path), 16u);
    auto bytes = read_file(path);
    ASSERT_TRUE(bytes);
    // relative offset 5, position 300, big-endian as Kafka writes them.
    std::vector<uint8_t> first(bytes.value().begin(), bytes.value().begin() + 8);
    EXPECT_EQ(first, (std::vector<uint8_t>{0, 0, 0, 5, 0, 0, 1, 44}));
    auto idx = offset_index::open(file_ops::posix(), path, model::offset(0), 0);
    ASSERT_TRUE(idx);
    EXPECT_EQ(idx.value().entries(), 2u);
    EXPECT_EQ(idx.value().lookup(model::offset(9)).position, 700u);
    EXPECT_TRUE(idx.value().sane(800));
    EXPECT_FALSE(idx.value().sane(500));  // an entry points past the log
}

TEST(time_index, test_only_increasing_timestamps_are_indexed_and_lookup_rounds_down) {
    temp_dir dir;
    auto idx =
        time_index::open(file_ops::posix(), dir.path() / "a.timeindex", model::offset(50), 1200);
    ASSERT_TRUE(idx);
    auto& t = idx.value();
    t.maybe_append(model::timestamp(1000), model::offset(55));
    t.maybe_append(model::timestamp(900), model::offset(60));  // not newer: skipped
    t.maybe_append(model::timestamp(2000), model::offset(70));
    EXPECT_EQ(t.entries(), 2u);
    EXPECT_FALSE(t.lookup(model::timestamp(999)));
    EXPECT_EQ(t.lookup(model::timestamp(1500))->offset, model::offset(55));
    EXPECT_EQ(t.lookup(model::timestamp(2000))->offset, model::offset(70));
    EXPECT_EQ(t.last()->ts, model::timestamp(2000));
    EXPECT_TRUE(t.sane());
}

}  // namespace
}  // namespace spool::broker::storage
