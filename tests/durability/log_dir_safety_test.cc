// What keeps one broker's log dir safe across crashes and careless requests, against the real
// spool-broker process:
//   - Kafka's .lock: a second broker on the same log.dirs refuses to start and names the dir;
//   - CreateTopics limits (per request, per broker, open files) checked before anything is
//     created, a create that fails half-way rolled back, and the broker always restarts;
//   - RLIMIT_NOFILE raised to the hard limit at start and logged;
//   - checkpoints written while serving: a DeleteRecords log start survives kill -9, and the
//     recovery point moves so a start after kill -9 rescans only recent data;
//   - the log cleaner runs on log.cleaner.backoff.ms, not on the retention check, and compacts
//     a tail below the dirty ratio once it is older than max.compaction.lag.ms;
//   - a restarted broker holds one descriptor per closed segment (indexes mapped lazily).

#include "protocol/records/batch_builder.h"
#include "tests/durability/admin_requests.h"
#include "tests/durability/rdkafka_client.h"
#include "tests/integration/broker_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <regex>
#include <thread>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr int16_t invalid_partitions = 37;
constexpr int16_t policy_violation = 44;
constexpr int16_t kafka_storage_error = 56;
constexpr int16_t unknown_topic = 3;

size_t partition_dirs(const fs::path& data, const std::string& topic) {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(data, ec)) {
        auto name = e.path().filename().string();
        if (name.rfind(topic + "-", 0) == 0) {
            ++n;
        }
    }
    return n;
}

// The partition directories of topic once the broker's background removal of a deleted or
// rolled-back topic had up to 10 s to finish (it answers before the removal is done, as Kafka's
// asynchronous delete does).
size_t partition_dirs_after_removal(const fs::path& data, const std::string& topic) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (partition_dirs(data, topic) != 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return partition_dirs(data, topic);
}

// Produces `count` records with values "v<i>" (keys "k<i % keys>" when keys > 0), acked.
void produce_acked(const std::string& bootstrap, const std::string& topic, int count, int keys,
                   int value_bytes = 16) {
    auto conf = std::unique_ptr<RdKafka::Conf>(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    conf->set("bootstrap.servers", bootstrap, err);
    conf->set("acks", "all", err);
    conf->set("linger.ms", "5", err);
    // Below the tests' small segment.bytes: a bigger batch is RECORD_LIST_TOO_LARGE.
    conf->set("batch.size", "8000", err);
    std::unique_ptr<RdKafka::Producer> p(RdKafka::Producer::create(conf.get(), err));
    ASSERT_TRUE(p) << err;
    std::string pad(static_cast<size_t>(value_bytes), 'x');
    for (int i = 0; i < count; ++i) {
        std::string value = "v" + std::to_string(i) + pad;
        std::string key = keys > 0 ? "k" + std::to_string(i % keys) : "";
        for (;;) {
            auto e =
                p->produce(topic, 0, RdKafka::Producer::RK_MSG_COPY, value.data(), value.size(),
                           keys > 0 ? key.data() : nullptr, keys > 0 ? key.size() : 0, 0, nullptr);
            if (e == RdKafka::ERR_NO_ERROR) {
                break;
            }
            p->poll(10);
        }
        p->poll(0);
    }
    ASSERT_EQ(p->flush(60000), RdKafka::ERR_NO_ERROR);
}

TEST(log_dir_safety, test_second_broker_on_the_same_log_dir_refuses_to_start) {
    broker_process first;
    ASSERT_TRUE(first.start()) << first.log_text();
    broker_process second(first.data_dir());
    int status = second.run_to_exit(20s);
    EXPECT_EQ(status, 1);
    auto expected =
        "Failed to acquire lock on file .lock in " + (first.data_dir() / "data").string();
    EXPECT_NE(second.log_text().find(expected), std::string::npos) << second.log_text();
    // The first one never noticed and stops cleanly; then the second may have the dir.
    {
        kafka_client c(first.port());
        EXPECT_EQ(create_topic(c, "still-serving", 1).error_code, 0);
    }
    auto stopped = first.stop();
    EXPECT_TRUE(stopped.exited && stopped.status == 0) << first.log_text();
    EXPECT_TRUE(second.start()) << second.log_text();
    second.stop();
}

TEST(log_dir_safety, test_open_files_limit_is_raised_to_the_hard_limit_and_logged) {
    broker_process broker;
    broker.set_open_files_limit(1024, 4096);
    ASSERT_TRUE(broker.start()) << broker.log_text();
    EXPECT_NE(broker.log_text().find("open files limit (RLIMIT_NOFILE): 4096 (was 1024, hard "
                                     "limit 4096)"),
              std::string::npos)
        << broker.log_text();
    broker.stop();
}

TEST(log_dir_safety, test_create_topics_over_kafkas_request_limit_is_a_policy_violation) {
    broker_process broker;
    ASSERT_TRUE(broker.start()) << broker.log_text();
    kafka_client c(broker.port());
    auto rows = create_topics(c, {{"huge-a", 6000}, {"huge-b", 4001}});
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& r : rows) {
        EXPECT_EQ(r.error_code, policy_violation);
        EXPECT_EQ(r.message, "Excessively large number of partitions per request.");
    }
    EXPECT_EQ(topic_metadata_error(c, "huge-a"), unknown_topic);
    EXPECT_EQ(partition_dirs(broker.data_dir() / "data", "huge-"), 0u);
}

TEST(log_dir_safety, test_partitions_per_broker_limit_counts_internal_topics) {
    broker_process broker;
    broker.add_override("spool.max.partitions.per.broker=60");  // 50 are __consumer_offsets
    ASSERT_TRUE(broker.start()) << broker.log_text();
    kafka_client c(broker.port());
    EXPECT_EQ(create_topic(c, "fits", 10).error_code, 0);
    auto r = create_topic(c, "one-too-many", 1);
    EXPECT_EQ(r.error_code, invalid_partitions);
    EXPECT_NE(r.message.find("spool.max.partitions.per.broker (60)"), std::string::npos)
        << r.message;
    EXPECT_EQ(topic_metadata_error(c, "one-too-many"), unknown_topic);
}

TEST(log_dir_safety, test_create_topics_past_the_open_files_limit_is_refused_before_creating) {
    broker_process broker;
    broker.set_open_files_limit(1024, 1024);
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        auto r = create_topic(c, "many", 1000);
        EXPECT_EQ(r.error_code, invalid_partitions);
        EXPECT_NE(r.message.find("file descriptors"), std::string::npos) << r.message;
        EXPECT_EQ(topic_metadata_error(c, "many"), unknown_topic);
        EXPECT_EQ(create_topic(c, "small", 20).error_code, 0);
    }
    EXPECT_EQ(partition_dirs(broker.data_dir() / "data", "many"), 0u);
    ASSERT_TRUE(broker.stop().exited);
    ASSERT_TRUE(broker.start()) << broker.log_text();
    broker.stop();
}

// The original defect: the logs ran out of descriptors half-way, the topic stayed in the
// metadata and the next start failed. With the estimate switched off the create really runs
// into EMFILE; it must be undone completely and the broker must restart.
TEST(log_dir_safety, test_create_that_runs_out_of_descriptors_is_rolled_back_and_restart_works) {
    broker_process broker;
    broker.set_open_files_limit(1024, 1024);
    broker.add_override("spool.topic.fds.per.partition=0");
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        auto r = create_topic(c, "exhausting", 600);  // ~1800 descriptors
        EXPECT_EQ(r.error_code, kafka_storage_error) << r.message;
        EXPECT_NE(r.message.find("Too many open files"), std::string::npos) << r.message;
        EXPECT_EQ(topic_metadata_error(c, "exhausting"), unknown_topic);
        // The descriptors came back: a normal create works at once.
        EXPECT_EQ(create_topic(c, "after", 5).error_code, 0);
    }
    EXPECT_EQ(partition_dirs_after_removal(broker.data_dir() / "data", "exhausting"), 0u);
    broker.kill_hard();
    ASSERT_TRUE(broker.start()) << "restart after the failed create:\n" << broker.log_text();
    kafka_client c(broker.port());
    EXPECT_EQ(topic_metadata_error(c, "after"), 0);
    EXPECT_EQ(topic_metadata_error(c, "exhausting"), unknown_topic);
    broker.stop();
}

TEST(log_dir_safety, test_delete_records_log_start_survives_kill_9) {
    broker_process broker;
    // No periodic write could have saved it: only the DeleteRecords one.
    broker.add_override("log.flush.start.offset.checkpoint.interval.ms=0");
    broker.add_override("log.flush.offset.checkpoint.interval.ms=0");
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        ASSERT_EQ(create_topic(c, "trimmed", 1, {{"segment.bytes", "16384"}}).error_code, 0);
    }
    produce_acked(broker.bootstrap(), "trimmed", 7000, 0);
    ASSERT_EQ(watermarks(broker.bootstrap(), "trimmed"), std::make_pair(int64_t(0), int64_t(7000)));
    {
        kafka_client c(broker.port());
        ASSERT_EQ(delete_records(c, "trimmed", 5000), 5000) << broker.log_text();
    }
    broker.kill_hard();
    ASSERT_TRUE(broker.start()) << broker.log_text();
    auto [low, high] = watermarks(broker.bootstrap(), "trimmed");
    EXPECT_EQ(low, 5000);
    EXPECT_EQ(high, 7000);
    std::string error;
    auto records = read_partition(broker.bootstrap(), "trimmed", &error);
    EXPECT_EQ(error, "");
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.front().offset, 5000);
    EXPECT_EQ(records.size(), 2000u);
    broker.stop();
}

// Recovery after kill -9 with and without the periodic recovery-point checkpoint: the same data,
// the same kill. With it, the checkpoint holds a recovery point near the end of the log and the
// start rescans only the active segment.
struct recovery_run {
    long start_ms = 0;
    int64_t checkpointed_recovery_point = -1;
    std::string report;  // the broker's "bulk-0: recovered after unclean shutdown: ..." line
};

int64_t recovery_point_in_checkpoint(const fs::path& data, const std::string& tp) {
    std::ifstream in(data / "recovery-point-offset-checkpoint");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(tp + " ", 0) == 0) {
            return std::stoll(line.substr(line.rfind(' ') + 1));
        }
    }
    return -1;
}

recovery_run kill_and_time_recovery(const std::string& interval_ms) {
    recovery_run out;
    broker_process broker;
    broker.add_override("log.flush.offset.checkpoint.interval.ms=" + interval_ms);
    EXPECT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        EXPECT_EQ(create_topic(c, "bulk", 1, {{"segment.bytes", "8388608"}}).error_code, 0);
    }
    produce_acked(broker.bootstrap(), "bulk", 200000, 0, 1000);  // ~200 MB
    std::this_thread::sleep_for(3s);  // a few checkpoint periods, rolls flushed
    out.checkpointed_recovery_point =
        recovery_point_in_checkpoint(broker.data_dir() / "data", "bulk 0");
    broker.kill_hard();
    auto t0 = clock_type::now();
    EXPECT_TRUE(broker.start()) << broker.log_text();
    out.start_ms = static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count());
    EXPECT_EQ(watermarks(broker.bootstrap(), "bulk").second, 200000);
    auto text = broker.log_text();
    auto at = text.rfind("bulk-0: recovered after unclean shutdown");
    if (at != std::string::npos) {
        out.report = text.substr(at, text.find('\n', at) - at);
    }
    broker.stop();
    return out;
}

TEST(log_dir_safety, test_recovery_point_checkpoint_is_written_while_serving) {
    auto without = kill_and_time_recovery("0");
    auto with = kill_and_time_recovery("500");
    std::printf(
        "[recovery after kill -9, 200k x 1 KB records, 8 MiB segments] without periodic "
        "checkpoint: start %ld ms (checkpointed recovery point %lld); with 500 ms "
        "checkpoints: start %ld ms (checkpointed recovery point %lld)\n",
        without.start_ms, static_cast<long long>(without.checkpointed_recovery_point),
        with.start_ms, static_cast<long long>(with.checkpointed_recovery_point));
    std::printf("  without: %s\n  with:    %s\n", without.report.c_str(), with.report.c_str());
    EXPECT_EQ(without.checkpointed_recovery_point, -1);
    // Everything up to the last roll is flushed and checkpointed: at most one 8 MiB segment
    // (~8,000 records) behind the end.
    EXPECT_GE(with.checkpointed_recovery_point, 200000 - 9000);
}

TEST(log_dir_safety, test_log_cleaner_runs_on_its_backoff_not_on_the_retention_check) {
    broker_process broker;
    broker.add_override("log.cleaner.backoff.ms=500");
    broker.add_override("log.retention.check.interval.ms=3600000");
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        ASSERT_EQ(create_topic(c, "compacted", 1,
                               {{"cleanup.policy", "compact"},
                                {"segment.bytes", "16384"},
                                {"min.cleanable.dirty.ratio", "0.01"}})
                      .error_code,
                  0);
    }
    produce_acked(broker.bootstrap(), "compacted", 5000, 10);
    ASSERT_EQ(watermarks(broker.bootstrap(), "compacted").second, 5000);
    std::vector<stored_record> records;
    auto deadline = clock_type::now() + 20s;
    while (clock_type::now() < deadline) {
        std::string error;
        records = read_partition(broker.bootstrap(), "compacted", &error);
        if (error.empty() && records.size() < 500) {
            break;
        }
        std::this_thread::sleep_for(500ms);
    }
    // 10 keys; the active segment is never cleaned, so a few hundred stay.
    EXPECT_LT(records.size(), 500u);
    broker.stop();
}

// max.compaction.lag.ms (KIP-354) end to end: with min.cleanable.dirty.ratio at 0.99, only an
// all-dirty log is cleaned for its ratio, so a compacted topic's later segments stay as they are;
// with max.compaction.lag.ms they are compacted once their first record waited the lag, and the
// active segment rolls at the lag too. The control topic, the same without the lag, keeps every
// record.
TEST(log_dir_safety, test_max_compaction_lag_compacts_what_the_dirty_ratio_leaves) {
    broker_process broker;
    broker.add_override("log.cleaner.backoff.ms=300");
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        for (const std::string topic : {"lagged", "control"}) {
            std::map<std::string, std::string> configs = {{"cleanup.policy", "compact"},
                                                           {"segment.bytes", "16384"},
                                                           {"min.cleanable.dirty.ratio", "0.99"}};
            if (topic == "lagged") {
                configs["max.compaction.lag.ms"] = "2000";
            }
            ASSERT_EQ(create_topic(c, topic, 1, configs).error_code, 0);
        }
    }
    // Passes that remove records log "<topic>-0: compacted ...".
    auto compactions = [&](const std::string& topic) {
        std::string text = broker.log_text();
        size_t n = 0;
        for (size_t at = text.find(topic + "-0: compacted"); at != std::string::npos;
             at = text.find(topic + "-0: compacted", at + 1)) {
            ++n;
        }
        return n;
    };
    // Keys k0..k2999, then 20 newer values of k0 and, past the lag, one more: it rolls the
    // lagged topic's active segment, closing the 20 into a dirty segment.
    for (const std::string topic : {"lagged", "control"}) {
        produce_acked(broker.bootstrap(), topic, 3000, 3000);
        produce_acked(broker.bootstrap(), topic, 20, 1);
    }
    std::this_thread::sleep_for(2500ms);
    for (const std::string topic : {"lagged", "control"}) {
        produce_acked(broker.bootstrap(), topic, 1, 1);
    }
    // k0's first value and 19 of the 20 go: 3021 produced, 3001 left.
    std::string error;
    std::vector<stored_record> lagged;
    auto deadline = clock_type::now() + 30s;
    do {
        std::this_thread::sleep_for(300ms);
        lagged = read_partition(broker.bootstrap(), "lagged", &error);
    } while ((!error.empty() || lagged.size() > 3001) && clock_type::now() < deadline);
    ASSERT_EQ(error, "");
    EXPECT_EQ(lagged.size(), 3001u) << broker.log_text();
    EXPECT_GE(compactions("lagged"), 1u);
    std::this_thread::sleep_for(1000ms);  // several more cleaner turns for the control topic
    EXPECT_EQ(compactions("control"), 0u);
    auto control = read_partition(broker.bootstrap(), "control", &error);
    ASSERT_EQ(error, "");
    EXPECT_EQ(control.size(), 3021u);
    broker.stop();
}

// Descriptors after a restart: a closed segment keeps only its .log open (its indexes are mapped
// on first use and their descriptors closed at once), so ~200 closed segments cost ~200
// descriptors, not ~600, and reading the whole partition adds none.
size_t process_fds(pid_t pid) {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        (void)e;
        ++n;
    }
    return n;
}

size_t segment_files(const fs::path& partition_dir) {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(partition_dir)) {
        n += e.path().extension() == ".log";
    }
    return n;
}

long timed_start_ms(broker_process& broker) {
    auto t0 = clock_type::now();
    EXPECT_TRUE(broker.start()) << broker.log_text();
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count());
}

TEST(log_dir_safety, test_closed_segments_hold_one_descriptor_each_after_a_restart) {
    broker_process broker;
    ASSERT_TRUE(broker.start()) << broker.log_text();
    {
        kafka_client c(broker.port());
        ASSERT_EQ(create_topic(c, "segments", 1, {{"segment.bytes", "16384"}}).error_code, 0);
    }
    ASSERT_TRUE(broker.stop().exited);
    long empty_start_ms = timed_start_ms(broker);
    size_t baseline = process_fds(broker.pid());

    produce_acked(broker.bootstrap(), "segments", 4000, 0, 1000);  // ~4 MB, ~250 segments
    ASSERT_TRUE(broker.stop().exited);
    auto partition_dir = broker.data_dir() / "data" / "segments-0";
    size_t closed = segment_files(partition_dir) - 1;
    ASSERT_GE(closed, 200u);
    long full_start_ms = timed_start_ms(broker);
    size_t restarted = process_fds(broker.pid());
    std::printf(
        "[descriptors after a restart] %zu closed segments: %zu descriptors, %zu with one "
        "segment (%+ld per closed segment); start %ld ms (%ld ms with one segment)\n",
        closed, restarted, baseline,
        std::lround(double(long(restarted) - long(baseline)) / double(closed)), full_start_ms,
        empty_start_ms);
    // A few descriptors come and go on their own (the HTTP endpoint, a flusher's file, the log
    // writer), so the baseline is exact only to within a handful: a fresh-clone run counted one
    // fewer after the restart than the baseline plus one per closed segment.
    EXPECT_GE(restarted + 4, baseline + closed);
    EXPECT_LE(restarted, baseline + closed + 8);

    // Reading everything maps every closed segment's index; the descriptors come back to the same
    // figure once the consumer has gone.
    std::string error;
    auto records = read_partition(broker.bootstrap(), "segments", &error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(records.size(), 4000u);
    auto deadline = clock_type::now() + 10s;
    size_t after_read = process_fds(broker.pid());
    while (after_read > restarted && clock_type::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        after_read = process_fds(broker.pid());
    }
    EXPECT_LE(after_read, restarted + 2) << "descriptors after reading every segment";
    broker.stop();
}

}  // namespace
}  // namespace spool::tests
