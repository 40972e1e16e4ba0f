// Scale, measured (label `scale`, left out of scripts/test.sh's full run like `latency`:
// minutes of work; `ctest --preset release -L scale` runs it). Each test prints its
// figures as "[ measured ]" lines (copied into broker/metadata/README.md, "Scale, measured") and
// checks the bound the issue sets where there is one.
//
//   etcd keys and bytes for 100,000 partitions: written straight into a real etcd with
//     etcd_layout's encoders, exactly the records CreateTopics and the controller write, because
//     100,000 partition logs (three files each) over three brokers on this machine would need
//     ~100,000 descriptors per broker against a hard limit of 20,000. The same figures are then
//     read off a real cluster of 10,000 partitions (the next test) to check they agree.
//   controller failover with 10,000 partitions: three real brokers, kill -9 of the controller.
//   etcd writes of a steady cluster: etcd's revision before and after 60 s of producing.

#include "broker/etcd/client.h"
#include "broker/metadata/etcd/etcd_layout.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace etcd = spool::broker::etcd;
namespace layout = spool::broker::metadata::etcd_layout;

struct key_bytes {
    size_t keys = 0;
    size_t bytes = 0;  // keys + values
};

key_bytes count(const std::vector<etcd_key>& keys) {
    key_bytes out;
    for (const auto& k : keys) {
        ++out.keys;
        out.bytes += k.key.size() + k.value.size();
    }
    return out;
}

// 1000 topics x 100 partitions, as the cluster writes them: one topic record per topic, one
// partition record per partition (leaders round robin over three brokers), 100 puts per txn.
boost::asio::awaitable<void> write_partitions(etcd::client& client, std::string prefix, int topics,
                                              int partitions, std::string* error) {
    layout::keys keys{prefix};
    for (int t = 0; t < topics; ++t) {
        auto name = "scale-topic-" + std::to_string(t);
        spool::broker::metadata::topic_record topic;
        topic.id = protocol::uuid::random();
        topic.partitions = partitions;
        auto r = co_await client.put(keys.topic(name), layout::encode(topic));
        if (!r) {
            *error = "put topic: " + r.error().message();
            co_return;
        }
        etcd::txn_request txn;
        for (int p = 0; p < partitions; ++p) {
            int32_t leader = (t * partitions + p) % 3;
            spool::broker::metadata::partition_record rec{leader, 0, 0, {leader}, {leader}};
            txn.compares.push_back(etcd::compare::absent(keys.partition(name, p)));
            txn.success.push_back(etcd::put_op{keys.partition(name, p), layout::encode(rec), 0});
        }
        auto tr = co_await client.txn(std::move(txn));
        if (!tr || !tr.value().succeeded) {
            *error = "txn: " + (tr ? std::string("compare failed") : tr.error().message());
            co_return;
        }
    }
}

TEST(cluster_scale, etcd_keys_and_bytes_for_100000_partitions) {
    etcd_process etcd_server;
    ASSERT_TRUE(etcd_server.start());
    auto before = etcdctl_status(etcd_server.endpoint());
    ASSERT_TRUE(before);
    boost::asio::io_context io;
    auto client = etcd::client::make(io.get_executor(), {{etcd_server.endpoint()}});
    std::string error;
    auto started = std::chrono::steady_clock::now();
    boost::asio::co_spawn(io, write_partitions(*client, "/spool/scale", 1000, 100, &error),
                          boost::asio::detached);
    io.run();
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    ASSERT_TRUE(error.empty()) << error;

    auto keys = etcdctl_get_prefix(etcd_server.endpoint(), "/spool/scale/");
    ASSERT_TRUE(keys);
    auto after = etcdctl_status(etcd_server.endpoint());
    ASSERT_TRUE(after);
    auto all = count(*keys);
    EXPECT_EQ(all.keys, 1000u + 100000u);
    std::cout << "[ measured ] 100,000 partitions (1000 topics x 100): " << all.keys
              << " etcd keys, " << all.bytes << " bytes of keys+values (" << all.bytes / all.keys
              << " per key); etcd db " << after->db_size << " bytes (" << after->db_size_in_use
              << " in use; empty etcd: " << before->db_size << "); written in " << took.count()
              << " ms\n";
}

TEST(cluster_scale, controller_failover_with_10000_partitions) {
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    // 100 topics x 100 partitions, ten topics per CreateTopics, through all three brokers.
    auto created = std::chrono::steady_clock::now();
    std::vector<std::thread> creators;
    std::vector<int16_t> errors(100, -1);
    for (size_t b = 0; b < 3; ++b) {
        creators.emplace_back([&, b] {
            for (int first = static_cast<int>(b) * 10; first < 100; first += 30) {
                std::vector<std::string> names;
                for (int t = first; t < first + 10 && t < 100; ++t) {
                    names.push_back("big-" + std::to_string(t));
                }
                auto e = create_topics_via(cluster.port(b), names, 100, 120000);
                for (size_t i = 0; i < e.size(); ++i) {
                    errors[first + i] = e[i];
                }
            }
        });
    }
    for (auto& t : creators) {
        t.join();
    }
    std::cout << "[ measured ] 10,000 partitions created through 3 brokers in "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - created)
                     .count()
              << " ms\n";
    for (int t = 0; t < 100; ++t) {
        ASSERT_EQ(errors[t], 0) << "big-" << t << "\n" << cluster.log_tails();
    }
    auto keys = etcdctl_get_prefix(cluster.etcd().endpoint(), cluster.prefix() + "/");
    ASSERT_TRUE(keys);
    auto all = count(*keys);
    auto status = etcdctl_status(cluster.etcd().endpoint());
    ASSERT_TRUE(status);
    std::cout << "[ measured ] a real 3-broker cluster with 10,000 partitions: " << all.keys
              << " etcd keys, " << all.bytes << " bytes of keys+values; etcd db " << status->db_size
              << " bytes\n";

    auto v = cluster.metadata(0);
    ASSERT_TRUE(v);
    int32_t old_controller = v->controller_id;
    ASSERT_GE(old_controller, 0);
    size_t moved = 0;
    for (const auto& [name, t] : v->topics) {
        for (const auto& p : t.partitions) {
            moved += p.leader == old_controller;
        }
    }
    size_t observer = old_controller == 0 ? 1 : 0;
    auto killed = std::chrono::steady_clock::now();
    cluster.kill9(static_cast<size_t>(old_controller));
    auto session = std::chrono::milliseconds(cluster.options().session_timeout_ms);
    auto elected = cluster.wait_for_metadata(observer,
                                             [&](const metadata_view& m) {
                                                 return m.controller_id >= 0 &&
                                                        m.controller_id != old_controller;
                                             },
                                             session * 3, {"__none__"});
    auto to_controller = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - killed);
    ASSERT_TRUE(elected);
    metadata_view last;
    auto moved_view = cluster.wait_for_metadata(
        observer,
        [&](const metadata_view& m) {
            for (const auto& [name, t] : m.topics) {
                for (const auto& p : t.partitions) {
                    if (p.leader == old_controller) {
                        return false;
                    }
                }
            }
            return m.topics.size() >= 100;
        },
        60s, {}, &last);
    auto to_moved = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - killed);
    ASSERT_TRUE(moved_view) << last.describe();
    std::cout << "[ measured ] controller kill -9 with 10,000 partitions (session "
              << session.count() << " ms): new controller after " << to_controller.count()
              << " ms; all " << moved << " partitions of the dead broker offline (leader -1) after "
              << to_moved.count() << " ms\n";
    EXPECT_LE(to_controller, session * 2);
}

TEST(cluster_scale, steady_cluster_makes_no_etcd_writes_per_message) {
    cluster_harness cluster;
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(create_topic_via(cluster.port(0), "steady-load", 3), 0);
    ASSERT_TRUE(cluster.wait_for_metadata(
        0, [](const metadata_view& m) { return m.all_led("steady-load", 3); }, 10s));
    // Let the startup writes (registrations, election, placement) settle.
    std::this_thread::sleep_for(2s);
    auto before = etcdctl_status(cluster.etcd().endpoint());
    ASSERT_TRUE(before);
    auto started = std::chrono::steady_clock::now();
    size_t messages = 0;
    std::vector<std::string> batch(2000);
    for (size_t i = 0; i < batch.size(); ++i) {
        batch[i] = "m" + std::to_string(i);
    }
    int round = 0;
    while (std::chrono::steady_clock::now() - started < 60s) {
        std::string out;
        ASSERT_TRUE(kcat_produce(cluster.bootstrap(), "steady-load", round++ % 3, batch, {}, &out))
            << out;
        messages += batch.size();
    }
    auto after = etcdctl_status(cluster.etcd().endpoint());
    ASSERT_TRUE(after);
    auto delta = after->revision - before->revision;
    std::cout << "[ measured ] steady cluster, 60 s, " << messages
              << " messages produced through 3 brokers: etcd revision +" << delta << " ("
              << double(delta) / double(messages) << " per message; lease keep-alives are not "
              << "revisions)\n";
    EXPECT_EQ(delta, 0);
}

}  // namespace
}  // namespace spool::tests::cluster
