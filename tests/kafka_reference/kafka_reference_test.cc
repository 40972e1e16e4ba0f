// Apache Kafka as the reference for Spool's power-cut behaviour (issue #31): every scenario of
// power_cut_scenarios.h runs on 3 KRaft nodes of Apache Kafka (kafka_cluster.h) and then on 3
// Spool brokers (tests/cluster/cluster_harness.h), each node's data on its own unsynced_fs
// power-cut mount, with the same producer and the same audit; the counts are printed side by side
//
//   [ measured ] kafka 4.1.1 <scenario>: lost X duplicated Y
//   [ measured ] spool <scenario>: lost X duplicated Y
//
// and Spool must lose (and duplicate) no more acknowledged records than Kafka: 0 wherever Kafka
// loses 0. Where both lose (every replica's power cut at once without a flush policy) the counts
// are the result; tests/kafka_reference/README.md keeps a table of them.
//
// SPOOL_KAFKA_REFERENCE_VERSIONS="4.1.1 4.4.0" runs each scenario against every listed Kafka
// version (jars fetched into the peer cache on first use, scripts/peers/fetch-kafka.sh
// --jars-only); default: the version of scripts/peers/versions.sh. Spool runs once per scenario.
// SPOOL_KAFKA_REFERENCE_ONLY=kafka|spool runs one side alone (no comparison then).
//
// kafka_reference_min_insync.isr_below_min_insync (below) does the same for KIP-966's strict min
// ISR (min_insync_scenario.h): Spool's figures must equal Kafka's.

#include "tests/cluster/cluster_harness.h"
#include "tests/kafka_reference/kafka_cluster.h"
#include "tests/kafka_reference/min_insync_scenario.h"
#include "tests/kafka_reference/power_cut_scenarios.h"
#include "tests/kafka_reference/rack_fetch_scenario.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace spool::tests::kafka_reference {
namespace {

// Node i in rack zone-<i>, consumers sent to the replica in their rack (rack_fetch_scenario.h).
const std::string rack_aware_selector =
    "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector";
std::vector<std::vector<std::string>> zone_per_node(size_t nodes) {
    std::vector<std::vector<std::string>> out;
    for (size_t i = 0; i < nodes; ++i) {
        out.push_back({"broker.rack=zone-" + std::to_string(i)});
    }
    return out;
}

class kafka_target : public power_cut_target {
public:
    kafka_target(const std::string& version, int session_timeout_ms, size_t nodes = 3,
                 bool power_cut_mounts = true, bool racks = false)
        : _version(kafka_version_of(version)), _cluster([&] {
              kafka_options o;
              o.version = version;
              o.session_timeout_ms = session_timeout_ms;
              o.nodes = nodes;
              o.power_cut_mounts = power_cut_mounts;
              if (racks) {
                  o.overrides.push_back(rack_aware_selector);
                  o.per_node_overrides = zone_per_node(nodes);
              }
              return o;
          }()) {}
    std::string name() const override { return "kafka " + _version; }
    std::string start() override { return _cluster.start(); }
    size_t size() const override { return _cluster.size(); }
    uint16_t port(size_t i) const override { return _cluster.port(i); }
    std::string bootstrap() const override { return _cluster.bootstrap(); }
    bool running(size_t i) override { return _cluster.running(i); }
    int session_timeout_ms() const override { return _cluster.options().session_timeout_ms; }
    void kill9(size_t i) override { _cluster.kill9(i); }
    bool sigterm(size_t i) override { return _cluster.sigterm(i); }
    void pause(size_t i) override { _cluster.pause(i); }
    std::string power_cut(size_t i) override { return _cluster.power_cut(i); }
    bool restart(size_t i, bool wait) override { return _cluster.restart(i, wait); }
    std::string replace_volume(size_t i) override { return _cluster.replace_volume(i); }
    std::string volume_log(size_t i) const override { return _cluster.volume_log(i); }
    std::vector<uint8_t> replica_batches(size_t i, const std::string& topic,
                                         int32_t partition) const override {
        return replica_batches_in(_cluster.log_dir(i).string(), topic, partition);
    }
    std::string log_tails(size_t lines) const override { return _cluster.log_tails(lines); }
    void mark() override {
        _marks = _cluster.log_marks();
        _since = std::chrono::system_clock::now();
    }
    std::string events_of(size_t i) const override {
        return "controllers on node " + std::to_string(i) +
               " (after the fault): " + _cluster.controller_events(i, _marks, _since);
    }

private:
    std::string _version;
    kafka_cluster _cluster;
    std::vector<size_t> _marks;
    std::chrono::system_clock::time_point _since;
};

class spool_target : public power_cut_target {
public:
    explicit spool_target(bool power_cut_mounts = true, bool racks = false)
        : _cluster([&] {
              cluster::cluster_options o;
              o.power_cut_mounts = power_cut_mounts;
              if (racks) {
                  o.overrides.push_back(rack_aware_selector);
                  o.per_broker_overrides = zone_per_node(o.brokers);
              }
              return o;
          }()) {}
    std::string name() const override { return "spool"; }
    std::string start() override { return _cluster.start(); }
    size_t size() const override { return _cluster.size(); }
    uint16_t port(size_t i) const override { return _cluster.port(i); }
    std::string bootstrap() const override { return _cluster.bootstrap(); }
    bool running(size_t i) override { return _cluster.broker(i).running(); }
    int session_timeout_ms() const override { return _cluster.options().session_timeout_ms; }
    void kill9(size_t i) override { _cluster.kill9(i); }
    bool sigterm(size_t i) override { return _cluster.sigterm(i).exited; }
    void pause(size_t i) override { _cluster.pause(i); }
    std::string power_cut(size_t i) override { return _cluster.power_cut(i); }
    // broker_process::start() returns once the port accepts, wait or not.
    bool restart(size_t i, bool) override { return _cluster.restart(i); }
    std::string replace_volume(size_t i) override { return _cluster.replace_volume(i); }
    std::string volume_log(size_t i) const override { return _cluster.volume_log(i); }
    std::vector<uint8_t> replica_batches(size_t i, const std::string& topic,
                                         int32_t partition) const override {
        return _cluster.replica_batches(i, topic, partition);
    }
    std::string log_tails(size_t lines) const override { return _cluster.log_tails(lines); }

private:
    cluster::cluster_harness _cluster;
};

std::vector<std::string> reference_versions() {
    const char* env = std::getenv("SPOOL_KAFKA_REFERENCE_VERSIONS");
    std::vector<std::string> out;
    std::istringstream in(env != nullptr ? env : "");
    for (std::string v; in >> v;) {
        out.push_back(v);
    }
    if (out.empty()) {
        out.push_back("");  // versions.sh's
    }
    return out;
}

// Kafka's broker.session.timeout.ms: Spool's (3000 ms), except in the scenarios of a quick
// restart. A Kafka node takes 4-5 s from its power cut to registering again here (a JVM start),
// past 3 s, so its controller would fence the old incarnation by its session first and the quick
// restart (a new incarnation registering while the old one still counts as alive, issue #31)
// would not be what is tested: there Kafka runs with its default, 9000 ms, and the restarted
// node is back well within it, as Spool's broker is within its 3000 ms.
int kafka_session_timeout_ms(scenario s) {
    if (const char* env = std::getenv("SPOOL_KAFKA_REFERENCE_SESSION_MS")) {
        return std::atoi(env);
    }
    switch (s) {
        case scenario::leader_cut_quick_restart:
        case scenario::follower_cut_then_leader_killed:
        case scenario::follower_cut_leader_hangs:
            return 9000;
        default:
            return 3000;
    }
}

// The min.insync.replicas cases: Spool's session timeout (or the variable's).
int kafka_session_timeout_ms() {
    return kafka_session_timeout_ms(scenario::all_cut_no_flush);
}

std::string only_side() {
    const char* env = std::getenv("SPOOL_KAFKA_REFERENCE_ONLY");
    return env != nullptr ? env : "";
}

std::string notes_of(const scenario_result& r) {
    std::string out;
    for (const auto& n : r.notes) {
        out += "\n  " + n;
    }
    for (const auto& e : r.examples) {
        out += "\n  " + e;
    }
    return out;
}

class kafka_reference : public ::testing::TestWithParam<scenario> {};

TEST_P(kafka_reference, spool_loses_no_more_than_kafka) {
    const scenario s = GetParam();
    const std::string only = only_side();
    std::vector<scenario_result> kafka;
    if (only != "spool") {
        for (const auto& v : reference_versions()) {
            kafka_target k(v, kafka_session_timeout_ms(s));
            kafka.push_back(run_scenario(k, s));
        }
    }
    std::optional<scenario_result> spool;
    if (only != "kafka") {
        spool_target sp;
        spool = run_scenario(sp, s);
    }

    auto print = [&](const scenario_result& r) {
        std::printf(
            "[ measured ] %s %s: lost %llu duplicated %llu (moved %llu, of %llu acked)%s%s\n",
            r.target.c_str(), scenario_name(s), static_cast<unsigned long long>(r.lost),
            static_cast<unsigned long long>(r.duplicated), static_cast<unsigned long long>(r.moved),
            static_cast<unsigned long long>(r.acked), r.audited ? "" : " NOT AUDITED",
            r.offline ? (" OFFLINE: " + r.offline_state).c_str() : "");
    };
    for (const auto& k : kafka) {
        print(k);
    }
    if (spool) {
        print(*spool);
    }
    std::fflush(stdout);

    for (const auto& k : kafka) {
        ASSERT_TRUE(k.audited) << k.target << " " << scenario_name(s)
                               << " stopped before its audit:" << notes_of(k);
    }
    if (!spool) {
        return;
    }
    ASSERT_TRUE(spool->audited) << "spool " << scenario_name(s)
                                << " stopped before its audit:" << notes_of(*spool);
    for (const auto& k : kafka) {
        // A reference whose partition stayed offline lost nothing readable-or-not we can count:
        // its replicas may hold every record. Spool is held to 0 then.
        const uint64_t kafka_lost = k.offline ? 0 : k.lost;
        EXPECT_LE(spool->lost, kafka_lost)
            << "Spool lost more acknowledged records than " << k.target
            << (k.offline ? " (offline there: counted 0)" : "") << notes_of(*spool);
        EXPECT_LE(spool->duplicated, k.duplicated)
            << "Spool duplicated more acknowledged records than " << k.target << notes_of(*spool);
    }
}

INSTANTIATE_TEST_SUITE_P(scenarios, kafka_reference, ::testing::ValuesIn(all_scenarios()),
                         [](const ::testing::TestParamInfo<scenario>& info) {
                             return std::string(scenario_name(info.param));
                         });

// KIP-966's strict min ISR (min_insync_scenario.h) on every listed Kafka version, then on Spool:
//
//   [ measured ] kafka 4.1.1 isr_below_min_insync: refused X/20, acks1 accepted Y/10, hw before
//                B after A, after heal H, records read R
//   [ measured ] kafka 4.1.1 rf1_min_insync_2: acks=all accepted X/5 (errors: ...), hw H
//
// Spool's figures must equal those of the first listed version (by default versions.sh's, 4.1.1):
// refused and accepted counts, whether the high watermark moved while the ISR was the leader
// alone, the records read back after the heal, and RF=1's accepted acks=all. Other versions that
// differ from it are printed ([ differs  ]), not asserted.
//
// Kafka runs 5 nodes here, the partition on 3 of them: its controllers are its brokers (combined
// mode, a static quorum of every node), and with 3 nodes the two stopped followers would take the
// metadata quorum down with them, so no ISR change could ever be committed. Spool keeps its
// metadata in etcd: 3 brokers. No power-cut mounts: nothing here loses power.
TEST(kafka_reference_min_insync, isr_below_min_insync) {
    const std::string only = only_side();
    std::vector<min_insync_result> kafka;
    if (only != "spool") {
        for (const auto& v : reference_versions()) {
            kafka_target k(v, kafka_session_timeout_ms(), 5, false);
            kafka.push_back(run_min_insync(k));
        }
    }
    std::optional<min_insync_result> spool;
    if (only != "kafka") {
        spool_target sp(false);
        spool = run_min_insync(sp);
    }
    std::vector<const min_insync_result*> all;
    for (const auto& k : kafka) {
        all.push_back(&k);
    }
    if (spool) {
        all.push_back(&*spool);
    }
    for (const auto* r : all) {
        std::printf("[ measured ] %s\n", r->table_line().c_str());
    }
    for (const auto* r : all) {
        std::printf("[ measured ] %s\n", r->rf1_table_line().c_str());
    }
    auto notes = [](const min_insync_result& r) {
        std::string out;
        for (const auto& n : r.notes) {
            out += "\n  " + n;
        }
        return out;
    };
    auto same = [](const min_insync_result& a, const min_insync_result& b) {
        return a.refused == b.refused && a.accepted == b.accepted && a.hw_moved() == b.hw_moved() &&
               a.records_read == b.records_read && a.rf1_accepted == b.rf1_accepted;
    };
    for (size_t i = 1; i < kafka.size(); ++i) {
        if (!same(kafka[i], kafka[0])) {
            std::printf("[ differs  ] %s from %s\n", kafka[i].target.c_str(),
                        kafka[0].target.c_str());
        }
    }
    std::fflush(stdout);

    for (const auto& k : kafka) {
        ASSERT_TRUE(k.measured && k.healed) << k.target << " stopped early:" << notes(k);
    }
    if (!spool || kafka.empty()) {
        return;
    }
    ASSERT_TRUE(spool->measured && spool->healed) << "spool stopped early:" << notes(*spool);
    const auto& ref = kafka.front();
    EXPECT_EQ(spool->refused, ref.refused) << "acks=all refused with NOT_ENOUGH_REPLICAS";
    EXPECT_EQ(spool->accepted, ref.accepted) << "acks=1 accepted on an ISR of 1";
    EXPECT_EQ(spool->hw_moved(), ref.hw_moved())
        << "high watermark on an ISR of 1: Spool " << spool->hw_before << " -> " << spool->hw_after
        << ", " << ref.target << " " << ref.hw_before << " -> " << ref.hw_after;
    EXPECT_EQ(spool->records_read, ref.records_read) << "records read after the heal";
    EXPECT_EQ(spool->rf1_accepted, ref.rf1_accepted)
        << "acks=all on RF=1 with min.insync.replicas=2";
    if (ref.notes.empty()) {
        EXPECT_TRUE(spool->notes.empty()) << notes(*spool);
    }
}

// KIP-392 on Kafka and on Spool (rack_fetch_scenario.h): every answer Spool gives equals Kafka's
// (the first version listed; other versions that differ from it are printed, not asserted). No
// power-cut mounts: nothing loses power.
TEST(kafka_reference_racks, fetch_from_the_closest_replica) {
    const std::string only = only_side();
    std::vector<rack_fetch_result> kafka;
    if (only != "spool") {
        for (const auto& v : reference_versions()) {
            kafka_target k(v, kafka_session_timeout_ms(), 3, false, true);
            kafka.push_back(run_rack_fetch(k));
        }
    }
    std::optional<rack_fetch_result> spool;
    if (only != "kafka") {
        spool_target sp(false, true);
        spool = run_rack_fetch(sp);
    }
    auto notes = [](const rack_fetch_result& r) {
        std::string out;
        for (const auto& n : r.notes) {
            out += "\n  " + n;
        }
        return out;
    };
    for (size_t i = 1; i < kafka.size(); ++i) {
        if (kafka[i].answers != kafka[0].answers) {
            std::printf("[ differs  ] %s from %s\n", kafka[i].target.c_str(),
                        kafka[0].target.c_str());
        }
    }
    std::fflush(stdout);
    for (const auto& k : kafka) {
        ASSERT_TRUE(k.measured) << k.target << " stopped early:" << notes(k);
    }
    if (!spool) {
        return;
    }
    ASSERT_TRUE(spool->measured) << "spool stopped early:" << notes(*spool);
    if (kafka.empty()) {
        return;
    }
    ASSERT_EQ(spool->answers.size(), kafka.front().answers.size());
    for (size_t i = 0; i < spool->answers.size(); ++i) {
        EXPECT_EQ(spool->answers[i].second, kafka.front().answers[i].second)
            << spool->answers[i].first << ": spool " << spool->answers[i].second.text()
            << ", " << kafka.front().target << " " << kafka.front().answers[i].second.text();
    }
}

}  // namespace
}  // namespace spool::tests::kafka_reference
