// etcd faults under a three-broker cluster: while etcd is down the brokers go on producing and
// fetching for the leadership they hold, refuse metadata changes with a retriable error and say
// why on /readyz, and catch up once it is back without a restart; an etcd killed with -9 and
// restarted has lost nothing; an etcd restored from a snapshot (docs/securing-a-cluster.md's
// backup and restore) brings the cluster back with every acknowledged record of its topics.

#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;

constexpr int16_t request_timed_out = 7;

class cluster_etcd : public started_cluster {
protected:
    // Where a test's etcd snapshot goes: beside etcd's data directory.
    std::filesystem::path snapshot_file() {
        return cluster.etcd().data_dir().parent_path() /
               (cluster.etcd().data_dir().filename().string() + "-snapshot.db");
    }

    // Every broker stopped (SIGTERM), etcd's data replaced by `file` restored, etcd and the
    // brokers started again; the snapshot file removed. Empty on success, else what failed.
    std::string restore_everything_from(const std::filesystem::path& file) {
        for (size_t i = 0; i < cluster.size(); ++i) {
            cluster.sigterm(i);
        }
        if (!cluster.etcd().stop()) {
            return "etcd did not stop";
        }
        auto err = cluster.etcd().restore(file);
        std::filesystem::remove(file);
        if (!err.empty()) {
            return err;
        }
        if (!cluster.etcd().start()) {
            return "restored etcd did not start: " + cluster.etcd().log_text();
        }
        for (size_t i = 0; i < cluster.size(); ++i) {
            if (!cluster.restart(i)) {
                return "broker " + std::to_string(i) + " did not start\n" + cluster.log_tails();
            }
        }
        std::string why;
        if (!cluster.wait_for_cluster(30s, 0, &why)) {
            return why + "\n" + cluster.log_tails();
        }
        return {};
    }

    // Once every partition of `topic` is led: appends `value` to each (acks=all) and expects to
    // read back `expected` from each.
    void append_and_read_back(const std::string& topic, int32_t partitions,
                              const std::string& value, const std::vector<std::string>& expected) {
        ASSERT_TRUE(cluster.wait_for_metadata(
            0, [&](const metadata_view& m) { return m.all_led(topic, partitions); }, 30s, {topic}))
            << cluster.log_tails();
        std::string out;
        for (int32_t p = 0; p < partitions; ++p) {
            EXPECT_TRUE(kcat_produce(cluster.bootstrap(), topic, p, {value}, "-X acks=all", &out))
                << out;
            EXPECT_EQ(kcat_consume(cluster.bootstrap(), topic, p), expected)
                << "partition " << p << "\n"
                << cluster.log_tails();
        }
    }

    // Kills `topic`-0's leader and waits until another broker shows a new one; the broker that
    // saw it, or nullopt.
    std::optional<size_t> kill_leader_of_first_partition(const std::string& topic,
                                                         int32_t partitions) {
        auto before = cluster.wait_for_metadata(
            0, [&](const metadata_view& m) { return m.all_led(topic, partitions); }, 15s, {topic});
        if (!before) {
            return std::nullopt;
        }
        const int32_t victim = before->topic(topic)->partitions.at(0).leader;
        cluster.kill9(static_cast<size_t>(victim));
        const size_t observer = (static_cast<size_t>(victim) + 1) % cluster.size();
        auto moved = cluster.wait_for_metadata(
            observer,
            [&](const metadata_view& m) {
                const auto* t = m.topic(topic);
                return t != nullptr && t->partitions.size() == static_cast<size_t>(partitions) &&
                       t->partitions[0].leader >= 0 && t->partitions[0].leader != victim;
            },
            30s, {topic});
        if (!moved) {
            return std::nullopt;
        }
        return observer;
    }

    bool wait_ready(bool ready, std::chrono::milliseconds timeout, std::string* last) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (true) {
            bool all = true;
            for (size_t i = 0; i < cluster.size(); ++i) {
                auto a = cluster.http_get(i, "/readyz");
                *last =
                    "broker " + std::to_string(i) + ": " + std::to_string(a.status) + " " + a.body;
                if ((a.status == 200) != ready || a.status == 0) {
                    all = false;
                    break;
                }
            }
            if (all) {
                return true;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                return false;
            }
            std::this_thread::sleep_for(100ms);
        }
    }
};

TEST_F(cluster_etcd, etcd_stopped_brokers_serve_produce_and_fetch_and_refuse_changes_retriably) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "steady", 3), 0);
    auto before = cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("steady", 3); }, 10s, {"steady"});
    ASSERT_TRUE(before);
    std::string out;
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "steady", p, {"before"}, {}, &out)) << out;
    }

    ASSERT_TRUE(cluster.etcd().stop());
    std::string last;
    ASSERT_TRUE(wait_ready(false, 15s, &last)) << last;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto a = cluster.http_get(i, "/readyz");
        EXPECT_EQ(a.status, 503);
        EXPECT_NE(a.body.find("etcd"), std::string::npos) << "broker " << i << ": " << a.body;
    }
    // Longer than a session: every lease has lapsed, and each leader pauses until its followers,
    // which go on fetching at its epoch, vouch for it (cluster::leadership_vouch: one more
    // session timeout and a second); kcat retries meanwhile.
    std::this_thread::sleep_for(std::chrono::milliseconds(cluster.options().session_timeout_ms) *
                                2);
    for (int32_t p = 0; p < 3; ++p) {
        EXPECT_TRUE(kcat_produce(cluster.bootstrap(), "steady", p, {"during"}, {}, &out)) << out;
        EXPECT_EQ(kcat_consume(cluster.bootstrap(), "steady", p),
                  (std::vector<std::string>{"before", "during"}))
            << "partition " << p;
    }
    std::string message;
    auto asked = std::chrono::steady_clock::now();
    EXPECT_EQ(create_topic_via(cluster.port(1), "while-down", 1, 5000, &message), request_timed_out)
        << message;
    EXPECT_LE(std::chrono::steady_clock::now() - asked, 15s);
    EXPECT_FALSE(message.empty());
    std::cout << "[ info ] CreateTopics while etcd is down: " << message << "\n";

    // etcd back: every broker catches up on its own (no restart), changes work again.
    ASSERT_TRUE(cluster.etcd().start());
    ASSERT_TRUE(wait_ready(true, 30s, &last)) << last << "\n" << cluster.log_tails();
    ASSERT_EQ(create_topic_via(cluster.port(1), "after-outage", 2), 0) << cluster.log_tails();
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto v = cluster.wait_for_metadata(
            i,
            [](const metadata_view& m) {
                return m.all_led("after-outage", 2) && m.all_led("steady", 3) &&
                       m.brokers.size() == 3 && m.topic("while-down") == nullptr;
            },
            5s);
        EXPECT_TRUE(v) << "broker " << i;
    }
    auto after = cluster.metadata(0, {"steady"});
    ASSERT_TRUE(after);
    for (int32_t p = 0; p < 3; ++p) {
        EXPECT_EQ(after->topic("steady")->partitions.at(p).leader,
                  before->topic("steady")->partitions.at(p).leader);
    }
}

TEST_F(cluster_etcd, etcd_killed_and_restarted_loses_nothing) {
    std::vector<std::string> kept;
    for (int t = 0; t < 5; ++t) {
        kept.push_back("kept-" + std::to_string(t));
        ASSERT_EQ(create_topic_via(cluster.port(t % 3), kept.back(), 4), 0);
    }
    // A topic created through another broker reaches broker 0's view a moment later, leaders
    // last (Kafka's clients see LEADER_NOT_AVAILABLE meanwhile): compare against settled leaders.
    auto view_before = cluster.wait_for_metadata(
        0,
        [&](const metadata_view& m) {
            return std::ranges::all_of(kept, [&](const auto& name) { return m.all_led(name, 4); });
        },
        10s, kept);
    ASSERT_TRUE(view_before);
    auto keys_before = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/");
    ASSERT_TRUE(keys_before);

    cluster.etcd().kill9();
    std::this_thread::sleep_for(1s);
    ASSERT_TRUE(cluster.etcd().start());

    auto keys_after = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/");
    ASSERT_TRUE(keys_after);
    // Every record (cluster id, topics, partitions, registrations) is still there, unchanged.
    // Keys may have been added meanwhile: the controller creates __consumer_offsets on its own
    // once every broker has registered, which can fall between the two reads.
    std::map<std::string, std::string> a, b;
    for (const auto& k : *keys_before) {
        a[k.key] = k.value;
    }
    for (const auto& k : *keys_after) {
        b[k.key] = k.value;
    }
    std::vector<std::string> lost_or_changed;
    for (const auto& [key, value] : a) {
        auto it = b.find(key);
        if (it == b.end()) {
            lost_or_changed.push_back(key + " (gone)");
        } else if (it->second != value) {
            lost_or_changed.push_back(key + ": " + value + " -> " + it->second);
        }
    }
    EXPECT_TRUE(lost_or_changed.empty()) << ::testing::PrintToString(lost_or_changed);
    EXPECT_GE(b.size(), a.size());
    size_t topics = 0, partitions = 0;
    for (const auto& [key, value] : a) {
        topics += key.starts_with(cluster.prefix() + "/topics/kept-");
        partitions += key.starts_with(cluster.prefix() + "/partitions/kept-");
    }
    EXPECT_EQ(topics, 5u);
    EXPECT_EQ(partitions, 20u);
    EXPECT_TRUE(b.contains(cluster.prefix() + "/cluster_id"));

    std::string why;
    ASSERT_TRUE(cluster.wait_for_cluster(20s, 0, &why)) << why;
    ASSERT_EQ(create_topic_via(cluster.port(2), "kept-after", 1), 0) << cluster.log_tails();
    auto view_after = cluster.metadata(0);
    ASSERT_TRUE(view_after);
    for (int t = 0; t < 5; ++t) {
        auto name = "kept-" + std::to_string(t);
        ASSERT_TRUE(view_after->all_led(name, 4)) << name;
        for (int32_t p = 0; p < 4; ++p) {
            EXPECT_EQ(view_after->topic(name)->partitions[p].leader,
                      view_before->topic(name)->partitions[p].leader);
        }
    }
}

// The documented procedure for metadata that matches the logs exactly: brokers stopped, snapshot,
// etcd's data lost and restored from the snapshot, brokers started again.
TEST_F(cluster_etcd, snapshot_restore_with_brokers_stopped_brings_the_cluster_back) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "backed", 3, 30000, nullptr, 3), 0);
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("backed", 3); }, 15s, {"backed"}));
    std::string out;
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(
            kcat_produce(cluster.bootstrap(), "backed", p, {"one", "two"}, "-X acks=all", &out))
            << out;
    }
    for (size_t i = 0; i < cluster.size(); ++i) {
        cluster.sigterm(i);
    }
    const auto file = snapshot_file();
    auto err = cluster.etcd().snapshot(file);
    ASSERT_TRUE(err.empty()) << err;
    // The brokers are down already; restore_everything_from stops them again (a no-op).
    err = restore_everything_from(file);
    ASSERT_TRUE(err.empty()) << err;
    append_and_read_back("backed", 3, "three", {"one", "two", "three"});
    // Metadata changes work on the restored etcd: a new topic, and a leader's death moves its
    // leadership.
    ASSERT_EQ(create_topic_via(cluster.port(1), "after-restore", 1, 30000, nullptr, 3), 0)
        << cluster.log_tails();
    auto observer = kill_leader_of_first_partition("backed", 3);
    ASSERT_TRUE(observer) << cluster.log_tails();
    EXPECT_EQ(kcat_consume(cluster.broker(*observer).bootstrap(), "backed", 0),
              (std::vector<std::string>{"one", "two", "three"}));
}

// A backup is usually taken live, and the logs then move on past it: records appended, a leader
// elected (a new leader epoch in etcd and in the logs), a topic created. After the restore etcd
// knows an older world than the brokers' logs (Kafka would call it an unclean restore of its
// metadata). What the snapshot knows must come back with every acknowledged record, including
// those appended after the snapshot; what only the logs know (the later topic) is gone from the
// cluster, as etcd says, and a topic created again under its name starts empty.
TEST_F(cluster_etcd, live_snapshot_older_than_the_logs_loses_no_acknowledged_record) {
    ASSERT_EQ(create_topic_via(cluster.port(0), "backed", 3, 30000, nullptr, 3), 0);
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("backed", 3); }, 15s, {"backed"}));
    std::string out;
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "backed", p, {"one"}, "-X acks=all", &out))
            << out;
    }
    const auto file = snapshot_file();
    auto err = cluster.etcd().snapshot(file);
    ASSERT_TRUE(err.empty()) << err;

    // After the snapshot: records, a failover of partition 0 (its leader killed and back), more
    // records at the new epoch, and a topic.
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "backed", p, {"two"}, "-X acks=all", &out))
            << out;
    }
    auto observer = kill_leader_of_first_partition("backed", 3);
    ASSERT_TRUE(observer) << cluster.log_tails();
    const auto via = cluster.broker(*observer).bootstrap();
    for (int32_t p = 0; p < 3; ++p) {
        ASSERT_TRUE(kcat_produce(via, "backed", p, {"three"}, "-X acks=all", &out)) << out;
    }
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (!cluster.broker(i).running()) {
            ASSERT_TRUE(cluster.restart(i));
        }
    }
    std::string why;
    // Registered again before a topic needs all three brokers.
    ASSERT_TRUE(cluster.wait_for_cluster(30s, 0, &why)) << why;
    ASSERT_EQ(create_topic_via(cluster.port(*observer), "later", 1, 30000, nullptr, 3), 0);
    ASSERT_TRUE(cluster.wait_for_metadata(
        *observer, [](const metadata_view& m) { return m.all_led("later", 1); }, 15s, {"later"}));
    ASSERT_TRUE(kcat_produce(via, "later", 0, {"stale"}, "-X acks=all", &out)) << out;
    // Every replica in sync again before the lights go out (the restarted broker caught up).
    ASSERT_TRUE(cluster.wait_for_metadata(*observer,
                                          [](const metadata_view& m) {
                                              const auto* t = m.topic("backed");
                                              if (t == nullptr || t->partitions.size() != 3) {
                                                  return false;
                                              }
                                              return std::ranges::all_of(
                                                  t->partitions,
                                                  [](const auto& p) { return p.isr.size() == 3; });
                                          },
                                          30s, {"backed"}))
        << cluster.log_tails();

    err = restore_everything_from(file);
    ASSERT_TRUE(err.empty()) << err;
    append_and_read_back("backed", 3, "four", {"one", "two", "three", "four"});
    auto all = cluster.metadata(0);
    ASSERT_TRUE(all);
    EXPECT_EQ(all->topic("later"), nullptr);
    ASSERT_EQ(create_topic_via(cluster.port(0), "later", 1, 30000, nullptr, 3), 0)
        << cluster.log_tails();
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("later", 1); }, 15s, {"later"}));
    ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "later", 0, {"fresh"}, "-X acks=all", &out))
        << out;
    EXPECT_EQ(kcat_consume(cluster.bootstrap(), "later", 0), (std::vector<std::string>{"fresh"}))
        << cluster.log_tails();
}

}  // namespace
}  // namespace spool::tests::cluster
