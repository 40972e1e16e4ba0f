// partition.metadata (partition_metadata.h): Kafka's text, and a directory a namesake topic left
// set aside as stray while this topic's own directory is kept.

#include "broker/storage/partition_metadata.h"

#include "broker/storage/tests/test_util.h"

#include <gtest/gtest.h>

#include <fstream>

namespace spool::broker::storage {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), {}};
}

void write_text(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

// root/t-0 holding a first segment with `records`.
fs::path partition_dir_with(const fs::path& root, const std::string& records) {
    const auto dir = root / "t-0";
    fs::create_directories(dir);
    write_text(dir / "00000000000000000000.log", records);
    return dir;
}

TEST(partition_metadata, text_is_kafkas) {
    // Kafka's PartitionMetadataFile: "version: 0", "topic_id: <base64url id>", one per line.
    auto id = protocol::uuid::parse("AAAAAAAAAAAAAAAAAAAAAg");
    ASSERT_TRUE(id);
    EXPECT_EQ(format_partition_metadata(*id), "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAg\n");
    auto parsed = parse_partition_metadata("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAg\n");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed.value(), *id);
    EXPECT_FALSE(parse_partition_metadata("version: 1\ntopic_id: AAAAAAAAAAAAAAAAAAAAAg\n"));
    EXPECT_FALSE(parse_partition_metadata("version: 0\ntopic_id: not-an-id\n"));
    EXPECT_FALSE(parse_partition_metadata("version: 0\n"));
    EXPECT_FALSE(parse_partition_metadata(""));
}

TEST(partition_metadata, a_new_directory_is_recorded_after_the_log_creates_it) {
    test::temp_dir root;
    const auto dir = root.path() / "t-0";
    const auto id = protocol::uuid::random();
    auto claim = claim_partition_dir(file_ops::posix(), dir, id);
    ASSERT_TRUE(claim);
    EXPECT_TRUE(claim.value().record_after_open);
    EXPECT_TRUE(claim.value().set_aside.empty());
    EXPECT_FALSE(fs::exists(dir));
    fs::create_directories(dir);
    ASSERT_TRUE(write_partition_metadata(file_ops::posix(), dir, id));
    auto read = read_partition_metadata(dir);
    ASSERT_TRUE(read);
    EXPECT_EQ(read.value(), id);
}

TEST(partition_metadata, a_directory_of_the_same_topic_is_kept) {
    test::temp_dir root;
    const auto dir = partition_dir_with(root.path(), "records");
    const auto id = protocol::uuid::random();
    ASSERT_TRUE(write_partition_metadata(file_ops::posix(), dir, id));
    auto claim = claim_partition_dir(file_ops::posix(), dir, id);
    ASSERT_TRUE(claim);
    EXPECT_TRUE(claim.value().set_aside.empty());
    EXPECT_FALSE(claim.value().record_after_open);
    EXPECT_EQ(read_text(dir / "00000000000000000000.log"), "records");
}

TEST(partition_metadata, a_directory_without_the_file_is_taken_and_recorded) {
    // Made by a version before partition.metadata, or a crash between mkdir and the file.
    test::temp_dir root;
    const auto dir = partition_dir_with(root.path(), "records");
    const auto id = protocol::uuid::random();
    auto claim = claim_partition_dir(file_ops::posix(), dir, id);
    ASSERT_TRUE(claim);
    EXPECT_TRUE(claim.value().set_aside.empty());
    EXPECT_EQ(read_text(dir / "00000000000000000000.log"), "records");
    EXPECT_EQ(read_text(dir / "partition.metadata"), format_partition_metadata(id));
}

TEST(partition_metadata, another_topics_directory_is_set_aside_as_stray) {
    test::temp_dir root;
    const auto dir = partition_dir_with(root.path(), "old records");
    const auto old_id = protocol::uuid::random();
    ASSERT_TRUE(write_partition_metadata(file_ops::posix(), dir, old_id));
    const auto new_id = protocol::uuid::random();
    auto claim = claim_partition_dir(file_ops::posix(), dir, new_id);
    ASSERT_TRUE(claim);
    EXPECT_FALSE(fs::exists(dir));
    EXPECT_TRUE(claim.value().record_after_open);
    ASSERT_TRUE(claim.value().previous_id);
    EXPECT_EQ(*claim.value().previous_id, old_id);
    const auto aside = claim.value().set_aside;
    EXPECT_EQ(aside.parent_path(), root.path());
    const auto name = aside.filename().string();
    EXPECT_TRUE(name.starts_with("t-0.")) << name;
    EXPECT_TRUE(name.ends_with("-stray")) << name;
    // Kept whole, for an operator to inspect: nothing deleted.
    EXPECT_EQ(read_text(aside / "00000000000000000000.log"), "old records");
    EXPECT_EQ(read_text(aside / "partition.metadata"), format_partition_metadata(old_id));
    // Not a partition directory to anything that lists them.
    EXPECT_FALSE(layout::parse_partition_dir(name));
}

TEST(partition_metadata, an_unreadable_file_is_rewritten_and_the_records_kept) {
    test::temp_dir root;
    const auto dir = partition_dir_with(root.path(), "records");
    write_text(dir / "partition.metadata", "garbage");
    const auto id = protocol::uuid::random();
    auto claim = claim_partition_dir(file_ops::posix(), dir, id);
    ASSERT_TRUE(claim);
    EXPECT_TRUE(claim.value().unreadable);
    EXPECT_TRUE(claim.value().set_aside.empty());
    EXPECT_EQ(read_text(dir / "00000000000000000000.log"), "records");
    EXPECT_EQ(read_text(dir / "partition.metadata"), format_partition_metadata(id));
}

TEST(partition_metadata, no_topic_id_checks_nothing) {
    test::temp_dir root;
    const auto dir = root.path() / "t-0";
    fs::create_directories(dir);
    ASSERT_TRUE(write_partition_metadata(file_ops::posix(), dir, protocol::uuid::random()));
    auto claim = claim_partition_dir(file_ops::posix(), dir, protocol::uuid{});
    ASSERT_TRUE(claim);
    EXPECT_TRUE(fs::exists(dir));
    EXPECT_FALSE(claim.value().record_after_open);
}

}  // namespace
}  // namespace spool::broker::storage
