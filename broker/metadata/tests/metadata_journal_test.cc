#include "broker/metadata/embedded/metadata_journal.h"

#include "broker/metadata/embedded/metadata_journal_file.h"
#include "protocol/records/crc32c.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace spool::broker::metadata::journal {
namespace {

namespace fs = std::filesystem;

topic_metadata topic(const std::string& name, int32_t partitions) {
    topic_metadata t;
    t.name = name;
    t.id = protocol::uuid::random();
    t.configs = {{"retention.ms", "1000"}};
    for (int32_t p = 0; p < partitions; ++p) {
        partition_state ps;
        ps.partition = p;
        ps.leader = 0;
        ps.replicas = {0};
        ps.isr = {0};
        t.partitions.push_back(std::move(ps));
    }
    return t;
}

void add(cluster_state& s, topic_metadata t) {
    s.topic_names[t.id] = t.name;
    s.topics.insert_or_assign(t.name, std::move(t));
}

void expect_same_persisted_state(const cluster_state& a, const cluster_state& b) {
    EXPECT_EQ(a.topics, b.topics);
    EXPECT_EQ(a.topic_names, b.topic_names);
    EXPECT_EQ(a.broker_configs, b.broker_configs);
    EXPECT_EQ(a.user_scram, b.user_scram);
    EXPECT_EQ(a.group_configs, b.group_configs);
    EXPECT_EQ(a.next_producer_id, b.next_producer_id);
}

// r, encoded and decoded again, is r, and replayed onto `before` gives `after`.
void expect_round_trip(const cluster_state& before, const cluster_state& after,
                       const record& r) {
    auto line = encode(r);
    auto decoded = decode(std::string_view(line).substr(0, line.size() - 1));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded.value(), r);
    cluster_state replayed = before;
    ASSERT_TRUE(apply(replayed, decoded.value()));
    expect_same_persisted_state(replayed, after);
}

TEST(metadata_journal, test_group_configs_are_journalled_per_group) {
    cluster_state before;
    before.group_configs["g1"] = {{"share.auto.offset.reset", "earliest"}};
    before.group_configs["gone"] = {{"consumer.session.timeout.ms", "50000"}};
    cluster_state after = before;
    after.group_configs.erase("gone");
    after.group_configs["g1"]["share.record.lock.duration.ms"] = "20000";
    after.group_configs["a/b%c"] = {{"share.delivery.count.limit", "3"}};
    auto r = diff(before, after, 7);
    EXPECT_EQ(r.changes.size(), 3u);  // a/b%c, g1, gone
    EXPECT_NE(encode(r).find(R"("group_configs":"g1")"), std::string::npos) << encode(r);
    expect_round_trip(before, after, r);
}

TEST(metadata_journal, test_scram_credentials_are_journalled_per_user) {
    cluster_state before;
    before.user_scram["alice"] = {{"SCRAM-SHA-256", "salt=YQ==,stored_key=Yg==,server_key=Yw==,"
                                                    "iterations=4096"}};
    before.user_scram["gone"] = {{"SCRAM-SHA-512", "salt=YQ==,stored_key=Yg==,server_key=Yw==,"
                                                   "iterations=8192"}};
    cluster_state after = before;
    after.user_scram.erase("gone");
    after.user_scram["alice"]["SCRAM-SHA-512"] = "salt=ZA==,stored_key=ZQ==,server_key=Zg==,"
                                                 "iterations=4096";
    after.user_scram["b/o=b"] = {{"SCRAM-SHA-256", "salt=YQ==,stored_key=Yg==,server_key=Yw==,"
                                                   "iterations=4096"}};
    auto r = diff(before, after, 3);
    EXPECT_EQ(r.changes.size(), 3u);  // alice, b/o=b, gone
    expect_round_trip(before, after, r);
}

TEST(metadata_journal, test_diff_then_apply_turns_before_into_after) {
    cluster_state before;
    add(before, topic("kept", 2));
    add(before, topic("changed", 3));
    add(before, topic("deleted", 1));
    add(before, topic("recreated", 1));
    before.broker_configs[""] = {{"log.retention.ms", "5"}};
    before.broker_configs["0"] = {{"log.cleaner.threads", "2"}};
    before.next_producer_id = 1000;

    cluster_state after = before;
    auto& changed = after.topics["changed"];
    changed.partitions[1].leader_epoch = 4;
    changed.partitions[1].partition_epoch = 9;
    changed.partitions[2].isr = {};
    changed.partitions.push_back(changed.partitions[0]);
    changed.partitions.back().partition = 3;
    changed.configs["cleanup.policy"] = "compact";
    after.topic_names.erase(after.topics["deleted"].id);
    after.topics.erase("deleted");
    after.topic_names.erase(after.topics["recreated"].id);
    auto namesake = topic("recreated", 5);
    add(after, namesake);
    add(after, topic("created", 4));
    after.broker_configs.erase("0");
    after.broker_configs[""] = {{"log.retention.ms", "6"}};
    after.broker_configs["3"] = {{"message.max.bytes", "100"}};
    after.next_producer_id = 2000;

    auto r = diff(before, after, 7);
    EXPECT_EQ(r.seq, 7);
    // changed, created, recreated; deleted; "", "0", "3"; the producer id.
    EXPECT_EQ(r.changes.size(), 8u);
    EXPECT_TRUE(std::holds_alternative<topic_delete>(r.changes.front())) << "deletions first";

    auto decoded = decode(std::string_view(encode(r)).substr(0, encode(r).size() - 1));
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded.value(), r);

    cluster_state replayed = before;
    ASSERT_TRUE(apply(replayed, decoded.value()));
    expect_same_persisted_state(replayed, after);
}

TEST(metadata_journal, test_equal_states_have_no_changes) {
    cluster_state s;
    add(s, topic("t", 3));
    s.broker_configs[""] = {{"a", "b"}};
    cluster_state copy = s;
    copy.version = 99;  // not persisted
    EXPECT_TRUE(diff(s, copy, 1).changes.empty());
}

TEST(metadata_journal, test_a_line_is_one_line_with_its_checksum) {
    cluster_state before;
    cluster_state after;
    add(after, topic("t", 2));
    auto line = encode(diff(before, after, 1));
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    EXPECT_EQ(line[8], ' ');
    EXPECT_EQ(line.find_first_not_of("0123456789abcdef"), 8u);
}

TEST(metadata_journal, test_decode_refuses_anything_encode_did_not_write) {
    cluster_state before;
    cluster_state after;
    add(after, topic("t", 2));
    after.next_producer_id = 5;
    std::string good = encode(diff(before, after, 3));
    good.pop_back();
    ASSERT_TRUE(decode(good));

    auto refused = [](std::string_view line) {
        auto r = decode(line);
        return !r && r.error() == std::make_error_code(std::errc::bad_message);
    };
    // Damage anywhere: the checksum no longer matches.
    for (size_t at : {size_t{0}, size_t{9}, good.size() / 2, good.size() - 1}) {
        std::string bad = good;
        bad[at] = bad[at] == 'x' ? 'y' : 'x';
        EXPECT_TRUE(refused(bad)) << "byte " << at;
    }
    EXPECT_TRUE(refused(""));
    EXPECT_TRUE(refused(good.substr(0, good.size() - 1)));  // cut short
    EXPECT_TRUE(refused(good.substr(0, 8) + good.substr(9)));
    EXPECT_TRUE(refused("zzzzzzzz " + good.substr(9)));
}

// Bodies that are valid JSON with a matching checksum but not a record encode writes.
TEST(metadata_journal, test_decode_refuses_wrong_shapes_with_good_checksums) {
    std::vector<std::string> bodies = {
        R"({"seq":0,"changes":[]})",                                         // seq starts at 1
        R"({"seq":1.5,"changes":[]})",                                       // a float
        R"({"seq":1,"changes":{}})",                                         // not an array
        R"({"seq":1,"changes":[{"next_producer_id":-1}]})",                  // negative
        R"({"seq":1,"changes":[{"next_producer_id":1e3}]})",                 // a float
        R"({"seq":1,"changes":[{"delete_topic":"a b"}]})",                   // not a topic name
        R"({"seq":1,"changes":[{"broker_configs":"","configs":{"a":1}}]})",  // not a string
        R"({"seq":1,"changes":[{"what":1}]})",                               // unknown change
        R"({"seq":18446744073709551616,"changes":[]})",                      // out of range
        R"({"seq":1,"changes":[{"topic":"t","record":{"id":"AAAAAAAAAAAAAAAAAAAAAA",)"
        R"("partitions":1,"configs":{}},"partitions":[]}]})",  // 1 partition claimed, 0 given
        R"({"seq":1,"changes":[{"topic":"t","record":{"id":"AAAAAAAAAAAAAAAAAAAAAQ",)"
        R"("partitions":1,"configs":{}},"partitions":[{"leader":0,"leader_epoch":0,)"
        R"("partition_epoch":0,"replicas":[0,0],"isr":[0]}]}]})",  // a replica twice
    };
    for (const auto& body : bodies) {
        char crc[10];
        std::snprintf(crc, sizeof crc, "%08x ",
                      protocol::records::crc32c(
                          {reinterpret_cast<const uint8_t*>(body.data()), body.size()}));
        auto r = decode(std::string(crc, 9) + body);
        EXPECT_FALSE(r) << body;
    }
}

TEST(metadata_journal, test_bytes_that_are_not_utf8_are_written_as_replacement_characters) {
    cluster_state before;
    cluster_state after;
    auto t = topic("t", 1);
    t.configs["retention.ms"] = std::string("1\xff\xfe", 3);
    add(after, t);
    std::string line;
    ASSERT_NO_THROW(line = encode(diff(before, after, 1)));
    line.pop_back();
    auto r = decode(line);
    ASSERT_TRUE(r);
    EXPECT_EQ(std::get<topic_put>(r.value().changes[0]).topic.configs.at("retention.ms"),
              "1\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(metadata_journal, test_apply_refuses_a_record_that_does_not_fit_the_state) {
    cluster_state s;
    auto t = topic("t", 1);
    add(s, t);
    EXPECT_FALSE(apply(s, record{1, {topic_delete{"absent"}}}));
    auto other = topic("other", 1);
    other.id = t.id;  // the id of another topic
    EXPECT_FALSE(apply(s, record{1, {topic_put{other}}}));
}

// ---- the file ----

class journal_file_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir = fs::path(::testing::TempDir()) /
              ("journal_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }

    static std::string line_for(int64_t seq, const std::string& name) {
        cluster_state before;
        cluster_state after;
        add(after, topic(name, 1));
        return encode(diff(before, after, seq));
    }

    fs::path dir;
};

TEST_F(journal_file_test, test_files_are_named_and_listed_by_their_first_seq) {
    ASSERT_TRUE(journal_file::create(file_for(dir, 12)));
    ASSERT_TRUE(journal_file::create(file_for(dir, 3)));
    std::ofstream(dir / "spool-metadata-x.log") << "not a journal";
    std::ofstream(dir / "spool-metadata.yaml") << "format: 1";
    EXPECT_EQ(file_for(dir, 3).filename(), "spool-metadata-00000000000000000003.log");
    auto files = list_files(dir);
    ASSERT_TRUE(files);
    ASSERT_EQ(files.value().size(), 2u);
    EXPECT_EQ(files.value()[0].first_seq, 3);
    EXPECT_EQ(files.value()[1].first_seq, 12);
    EXPECT_FALSE(journal_file::create(file_for(dir, 3))) << "an existing file is never reused";
}

TEST_F(journal_file_test, test_appended_lines_read_back_in_order) {
    auto created = journal_file::create(file_for(dir, 1));
    ASSERT_TRUE(created);
    auto f = std::move(created).value();
    for (int64_t seq = 1; seq <= 50; ++seq) {
        ASSERT_TRUE(f.append(line_for(seq, "t" + std::to_string(seq))));
    }
    EXPECT_EQ(f.size(), fs::file_size(f.path()));
    auto contents = read_file(f.path());
    ASSERT_TRUE(contents);
    ASSERT_EQ(contents.value().records.size(), 50u);
    EXPECT_EQ(contents.value().records.back().seq, 50);
    EXPECT_EQ(contents.value().bad_bytes, 0u);
    EXPECT_EQ(contents.value().valid_bytes, f.size());
}

TEST_F(journal_file_test, test_a_failed_append_leaves_no_partial_line) {
    auto created = journal_file::create(file_for(dir, 1));
    ASSERT_TRUE(created);
    auto f = std::move(created).value();
    ASSERT_TRUE(f.append(line_for(1, "first")));
    // The file size limit stops the next write part way (EFBIG; SIGXFSZ ignored), as a full
    // disk would.
    auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    rlimit tight = old_limit;
    tight.rlim_cur = f.size() + 10;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tight), 0);
    auto failed = f.append(line_for(2, "second"));
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_FALSE(failed);
    ASSERT_TRUE(f.append(line_for(2, "third")));

    auto contents = read_file(f.path());
    ASSERT_TRUE(contents);
    ASSERT_EQ(contents.value().records.size(), 2u);
    EXPECT_EQ(contents.value().bad_bytes, 0u);
    EXPECT_EQ(std::get<topic_put>(contents.value().records[1].changes[0]).topic.name, "third");
}

TEST_F(journal_file_test, test_a_torn_last_line_is_told_from_damage_in_the_middle) {
    const auto path = file_for(dir, 1);
    const std::string one = line_for(1, "a");
    const std::string two = line_for(2, "b");
    {
        std::ofstream out(path, std::ios::binary);
        out << one << two.substr(0, two.size() / 2);  // the second append cut short
    }
    auto torn = read_file(path);
    ASSERT_TRUE(torn);
    EXPECT_EQ(torn.value().records.size(), 1u);
    EXPECT_EQ(torn.value().valid_bytes, one.size());
    EXPECT_EQ(torn.value().bad_bytes, two.size() / 2);
    EXPECT_FALSE(torn.value().damaged_in_the_middle);

    std::string damaged = one;
    damaged[20] ^= 1;
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << damaged << two;
    }
    auto middle = read_file(path);
    ASSERT_TRUE(middle);
    EXPECT_TRUE(middle.value().records.empty());
    EXPECT_TRUE(middle.value().damaged_in_the_middle);
}

}  // namespace
}  // namespace spool::broker::metadata::journal
