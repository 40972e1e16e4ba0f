// Controlled shutdown against real brokers (a real etcd, three spool-broker processes): SIGTERM
// of a partition's leader hands the leadership to another in-sync replica while the process
// still runs, so a producer that follows Metadata sees NOT_LEADER_OR_FOLLOWER for well under a
// second, not for the leader's drain plus the cluster noticing it left.

#include "tests/cluster/cluster_fixture.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

class cluster_shutdown_test : public started_cluster {};

struct attempt {
    clock::time_point at;
    int16_t error = 0;
};

// The longest stretch from a failed produce to the next success (0 when none failed).
std::chrono::milliseconds longest_failure_window(const std::vector<attempt>& attempts) {
    std::chrono::milliseconds longest{0};
    std::optional<clock::time_point> first_failure;
    for (const auto& a : attempts) {
        if (a.error != 0) {
            if (!first_failure) {
                first_failure = a.at;
            }
        } else if (first_failure) {
            longest = std::max(longest, std::chrono::duration_cast<std::chrono::milliseconds>(
                                            a.at - *first_failure));
            first_failure.reset();
        }
    }
    return longest;
}

TEST_F(cluster_shutdown_test, test_sigterm_of_a_leader_hands_leadership_over_before_it_exits) {
    std::string message;
    ASSERT_EQ(create_topic_via(cluster.port(0), "handover", 1, 30000, &message, 3), 0) << message;
    auto placed = cluster.wait_for_metadata(0,
                                            [](const metadata_view& v) {
                                                const auto* t = v.topic("handover");
                                                return t != nullptr && t->error == 0 &&
                                                       t->partitions.size() == 1 &&
                                                       t->partitions[0].leader >= 0 &&
                                                       t->partitions[0].isr.size() == 3;
                                            },
                                            15s, {"handover"});
    ASSERT_TRUE(placed) << cluster.log_tails();
    const int32_t old_leader = placed->topic("handover")->partitions[0].leader;
    const auto victim = static_cast<size_t>(old_leader);  // broker i has node id i
    const size_t observer = (victim + 1) % cluster.size();

    // A producer following Metadata (from a broker that stays), as a client retrying would.
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::vector<attempt> attempts;
    std::thread producer([&] {
        int32_t leader = old_leader;
        for (int i = 0; !stop && i < 100000; ++i) {
            auto err = produce_via(cluster.port(static_cast<size_t>(leader)), "handover", 0,
                                   {"r" + std::to_string(i)}, /*acks=*/1);
            {
                std::lock_guard lock(mutex);
                attempts.push_back({clock::now(), err});
            }
            if (err != 0) {
                std::this_thread::sleep_for(20ms);  // a client's retry backoff
                if (auto md = cluster.metadata(observer, {"handover"})) {
                    if (const auto* t = md->topic("handover");
                        t != nullptr && !t->partitions.empty() && t->partitions[0].leader >= 0) {
                        leader = t->partitions[0].leader;
                    }
                }
            }
        }
    });
    // A failed ASSERT below must not leave the thread running (std::terminate).
    struct stop_and_join {
        std::atomic<bool>& stop;
        std::thread& thread;
        ~stop_and_join() {
            stop = true;
            if (thread.joinable()) {
                thread.join();
            }
        }
    } guard{stop, producer};
    auto successes = [&] {
        std::lock_guard lock(mutex);
        return std::count_if(attempts.begin(), attempts.end(),
                             [](const attempt& a) { return a.error == 0; });
    };
    const auto warm_up = clock::now() + 10s;
    while (successes() < 20 && clock::now() < warm_up) {
        std::this_thread::sleep_for(10ms);
    }
    ASSERT_GE(successes(), 20) << cluster.log_tails();

    const auto sigterm_at = clock::now();
    ASSERT_EQ(::kill(cluster.broker(victim).pid(), SIGTERM), 0);
    // The other brokers show a new leader, from the ISR, while the old one still runs.
    bool moved_while_running = false;
    std::optional<partition_info> moved;
    auto moved_at = clock::now();
    while (clock::now() - sigterm_at < 20s) {
        if (auto md = cluster.metadata(observer, {"handover"})) {
            const auto* t = md->topic("handover");
            if (t != nullptr && !t->partitions.empty() && t->partitions[0].leader >= 0 &&
                t->partitions[0].leader != old_leader) {
                moved_at = clock::now();
                moved_while_running = cluster.broker(victim).running();
                moved = t->partitions[0];
                break;
            }
        }
        std::this_thread::sleep_for(10ms);
    }
    auto stopped = cluster.sigterm(victim);  // waits for the exit (the signal is already pending)
    const auto exited_at = clock::now();
    std::this_thread::sleep_for(500ms);  // the producer settles on the new leader
    stop = true;
    producer.join();

    ASSERT_TRUE(moved) << "the leadership never moved off broker " << old_leader << "\n"
                       << cluster.log_tails();
    EXPECT_TRUE(moved_while_running) << "the leadership moved only after the process exited";
    EXPECT_TRUE(stopped.exited && stopped.status == 0) << stopped.status;
    EXPECT_EQ(std::count(moved->isr.begin(), moved->isr.end(), old_leader), 0)
        << "the leaving broker is out of the ISR";
    EXPECT_EQ(moved->isr.size(), 2u);
    const auto window = longest_failure_window(attempts);
    const auto failures = std::count_if(attempts.begin(), attempts.end(),
                                        [](const attempt& a) { return a.error != 0; });
    auto ms = [](clock::duration d) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    };
    std::cout << "controlled shutdown of leader " << old_leader << ": leader " << moved->leader
              << " after " << ms(moved_at - sigterm_at) << " ms, process exited after "
              << ms(exited_at - sigterm_at) << " ms; " << attempts.size() << " produce attempts, "
              << failures << " failed, longest NOT_LEADER window " << window.count() << " ms\n";
    EXPECT_LT(window, 1000ms);
    EXPECT_GT(successes(), 20);
}

}  // namespace
}  // namespace spool::tests::cluster
