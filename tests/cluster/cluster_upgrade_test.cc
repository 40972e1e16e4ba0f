// A rolling upgrade from the previous release (docs/upgrades.md; label `upgrade`): the
// spool-broker of the previous release (scripts/upgrade/build-previous.sh: v0.3.0 = commit
// cdd6304, built once into ~/.cache/spool/spool-previous) runs a 3-broker cluster on etcd, which
// it leaves without a stored metadata.version (level 32, 4.4-IV1). Under an idempotent acks=all
// librdkafka producer on a topic of 3 replicas and min.insync.replicas=2, each broker in turn is
// stopped (SIGTERM: its controlled shutdown) and started on this build's binary, and the next
// step waits until the restarted broker is ready and the partition is back to 3 in-sync
// replicas. While a broker of the previous release is still live, finalizing metadata.version
// 4.4-IV2 is refused: by kafka-features (its Admin client asks the controller, which may be of
// the previous release and lack the API), and by an upgraded broker asked directly, naming the
// old broker. Once all run this build it is finalized with kafka-features and every broker
// advertises it. Then the producer stops and the partition is read back: 0 acknowledged records
// lost or duplicated, none failed, and records were acknowledged during every step. The longest
// pause between two acknowledgements is printed as a [ measured ] line, not gated.

#include "protocol/messages/api_versions.h"
#include "protocol/messages/update_features.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/durability/admin_requests.h"
#include "tests/durability/rdkafka_client.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

const std::string topic = "rolling";

std::string finalized_metadata_version(uint16_t port) {
    int rc = 0;
    auto out = kafka_features("127.0.0.1:" + std::to_string(port), "describe", &rc);
    std::smatch m;
    static const std::regex line(R"(Feature: metadata.version\s.*FinalizedVersionLevel: (\S+))");
    return std::regex_search(out, m, line) ? m[1].str() : "(none: " + out + ")";
}

// metadata.version as the broker on `port` itself finalizes it (ApiVersions v3; kafka-features
// describe may ask any broker): its level, -1 when it lists none (the previous release), -2
// when it does not answer.
int finalized_level_via(uint16_t port) {
    try {
        kafka_client c(port);
        protocol::api_versions_request req;
        req.client_software_name = "cluster-upgrade-test";
        req.client_software_version = "1";
        auto resp = c.call<protocol::api_versions_request, protocol::api_versions_response>(3, req);
        if (!resp) {
            return -2;
        }
        for (const auto& f : resp->finalized_features) {
            if (f.name == "metadata.version") {
                return f.max_version_level;
            }
        }
        return -1;
    } catch (const std::exception&) {
        return -2;
    }
}

// UpdateFeatures v1 straight to the broker on `port` (not to the controller, where Kafka's
// Admin client sends it): {error code, message}; {-2, ""} when it does not answer.
std::pair<int16_t, std::string> update_features_via(uint16_t port, int16_t metadata_version) {
    try {
        kafka_client c(port);
        protocol::update_features_request req;
        auto& u = req.feature_updates.emplace_back();
        u.feature = "metadata.version";
        u.max_version_level = metadata_version;
        u.upgrade_type = 1;
        auto resp =
            c.call<protocol::update_features_request, protocol::update_features_response>(1, req);
        if (!resp) {
            return {-2, ""};
        }
        return {resp->error_code, resp->error_message.value_or("")};
    } catch (const std::exception&) {
        return {-2, ""};
    }
}

bool in_sync(const partition_info& p) {
    return p.error == 0 && p.leader >= 0 && p.replicas.size() == 3 && p.isr.size() == 3;
}

// The producer on a thread of its own (acked_producer is single-threaded): queues records until
// told to stop, notes when each acknowledgement arrived, then flushes.
class background_producer {
public:
    explicit background_producer(const std::string& bootstrap)
        : _producer(bootstrap, topic,
                    {{"request.timeout.ms", "5000"}, {"linger.ms", "5"}, {"acks", "all"}}),
          _thread([this] { run(); }) {}
    ~background_producer() { stop(); }

    void stop() {
        _stop = true;
        if (_thread.joinable()) {
            _thread.join();
        }
    }
    uint64_t acked() {
        std::lock_guard lock(_mutex);
        return _acked_count;
    }
    std::chrono::milliseconds longest_gap() {
        std::lock_guard lock(_mutex);
        return _longest_gap;
    }
    // After stop().
    acked_producer& producer() { return _producer; }
    bool flushed() const { return _flushed; }

private:
    void run() {
        uint64_t next = 0;
        auto last_ack = clock_type::now();
        size_t seen = 0;
        while (!_stop) {
            // A steady trickle (~500 records/s), so a pause in service shows as a gap.
            for (int k = 0; k < 5; ++k) {
                if (_producer.produce(record_id(next))) {
                    ++next;
                }
            }
            _producer.poll(10);
            note(seen, last_ack);
        }
        _flushed = _producer.flush(60s);
        note(seen, last_ack);
    }
    void note(size_t& seen, clock_type::time_point& last_ack) {
        const size_t now_acked = _producer.acked().size();
        const auto now = clock_type::now();
        std::lock_guard lock(_mutex);
        if (now_acked > seen) {
            _longest_gap =
                std::max(_longest_gap,
                         std::chrono::duration_cast<std::chrono::milliseconds>(now - last_ack));
            last_ack = now;
            seen = now_acked;
            _acked_count = now_acked;
        }
    }

    acked_producer _producer;
    std::atomic<bool> _stop{false};
    bool _flushed = false;
    std::mutex _mutex;
    uint64_t _acked_count = 0;
    std::chrono::milliseconds _longest_gap{0};
    std::thread _thread;  // last: starts once the rest is built
};

class env_binary {
public:
    explicit env_binary(const std::string& path) { ::setenv("SPOOL_BROKER_BIN", path.c_str(), 1); }
    ~env_binary() { ::unsetenv("SPOOL_BROKER_BIN"); }
    static void this_build() { ::unsetenv("SPOOL_BROKER_BIN"); }
};

TEST(cluster_upgrade, rolling_upgrade_from_the_previous_release_then_finalize) {
    int rc = 0;
    const auto t_build = clock_type::now();
    auto previous = run_bounded(
        "bash " + std::string(SPOOL_SOURCE_DIR) + "/scripts/upgrade/build-previous.sh", 1800, &rc);
    while (!previous.empty() && previous.back() == '\n') {
        previous.pop_back();
    }
    ASSERT_EQ(rc, 0) << "could not build the previous release: " << previous;
    std::printf(
        "[ measured ] previous release's broker ready in %lld s: %s\n",
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::seconds>(clock_type::now() - t_build).count()),
        previous.c_str());

    env_binary old_binary(previous);
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    {
        kafka_client c(cluster.port(0));
        c.set_read_timeout(40s);
        auto answer = create_topic(c, topic, 1, {{"min.insync.replicas", "2"}}, 3);
        ASSERT_EQ(answer.error_code, 0) << answer.message;
    }
    auto partition = [&] { return cluster.single_partition(topic); };
    // Until broker `rolled` (if any) is ready (/readyz: its logs recovered, unfenced by the
    // controller) and the partition has its 3 replicas in sync, the restarted one among them.
    auto wait_in_sync = [&](std::chrono::milliseconds timeout, int rolled = -1) {
        const auto deadline = clock_type::now() + timeout;
        std::string last = "no answer";
        while (clock_type::now() < deadline) {
            if (rolled >= 0) {
                auto ready = cluster.http_get(static_cast<size_t>(rolled), "/readyz");
                if (ready.status != 200) {
                    last = "broker " + std::to_string(rolled) + " not ready: " + ready.body;
                    std::this_thread::sleep_for(100ms);
                    continue;
                }
            }
            if (auto p = partition()) {
                if (in_sync(*p)) {
                    return std::string();
                }
                last = describe(*p);
            }
            std::this_thread::sleep_for(100ms);
        }
        return last;
    };
    ASSERT_EQ(wait_in_sync(30s), "") << cluster.log_tails();
    // The previous release advertises no metadata.version at all.
    EXPECT_EQ(finalized_level_via(cluster.port(0)), -1);

    background_producer producer(cluster.bootstrap());
    std::this_thread::sleep_for(2s);
    ASSERT_GT(producer.acked(), 0u) << cluster.log_tails();

    const auto t_roll = clock_type::now();
    for (size_t i = 0; i < cluster.size(); ++i) {
        const auto acked_before = producer.acked();
        auto stopped = cluster.sigterm(i);
        EXPECT_TRUE(stopped.exited && stopped.status == 0)
            << "broker " << i << " (previous release) did not stop cleanly";
        env_binary::this_build();
        ASSERT_TRUE(cluster.restart(i)) << "broker " << i << " on this build:\n"
                                        << cluster.log_tails();
        auto why = wait_in_sync(60s, static_cast<int>(i));
        ASSERT_EQ(why, "") << "after broker " << i << " was upgraded\n" << cluster.log_tails();
        // Served during the step (the acknowledgements kept coming).
        std::this_thread::sleep_for(1s);
        EXPECT_GT(producer.acked(), acked_before)
            << "nothing acknowledged while broker " << i << " was upgraded";
        // The cluster is still at the previous release's layout.
        EXPECT_EQ(finalized_level_via(cluster.port(i)), 32) << "broker " << i;
        if (i + 1 < cluster.size()) {
            // A broker of the previous release is live: it could not read level 33. Kafka's
            // Admin client sends UpdateFeatures to the controller (Metadata's controller id):
            // a broker of this build refuses, naming the first broker of the previous release;
            // a controller of the previous release does not know the API at all.
            auto out = kafka_features(cluster.bootstrap(), "upgrade --metadata 4.4-IV2", &rc);
            EXPECT_NE(rc, 0) << out;
            const bool refused_by_check =
                out.find("Invalid update version 33 for feature metadata.version. Broker " +
                         std::to_string(i + 1) + " only supports versions 32-32") !=
                std::string::npos;
            const bool unknown_to_controller = out.find("UPDATE_FEATURES") != std::string::npos ||
                                               out.find("UnsupportedVersion") != std::string::npos;
            EXPECT_TRUE(refused_by_check || unknown_to_controller) << out;
            // Straight to the broker just upgraded: its own check names the old one.
            auto [code, message] = update_features_via(cluster.port(i), 33);
            EXPECT_EQ(code, 95) << message;  // INVALID_UPDATE_VERSION
            EXPECT_NE(
                message.find("Broker " + std::to_string(i + 1) + " only supports versions 32-32"),
                std::string::npos)
                << message;
            std::printf("[ measured ] finalize with %zu of %zu brokers upgraded: refused (%s)\n",
                        i + 1, cluster.size(),
                        refused_by_check ? "by this build's check"
                                         : "the controller of the previous release lacks the API");
        }
    }
    const auto roll_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t_roll).count();

    // Every broker runs this build: finalize.
    auto out = kafka_features(cluster.bootstrap(), "upgrade --metadata 4.4-IV2", &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("metadata.version was upgraded to 33."), std::string::npos) << out;
    for (size_t i = 0; i < cluster.size(); ++i) {
        int level = -2;
        for (int k = 0; k < 100 && level != 33; ++k) {
            level = finalized_level_via(cluster.port(i));
            std::this_thread::sleep_for(50ms);
        }
        EXPECT_EQ(level, 33) << "broker " << i;
    }
    EXPECT_EQ(finalized_metadata_version(cluster.port(0)), "4.4-IV2");
    out = kafka_features(cluster.bootstrap(), "downgrade --metadata 4.4-IV1", &rc);
    EXPECT_NE(rc, 0) << out;
    EXPECT_NE(out.find("Refusing to perform the requested downgrade"), std::string::npos) << out;

    std::this_thread::sleep_for(1s);
    producer.stop();
    ASSERT_TRUE(producer.flushed()) << "records left unanswered";
    std::string read_error;
    auto log = read_partition(cluster.bootstrap(), topic, &read_error);
    ASSERT_TRUE(read_error.empty()) << read_error;
    auto a = audit(producer.producer().acked(), log);
    std::printf(
        "[ measured ] rolling upgrade of 3 brokers in %lld ms under load: %llu records "
        "acknowledged, %zu failed, lost %llu, duplicated %llu; longest pause between "
        "acknowledgements %lld ms\n",
        static_cast<long long>(roll_ms), static_cast<unsigned long long>(a.acked),
        producer.producer().failed().size(), static_cast<unsigned long long>(a.lost),
        static_cast<unsigned long long>(a.duplicated),
        static_cast<long long>(producer.longest_gap().count()));
    EXPECT_GT(a.acked, 0u);
    EXPECT_EQ(a.lost, 0u);
    EXPECT_EQ(a.duplicated, 0u);
    EXPECT_EQ(a.moved, 0u);
    EXPECT_TRUE(producer.producer().failed().empty())
        << producer.producer().failed().begin()->second;
    EXPECT_EQ(producer.producer().fatal_error(), "");
}

}  // namespace
}  // namespace spool::tests::cluster
