// A failing disk on a partition leader (issue 31), in a cluster of three real brokers on a real
// etcd. Broker 0's log dir is a FUSE file system (tests/durability/unsynced_fs) whose power cut
// makes every later read, write and fsync answer EIO while broker 0 keeps running: a disk that
// died under a live process, not a power loss.
//
//   disk-led    RF 3, min.insync.replicas=2, replicas [0,1,2]: led by broker 0
//   disk-other  RF 3, min.insync.replicas=2, replicas [1,2,0]: led by broker 1, 0 a follower
//
// An idempotent acks=all librdkafka producer writes to each. Broker 0's disk fails; then:
//   - broker 0 exits with status 4 (log dir failed: broker/app/exit_status.h), having ended its
//     etcd session (storage/log_dir_failure.h);
//   - disk-led has a new leader within broker.session.timeout.ms + 1 s of the failure, as seen
//     in broker 1's Metadata (measured and printed);
//   - disk-other keeps its leader and goes on acknowledging acks=all writes;
//   - every record either producer had acknowledged is in its topic's log, at the offset it was
//     acknowledged at (read back from the surviving brokers).
//
// The mount is made here rather than through the cluster harness: its FUSE daemon needs only
// the broker's log.dirs path (data_dir()/data), mounted before the cluster starts.

#include "protocol/messages/create_topics.h"
#include "tests/durability/unsynced_mount.h"
#include "tests/integration/child_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"
#include "tests/replication/replication_harness.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

namespace spool::tests::replication {
namespace {

// The timing bounds (leadership moved within the session timeout + 1 s, the other topic serving
// again within it) gate only the `timing` label's run of this test (SPOOL_ASSERT_TIMING_BOUNDS=1),
// which the full run leaves out: a noisy 2-core CI machine must not fail on a late millisecond.
// The full run prints the figures and asserts everything else (timing_bounds_asserted()).

using clock_type = std::chrono::steady_clock;

constexpr int log_dir_failed_status = 4;  // broker/app/exit_status.h
constexpr size_t failing = 0;             // the broker whose disk fails
constexpr size_t observer = 1;

long ms_between(clock_type::time_point a, clock_type::time_point b) {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
}

// CreateTopics (v5) with one partition on `replicas` (the first is the preferred leader).
std::string create_assigned_topic(uint16_t port, const std::string& name,
                                  const std::vector<int32_t>& replicas) {
    try {
        kafka_client c(port);
        c.set_read_timeout(40s);
        protocol::create_topics_request req;
        req.timeout_ms = 30000;
        auto& t = req.topics.emplace_back();
        t.name = name;
        t.num_partitions = -1;
        t.replication_factor = -1;
        auto& a = t.assignments.emplace_back();
        a.partition_index = 0;
        a.broker_ids = replicas;
        auto& cfg = t.configs.emplace_back();
        cfg.name = "min.insync.replicas";
        cfg.value = "2";
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(5, req);
        if (!resp || resp->topics.empty()) {
            return "CreateTopics " + name + ": no answer";
        }
        if (resp->topics[0].error_code != 0) {
            return "CreateTopics " + name + " answered " +
                   std::to_string(resp->topics[0].error_code) + ": " +
                   resp->topics[0].error_message.value_or("");
        }
        return {};
    } catch (const std::exception& e) {
        return std::string("CreateTopics: ") + e.what();
    }
}

// The process has ended and waits to be reaped (a zombie), or is gone.
bool has_exited(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(in, stat)) {
        return true;
    }
    auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

class failing_disk : public ::testing::Test {
protected:
    void SetUp() override {
        _volumes = make_temp_dir("spool-failing-disk");
        _disk = std::make_unique<unsynced_mount>(_volumes / "backing",
                                                 cluster.broker(failing).data_dir() / "data",
                                                 _volumes / "unsynced_fs.log");
        ASSERT_TRUE(_disk->mount()) << "FUSE mount failed (needs /dev/fuse and root):\n"
                                    << _disk->log_text();
        auto err = cluster.start();
        ASSERT_TRUE(err.empty()) << err;
    }
    void TearDown() override {
        // The broker on the mount goes before the mount, the mount before its directory.
        cluster.kill9(failing);
        if (_disk) {
            _disk->unmount();
        }
        std::error_code ec;
        std::filesystem::remove_all(_volumes, ec);
    }
    std::chrono::milliseconds session() const {
        return std::chrono::milliseconds(cluster.options().session_timeout_ms);
    }
    std::string survivors() const {
        return "127.0.0.1:" + std::to_string(cluster.port(1)) +
               ",127.0.0.1:" + std::to_string(cluster.port(2));
    }

    cluster_harness cluster;
    std::filesystem::path _volumes;
    std::unique_ptr<unsynced_mount> _disk;
};

TEST_F(failing_disk,
       test_leader_whose_disk_fails_halts_and_its_leadership_moves_within_the_session_timeout) {
    const std::string led = "disk-led";
    const std::string other = "disk-other";
    ASSERT_EQ(create_assigned_topic(cluster.port(0), led, {0, 1, 2}), "");
    ASSERT_EQ(create_assigned_topic(cluster.port(0), other, {1, 2, 0}), "");
    std::string why;
    auto before = wait_for_isr_size(cluster, observer, led, 0, 3, 30s, &why);
    ASSERT_TRUE(before) << led << " never had 3 in-sync replicas: " << why << "\n"
                        << cluster.log_tails();
    ASSERT_EQ(before->leader, static_cast<int32_t>(failing)) << describe(*before);
    auto other_before = wait_for_isr_size(cluster, observer, other, 0, 3, 30s, &why);
    ASSERT_TRUE(other_before) << other << " never had 3 in-sync replicas: " << why;
    ASSERT_NE(other_before->leader, static_cast<int32_t>(failing)) << describe(*other_before);

    // request.timeout.ms: a request the failed broker never answers is retried (same
    // sequence numbers) after 5 s rather than librdkafka's default 30 s.
    const std::map<std::string, std::string> settings = {{"request.timeout.ms", "5000"},
                                                         {"linger.ms", "5"}};
    producer_load led_load(cluster.bootstrap(), led, 1500, settings);
    producer_load other_load(cluster.bootstrap(), other, 500, settings);
    led_load.start();
    other_load.start();
    ASSERT_TRUE(led_load.wait_acked(2000, 30s))
        << "no records acknowledged on " << led << " (" << led_load.acked() << ")\n"
        << cluster.log_tails();
    ASSERT_TRUE(other_load.wait_acked(500, 30s))
        << "no records acknowledged on " << other << " (" << other_load.acked() << ")";

    // The disk fails under the running broker.
    const pid_t pid = cluster.broker(failing).pid();
    const uint64_t other_acked_at_cut = other_load.acked();
    const auto cut = clock_type::now();
    _disk->power_cut();

    std::optional<clock_type::time_point> exited_at;
    std::optional<clock_type::time_point> moved_at;
    std::optional<partition_info> moved;
    std::string last = "no answer";
    const auto deadline = cut + session() * 2 + 10s;
    while (clock_type::now() < deadline && (!exited_at || !moved)) {
        if (!exited_at && has_exited(pid)) {
            exited_at = clock_type::now();
        }
        if (!moved) {
            if (auto p = partition_seen(cluster, observer, led, 0)) {
                if (p->leader >= 0 && p->leader != static_cast<int32_t>(failing) &&
                    p->leader_epoch > before->leader_epoch) {
                    moved = p;
                    moved_at = clock_type::now();
                } else {
                    last = describe(*p);
                }
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_TRUE(exited_at) << "broker " << failing << " still runs "
                           << ms_between(cut, clock_type::now()) << " ms after its disk failed\n"
                           << cluster.broker(failing).log_text();
    auto exit = cluster.broker(failing).stop(5s);  // reaps it: the status it exited with
    ASSERT_TRUE(moved) << "no new leader of " << led << "; broker " << observer << " last showed "
                       << last << "\n"
                       << cluster.log_tails();
    const long exit_ms = ms_between(cut, *exited_at);
    const long move_ms = ms_between(cut, *moved_at);

    // disk-other: its leader never changed, and it acknowledges writes again within the same
    // bound (its follower on the failed broker leaves the ISR with the broker's session).
    const bool other_served_in_bound =
        other_load.wait_acked(other_acked_at_cut + 100, session() + 1s);
    // Served at all: a functional check with room for a loaded machine; the bound above is
    // asserted only where timing bounds are (timing_bounds_asserted()).
    const bool other_served =
        other_served_in_bound || other_load.wait_acked(other_acked_at_cut + 100, 30s);
    const long other_ms = ms_between(cut, clock_type::now());
    auto other_after = partition_seen(cluster, observer, other, 0);

    // Both producers go on for a while on the survivors, then everything is read back.
    ASSERT_TRUE(led_load.wait_acked(led_load.acked() + 1000, 60s))
        << "the producer made no progress on the new leader; fatal: '" << led_load.fatal_error()
        << "'\n"
        << cluster.log_tails();
    led_load.finish(60s);
    other_load.finish(60s);
    auto led_check = check_log(survivors(), led, led_load.acked_offsets());
    auto other_check = check_log(survivors(), other, other_load.acked_offsets());

    std::printf(
        "[ figures  ] disk failed -> broker %zu exited %ld ms (status %d), %s leader %d -> %d "
        "seen after %ld ms (bound %lld ms), %s acked again after %ld ms\n"
        "[ figures  ] %s: %s\n[ figures  ] %s: %s\n",
        failing, exit_ms, exit.status, led.c_str(), before->leader, moved->leader, move_ms,
        static_cast<long long>((session() + 1s).count()), other.c_str(), other_ms, led.c_str(),
        describe(led_check).c_str(), other.c_str(), describe(other_check).c_str());

    const std::string log = cluster.broker(failing).log_text();
    // What the failed broker said about it, in its words.
    for (const char* needle : {"Shutdown broker because", "the cluster", "exiting with status"}) {
        for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
            auto from = log.rfind('\n', at);
            from = from == std::string::npos ? 0 : from + 1;
            std::printf("[ broker %zu ] %s\n", failing,
                        log.substr(from, log.find('\n', at) - from).c_str());
        }
    }
    EXPECT_TRUE(exit.exited) << log;
    EXPECT_EQ(exit.status, log_dir_failed_status) << log;
    EXPECT_NE(log.find("Shutdown broker because all log dirs in"), std::string::npos) << log;
    if (timing_bounds_asserted()) {
        EXPECT_LE(move_ms, (session() + 1s).count()) << describe(*moved);
        EXPECT_TRUE(other_served_in_bound)
            << other << " acknowledged nothing within the session timeout + 1 s";
    }

    EXPECT_TRUE(other_served) << other << " acknowledged nothing for " << other_ms
                              << " ms after the failure (acked " << other_load.acked() << ")";
    ASSERT_TRUE(other_after);
    EXPECT_EQ(other_after->leader, other_before->leader) << describe(*other_after);

    for (const auto* c : {&led_check, &other_check}) {
        EXPECT_EQ(c->read_error, "");
        EXPECT_EQ(c->audit.lost, 0u) << describe(*c);
        EXPECT_EQ(c->audit.duplicated, 0u) << describe(*c);
        EXPECT_EQ(c->audit.moved, 0u) << describe(*c);
        EXPECT_EQ(c->gaps, 0u) << describe(*c);
    }
    EXPECT_GT(led_check.audit.acked, 3000u);
    EXPECT_EQ(led_load.fatal_error(), "");
    EXPECT_EQ(other_load.fatal_error(), "");
}

}  // namespace
}  // namespace spool::tests::replication
