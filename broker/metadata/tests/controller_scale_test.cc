// Measurements of the controller on the real etcd here (printed; the bounds are the issue's):
// etcd keys and bytes per partition, and a controller failover with 10,000 partitions of which
// a third (those the lost controller led) need a leader move.

#include "broker/metadata/tests/controller_cluster.h"

#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <future>
#include <iostream>

namespace spool::broker::metadata {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::leader_counts;
using testing::member;
using testing::test_session_timeout;
using clock = std::chrono::steady_clock;

double ms_since(clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
}

class controller_scale_test : public testing::controller_cluster_test {
protected:
    // topics x partitions created from `via`, `parallel` creates at a time.
    void create_many(member& via, int topics, int32_t partitions, int parallel = 10) {
        for (int first = 0; first < topics; first += parallel) {
            std::vector<std::future<std::error_code>> wave;
            for (int t = first; t < std::min(topics, first + parallel); ++t) {
                wave.push_back(create_async(via, "topic-" + std::to_string(t), partitions,
                                            static_cast<size_t>(t)));
            }
            for (auto& f : wave) {
                ASSERT_EQ(f.wait_for(120s), std::future_status::ready);
                auto ec = f.get();
                ASSERT_FALSE(ec) << ec.message();
            }
        }
    }
};

TEST_F(controller_scale_test, test_failover_with_10000_partitions_a_third_moving) {
    change_timeout = 60s;
    auto members = start_with_controller_first(3);
    ASSERT_EQ(members.size(), 3u);
    auto& a = members[0];
    auto& b = members[1];
    auto& c = members[2];

    auto t0 = clock::now();
    create_many(*b, 100, 100);
    const double placing = ms_since(t0);
    auto placed = leader_counts(*b->snapshot());
    ASSERT_EQ(placed[0] + placed[1] + placed[2], 10000);
    EXPECT_LE(
        std::max({placed[0], placed[1], placed[2]}) - std::min({placed[0], placed[1], placed[2]}),
        1);

    // What 10,000 partitions (and 100 topics) take in etcd.
    auto all = raw->run(raw->client().get_prefix(b->store->keys().all()));
    ASSERT_TRUE(all);
    // Keys are counted beyond the prefix (this test's is long) plus the default "/spool/default".
    const std::string prefix = b->store->keys().prefix;
    const size_t default_prefix = std::string_view("/spool/default").size();
    size_t partition_keys = 0;
    size_t partition_key_bytes = 0;
    size_t partition_value_bytes = 0;
    size_t total_bytes = 0;
    for (const auto& kv : all.value().kvs) {
        const size_t key_bytes = kv.key.size() - prefix.size() + default_prefix;
        total_bytes += key_bytes + kv.value.size();
        if (kv.key.starts_with(prefix + "/partitions/")) {
            ++partition_keys;
            partition_key_bytes += key_bytes;
            partition_value_bytes += kv.value.size();
        }
    }
    EXPECT_EQ(partition_keys, 10000u);

    // Broker 0, the controller and leader of a third, is lost: stopped and its session revoked
    // (what etcd does once its lease expires after a kill -9).
    const int32_t moving = placed[0];
    a->freeze();
    t0 = clock::now();
    ASSERT_TRUE(raw->run(raw->client().revoke_lease(a->store->lease_id())));
    double elected = -1;
    ASSERT_TRUE(eventually(
        [&] {
            if (elected < 0 && (b->epoch() != 0 || c->epoch() != 0)) {
                elected = ms_since(t0);
            }
            for (member* m : {b.get(), c.get()}) {
                auto s = m->snapshot();
                if (s->controller_id < 1 || leader_counts(*s)[-1] != moving) {
                    return false;
                }
            }
            return true;
        },
        2 * test_session_timeout));
    const double moved = ms_since(t0);
    EXPECT_LT(moved, 2.0 * static_cast<double>(test_session_timeout.count()));
    for (const auto& [name, topic] : c->snapshot()->topics) {
        for (const auto& p : topic.partitions) {
            EXPECT_NE(p.leader, 0);
            EXPECT_EQ(p.leader_epoch, p.leader == -1 ? 1 : 0);
        }
    }

    std::cout << "10000 partitions (100 topics) placed in " << placing << " ms; etcd holds "
              << all.value().kvs.size() << " keys, " << total_bytes
              << " bytes of keys and values with prefix /spool/default; a partition record: key "
              << partition_key_bytes / partition_keys << " + value "
              << partition_value_bytes / partition_keys << " bytes\n"
              << "controller lost -> successor elected in " << elected << " ms, all " << moving
              << " leader moves visible in " << moved << " ms\n";
}

}  // namespace
}  // namespace spool::broker::metadata
