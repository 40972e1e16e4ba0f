// Partition reassignment and decommission (issue #16) on real clusters: etcd and real
// spool-broker processes, driven by Kafka 4.1.1's kafka-reassign-partitions, kcat (an acks=all
// producer that keeps going during every move) and raw AlterPartitionReassignments requests.
// - the tool's --execute moves an RF=2 partition from brokers {0,1} to {1,2}; --verify reports
//   it completed; the new replica's log equals the leader's byte for byte, broker 0's replica
//   directory is deleted, and no acknowledged record is lost;
// - a move that cannot complete (its new broker paused) shows in --list, --cancel reverts it;
//   Kafka's error codes for bad requests; the admin API's 400/404/409 answers;
// - decommission of broker 3 of 4 moves every replica off it while a producer keeps going
//   (GET shows the progress reaching "drained"); topics created meanwhile avoid it.

#include "protocol/messages/alter_partition_reassignments.h"
#include "protocol/messages/create_topics.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using ids = std::vector<int32_t>;

// kcat batches of acks=all records in the background, rotating over the topic's partitions,
// until stopped (bounded: 400 batches or 120 s). Only batches kcat reports wholly delivered
// count as acknowledged.
class background_producer {
public:
    background_producer(std::string bootstrap, std::string topic, int32_t partitions)
        : _thread([this, bootstrap, topic, partitions] { run(bootstrap, topic, partitions); }) {}
    ~background_producer() { stop(); }

    void stop() {
        _stop = true;
        if (_thread.joinable()) {
            _thread.join();
        }
    }
    size_t batches_acked() const { return _batches_acked.load(); }
    std::map<int32_t, std::vector<std::string>> acked() const {
        std::lock_guard lock(_mutex);
        return _acked;
    }
    bool wait_for_batches(size_t n, std::chrono::seconds timeout) const {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (batches_acked() < n && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(100ms);
        }
        return batches_acked() >= n;
    }

private:
    void run(const std::string& bootstrap, const std::string& topic, int32_t partitions) {
        const auto deadline = std::chrono::steady_clock::now() + 120s;
        for (int batch = 0; batch < 400 && !_stop && std::chrono::steady_clock::now() < deadline;
             ++batch) {
            const int32_t p = batch % partitions;
            std::vector<std::string> values;
            for (int i = 0; i < 20; ++i) {
                values.push_back("b" + std::to_string(batch) + "-" + std::to_string(i));
            }
            if (kcat_produce(bootstrap, topic, p, values, "", nullptr, 30)) {
                std::lock_guard lock(_mutex);
                auto& out = _acked[p];
                out.insert(out.end(), values.begin(), values.end());
                ++_batches_acked;
            }
        }
    }

    std::atomic<bool> _stop{false};
    std::atomic<size_t> _batches_acked{0};
    mutable std::mutex _mutex;
    std::map<int32_t, std::vector<std::string>> _acked;
    std::thread _thread;
};

// Every acknowledged record is in the partition, read back with kcat: what it misses.
std::vector<std::string> lost(const std::string& bootstrap, const std::string& topic,
                              const std::map<int32_t, std::vector<std::string>>& acked) {
    std::vector<std::string> missing;
    for (const auto& [p, values] : acked) {
        auto got = kcat_consume(bootstrap, topic, p, 60);
        std::set<std::string> have(got.begin(), got.end());
        for (const auto& v : values) {
            if (!have.contains(v)) {
                missing.push_back(topic + "-" + std::to_string(p) + ":" + v);
            }
        }
    }
    return missing;
}

// AlterPartitionReassignments through broker `port`: each partition's error code (-999: no
// answer). nullopt replicas: cancel.
int16_t reassign_raw(uint16_t port, const std::string& topic, int32_t partition,
                     std::optional<ids> replicas, int16_t version = 0,
                     bool allow_rf_change = true) {
    try {
        kafka_client c(port);
        c.set_read_timeout(40s);
        protocol::alter_partition_reassignments_request req;
        req.allow_replication_factor_change = allow_rf_change;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        auto& p = t.partitions.emplace_back();
        p.partition_index = partition;
        p.replicas = std::move(replicas);
        auto resp = c.call<protocol::alter_partition_reassignments_request,
                           protocol::alter_partition_reassignments_response>(version, req);
        if (!resp || resp->responses.empty() || resp->responses[0].partitions.empty()) {
            return -999;
        }
        return resp->responses[0].partitions[0].error_code;
    } catch (const std::exception&) {
        return -999;
    }
}

ids sorted(ids v) {
    std::sort(v.begin(), v.end());
    return v;
}

const partition_info* partition_of(const metadata_view& m, const std::string& topic, int32_t p) {
    const auto* t = m.topic(topic);
    return t != nullptr && t->error == 0 && static_cast<size_t>(p) < t->partitions.size()
               ? &t->partitions[static_cast<size_t>(p)]
               : nullptr;
}

// Waits until broker 0's Metadata shows topic-p on exactly `replicas` (any order), all in sync.
bool wait_for_replicas(cluster_harness& cluster, const std::string& topic, int32_t p,
                       const ids& replicas, std::chrono::seconds timeout = 60s) {
    metadata_view last;
    auto seen = cluster.wait_for_metadata(
        0,
        [&](const metadata_view& m) {
            const auto* pi = partition_of(m, topic, p);
            return pi != nullptr && pi->leader >= 0 && sorted(pi->replicas) == sorted(replicas) &&
                   sorted(pi->isr) == sorted(replicas);
        },
        timeout, {topic}, &last);
    if (!seen) {
        ADD_FAILURE() << topic << "-" << p << " never settled on the replicas; last seen "
                      << last.describe();
    }
    return seen.has_value();
}

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!pred()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(200ms);
    }
    return true;
}

std::string write_reassignment_json(const fs::path& dir, const std::string& topic, int32_t p,
                                    const ids& replicas) {
    nlohmann::json j{
        {"version", 1},
        {"partitions", nlohmann::json::array({{{"topic", topic},
                                               {"partition", p},
                                               {"replicas", replicas},
                                               {"log_dirs", nlohmann::json::array()}}})}};
    j["partitions"][0]["log_dirs"] = std::vector<std::string>(replicas.size(), "any");
    auto file = dir / (topic + "-reassignment.json");
    std::ofstream(file) << j.dump();
    return file.string();
}

// CreateTopics v4 through broker `port` with a manual assignment of one partition on
// `replicas` (brokers other than the receiving one): the topic's error code (-999: no answer).
int16_t create_assigned(uint16_t port, const std::string& topic, const ids& replicas) {
    try {
        kafka_client c(port);
        c.set_read_timeout(40s);
        protocol::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        t.num_partitions = -1;
        t.replication_factor = -1;
        auto& a = t.assignments.emplace_back();
        a.partition_index = 0;
        a.broker_ids = replicas;
        req.timeout_ms = 30000;
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        return resp && !resp->topics.empty() ? resp->topics[0].error_code : int16_t{-999};
    } catch (const std::exception&) {
        return -999;
    }
}

// An RF=2 topic of one partition on exactly `replicas`, created through broker 2 (a manual
// assignment may name any registered broker).
void create_on(cluster_harness& cluster, const std::string& topic, const ids& replicas) {
    ASSERT_EQ(create_assigned(cluster.port(2), topic, replicas), 0);
    ASSERT_TRUE(wait_for_replicas(cluster, topic, 0, replicas)) << cluster.log_tails();
    auto m = cluster.metadata(0, {topic});
    ASSERT_TRUE(m);
    EXPECT_EQ(partition_of(*m, topic, 0)->replicas, replicas) << "in the assignment's order";
    EXPECT_EQ(partition_of(*m, topic, 0)->leader, replicas.front());
}

class cluster_reassign_test : public started_cluster {};

TEST_F(cluster_reassign_test, test_reassign_tool_moves_a_partition_under_an_acks_all_producer) {
    const std::string topic = "moved";
    create_on(cluster, topic, {0, 1});
    background_producer producer(cluster.bootstrap(), topic, 1);
    ASSERT_TRUE(producer.wait_for_batches(3, 60s)) << cluster.log_tails();

    auto json = write_reassignment_json(cluster.broker(0).data_dir(), topic, 0, {1, 2});
    int rc = 0;
    auto out = kafka_reassign_partitions(cluster.bootstrap(),
                                         "--execute --reassignment-json-file " + json, &rc);
    ASSERT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("Successfully started partition reassignment"), std::string::npos) << out;

    std::string verify;
    ASSERT_TRUE(eventually(
        [&] {
            verify = kafka_reassign_partitions(cluster.bootstrap(),
                                               "--verify --reassignment-json-file " + json, &rc);
            return verify.find("Reassignment of partition moved-0 is completed") !=
                   std::string::npos;
        },
        90s))
        << verify << cluster.log_tails();
    ASSERT_TRUE(wait_for_replicas(cluster, topic, 0, {1, 2}));
    const size_t at_done = producer.batches_acked();
    ASSERT_TRUE(producer.wait_for_batches(at_done + 3, 60s)) << "the producer kept going";
    producer.stop();

    // Kafka deletes a removed replica: broker 0's directory goes.
    EXPECT_TRUE(eventually([&] { return !fs::exists(cluster.replica_dir(0, topic, 0)); }, 30s))
        << cluster.replica_dir(0, topic, 0) << " is still there";
    // The new replica holds the leader's batches, byte for byte.
    auto meta = cluster.metadata(0, {topic});
    ASSERT_TRUE(meta);
    const auto leader = static_cast<size_t>(partition_of(*meta, topic, 0)->leader);
    const size_t follower = leader == 1 ? 2 : 1;
    std::vector<uint8_t> expected;
    EXPECT_TRUE(eventually(
        [&] {
            expected = cluster.replica_batches(leader, topic, 0);
            return !expected.empty() && cluster.replica_batches(follower, topic, 0) == expected;
        },
        30s))
        << "broker " << follower << "'s log differs from the leader's (" << expected.size()
        << " bytes)";
    auto missing = lost(cluster.bootstrap(), topic, producer.acked());
    EXPECT_TRUE(missing.empty()) << missing.size() << " acknowledged records lost, e.g. "
                                 << missing.front();
}

TEST_F(cluster_reassign_test, test_a_stuck_move_is_listed_and_cancel_reverts_it) {
    const std::string topic = "stuck";
    create_on(cluster, topic, {0, 1});
    // Broker 2 stays registered for the session timeout: the request is accepted, but it never
    // fetches, so the move cannot complete.
    cluster.pause(2);
    ASSERT_EQ(reassign_raw(cluster.port(0), topic, 0, ids{1, 2}), 0);
    // The tools bootstrap from the live brokers only: a paused broker accepts connections (the
    // kernel does) but never answers, and an AdminClient that picks it times out its call.
    const std::string live = "127.0.0.1:" + std::to_string(cluster.port(0)) +
                             ",127.0.0.1:" + std::to_string(cluster.port(1));

    int rc = 0;
    std::string listed;
    EXPECT_TRUE(eventually(
        [&] {
            listed = kafka_reassign_partitions(live, "--list", &rc);
            return listed.find("stuck-0: replicas: 1,2,0. adding: 2. removing: 0.") !=
                   std::string::npos;
        },
        30s))
        << listed;

    // --preserve-throttles: clearing them would ask the paused broker 2 for its configs.
    auto json = write_reassignment_json(cluster.broker(0).data_dir(), topic, 0, {1, 2});
    auto out = kafka_reassign_partitions(
        live, "--cancel --preserve-throttles --reassignment-json-file " + json, &rc);
    EXPECT_EQ(rc, 0) << out;
    EXPECT_NE(out.find("Successfully cancelled partition reassignment"), std::string::npos) << out;
    metadata_view last;
    auto reverted = cluster.wait_for_metadata(
        0,
        [&](const metadata_view& m) {
            const auto* p = partition_of(m, topic, 0);
            return p != nullptr && sorted(p->replicas) == ids{0, 1};
        },
        30s, {topic}, &last);
    EXPECT_TRUE(reverted) << last.describe();
    // Metadata may still name broker 2 until its session ends; a tool run that picked it is
    // asked again.
    EXPECT_TRUE(eventually(
        [&] {
            listed = kafka_reassign_partitions(live, "--list", &rc);
            return listed.find("No partition reassignments found") != std::string::npos;
        },
        60s))
        << listed;
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 0, std::nullopt), 85)
        << "NO_REASSIGNMENT_IN_PROGRESS";
    cluster.resume(2);
    EXPECT_TRUE(eventually([&] { return !fs::exists(cluster.replica_dir(2, topic, 0)); }, 30s))
        << "broker 2 keeps a replica it is not assigned";
}

TEST_F(cluster_reassign_test, test_bad_requests_get_kafkas_error_codes) {
    const std::string topic = "checked";
    std::string message;
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, &message, 2), 0) << message;
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [&](const metadata_view& m) { return m.all_led(topic, 1); }, 30s, {topic}));
    EXPECT_EQ(reassign_raw(cluster.port(1), "nope", 0, ids{0, 1}), 3);
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 5, ids{0, 1}), 3);
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 0, ids{0, 9}), 39) << "unregistered broker";
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 0, ids{0, 0}), 39) << "duplicate";
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 0, ids{}), 39) << "empty";
    EXPECT_EQ(reassign_raw(cluster.port(1), topic, 0, std::nullopt), 85) << "nothing to cancel";
    EXPECT_EQ(reassign_raw(cluster.port(2), topic, 0, ids{0, 1, 2}, 1, false), 38)
        << "v1 without allow_replication_factor_change";
    // CreateTopics' manual assignment: registered brokers only, each once.
    EXPECT_EQ(create_assigned(cluster.port(0), "bad-assignment", ids{0, 9}), 39);
    EXPECT_EQ(create_assigned(cluster.port(0), "bad-assignment", ids{1, 1}), 39);
    EXPECT_EQ(create_assigned(cluster.port(0), "bad-assignment", ids{}), 39);

    // The admin API: 400 for a bad id, 404 for an unknown broker, 409 with RF = brokers.
    EXPECT_EQ(cluster.http_call(0, "POST", "/v1/brokers/x/decommission").status, 400);
    EXPECT_EQ(cluster.http_call(0, "POST", "/v1/brokers/7/decommission").status, 404);
    EXPECT_EQ(cluster.http_get(0, "/v1/brokers/7/decommission").status, 404);
    EXPECT_EQ(cluster.http_call(0, "DELETE", "/v1/brokers/1/decommission").status, 404)
        << "not being decommissioned";
    ASSERT_EQ(create_topic_via(cluster.port(0), "wide", 1, 30000, &message, 3), 0) << message;
    auto conflict = cluster.http_call(0, "POST", "/v1/brokers/1/decommission");
    EXPECT_EQ(conflict.status, 409) << conflict.body;
    auto status = cluster.http_get(0, "/v1/brokers/1/decommission");
    EXPECT_EQ(status.status, 200);
    EXPECT_NE(status.body.find("\"state\":\"none\""), std::string::npos) << status.body;
}

TEST(cluster_decommission_test, test_decommission_empties_broker_3_of_4_under_a_producer) {
    cluster_options options;
    options.brokers = 4;
    cluster_harness cluster(options);
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    const std::string topic = "drained";
    std::string message;
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 4, 30000, &message, 2), 0) << message;
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [&](const metadata_view& m) { return m.all_led(topic, 4); }, 30s, {topic}));
    // Every topic's replicas on broker 3 (__consumer_offsets' too, RF 3 here) move.
    auto before = cluster.metadata(0);
    ASSERT_TRUE(before);
    int on_3 = 0;
    for (const auto& [name, t] : before->topics) {
        for (const auto& p : t.partitions) {
            on_3 += static_cast<int>(std::count(p.replicas.begin(), p.replicas.end(), 3));
        }
    }
    ASSERT_GT(on_3, 0) << "placement put nothing on broker 3: " << before->describe();

    background_producer producer(cluster.bootstrap(), topic, 4);
    ASSERT_TRUE(producer.wait_for_batches(4, 60s)) << cluster.log_tails();
    auto started = cluster.http_call(1, "POST", "/v1/brokers/3/decommission");
    ASSERT_EQ(started.status, 202) << started.body;
    auto body = nlohmann::json::parse(started.body);
    EXPECT_EQ(body["node_id"], 3);
    EXPECT_GE(body["partitions_remaining"].get<int>() + body["partitions_moving"].get<int>() +
                  body["partitions_done"].get<int>(),
              on_3)
        << started.body;

    // A topic created while broker 3 drains gets nothing on it.
    ASSERT_EQ(create_topic_via(cluster.port(0), "after", 6, 30000, &message, 2), 0) << message;
    std::string progress;
    ASSERT_TRUE(eventually(
        [&] {
            progress = cluster.http_get(2, "/v1/brokers/3/decommission").body;
            return progress.find("\"state\":\"drained\"") != std::string::npos;
        },
        90s))
        << progress << cluster.log_tails();
    auto drained = nlohmann::json::parse(progress);
    EXPECT_GE(drained["partitions_done"].get<int>(), on_3) << progress;
    EXPECT_EQ(drained["partitions_remaining"], 0) << progress;
    EXPECT_EQ(drained["partitions_moving"], 0) << progress;
    const size_t at_done = producer.batches_acked();
    EXPECT_TRUE(producer.wait_for_batches(at_done + 4, 60s)) << "the producer kept going";
    producer.stop();

    auto off_3 = [](const metadata_view& m) {
        for (const auto& [name, t] : m.topics) {
            for (const auto& p : t.partitions) {
                if (std::count(p.replicas.begin(), p.replicas.end(), 3) != 0) {
                    return false;
                }
            }
        }
        return m.topic("after") != nullptr;
    };
    metadata_view last;
    auto after = cluster.wait_for_metadata(0, off_3, 30s, {}, &last);
    ASSERT_TRUE(after) << "a replica is still on broker 3: " << last.describe();
    for (const auto& p : after->topic(topic)->partitions) {
        EXPECT_EQ(p.replicas.size(), 2u) << "the replication factor stays";
    }
    EXPECT_TRUE(eventually(
        [&] {
            for (int32_t p = 0; p < 4; ++p) {
                if (fs::exists(cluster.replica_dir(3, topic, p))) {
                    return false;
                }
            }
            return true;
        },
        30s))
        << "broker 3 still holds replicas of " << topic;
    auto missing = lost(cluster.bootstrap(), topic, producer.acked());
    EXPECT_TRUE(missing.empty()) << missing.size() << " acknowledged records lost, e.g. "
                                 << missing.front();

    // Cancel clears the mark: broker 3 may take new replicas again.
    auto cancelled = cluster.http_call(0, "DELETE", "/v1/brokers/3/decommission");
    EXPECT_EQ(cancelled.status, 200) << cancelled.body;
    EXPECT_NE(cancelled.body.find("\"state\":\"none\""), std::string::npos) << cancelled.body;
}

}  // namespace
}  // namespace spool::tests::cluster
