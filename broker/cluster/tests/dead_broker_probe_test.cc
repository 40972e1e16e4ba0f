// Telling a dead broker from a paused one by its port (dead_broker_probe.h): the pure rules, and
// probes against real sockets on loopback: a closed port ends the session, a listening one (a
// paused process's port still accepts) does not.

#include "broker/cluster/dead_broker_probe.h"

#include "broker/metadata/tests/fake_store.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <gtest/gtest.h>

#include <thread>

namespace spool::broker::cluster {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

metadata::broker_registration registered(int32_t node, int64_t lease, int32_t port) {
    metadata::broker_registration b;
    b.node_id = node;
    b.incarnation_id = "inc-" + std::to_string(node);
    b.lease = lease;
    b.endpoints.push_back({"PLAINTEXT", "127.0.0.1", port, "PLAINTEXT"});
    return b;
}

TEST(dead_broker_probe_rules, test_only_a_refused_connect_is_evidence_of_death) {
    EXPECT_EQ(classify_connect({}), connect_outcome::accepted);
    EXPECT_EQ(classify_connect(asio::error::connection_refused), connect_outcome::refused);
    // A paused process's full backlog, a partitioned network, a vanished host: no evidence.
    EXPECT_EQ(classify_connect(asio::error::timed_out), connect_outcome::inconclusive);
    EXPECT_EQ(classify_connect(asio::error::host_unreachable), connect_outcome::inconclusive);
    EXPECT_EQ(classify_connect(asio::error::network_unreachable), connect_outcome::inconclusive);
    EXPECT_EQ(classify_connect(asio::error::operation_aborted), connect_outcome::inconclusive);
}

TEST(dead_broker_probe_rules, test_session_to_end_only_of_the_registration_judged) {
    metadata::cluster_state s;
    s.brokers.emplace(1, registered(1, 0x11, 9092));
    s.brokers.emplace(2, registered(2, 0x22, 9093));
    auto fenced = registered(3, 0x33, 9094);
    fenced.fenced = true;
    s.brokers.emplace(3, fenced);

    EXPECT_EQ(session_to_end(s, 2, 1), 0x22);
    EXPECT_EQ(session_to_end(s, 2, 1, 0x22), 0x22);
    // Registered again since the probe began: a new process, not the one found dead.
    EXPECT_EQ(session_to_end(s, 2, 1, 0x99), std::nullopt);
    // Never this broker itself, nor one already gone.
    EXPECT_EQ(session_to_end(s, 1, 1), std::nullopt);
    EXPECT_EQ(session_to_end(s, 7, 1), std::nullopt);
    EXPECT_EQ(session_to_end(s, -1, 1), std::nullopt);
    // A fenced (just restarted) broker leads nothing, and may not listen yet.
    EXPECT_EQ(session_to_end(s, 3, 1), std::nullopt);
}

class dead_broker_probe_test : public ::testing::Test {
protected:
    void SetUp() override {
        pool = std::make_unique<runtime::shard_pool>(1);
        pool->start();
    }
    void TearDown() override {
        if (probe) {
            probe->stop();
        }
        pool->stop();
    }

    void make_probe() {
        probe = std::make_unique<dead_broker_probe>(
            store, pool->executor(0),
            dead_broker_probe_options{.self = 1, .listener = "", .interval = 20ms});
    }

    // Polls until `n` sessions were ended, or 3 s passed.
    bool ended(uint64_t n) {
        for (int i = 0; i < 300 && probe->sessions_ended() < n; ++i) {
            std::this_thread::sleep_for(10ms);
        }
        return probe->sessions_ended() >= n;
    }

    metadata::testing::fake_store store;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<dead_broker_probe> probe;
};

// A port that refuses: bound once, then closed.
int32_t closed_port() {
    asio::io_context io;
    tcp::acceptor a(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    return a.local_endpoint().port();
}

TEST_F(dead_broker_probe_test, test_a_refusing_port_ends_the_brokers_session) {
    auto s = store.copy();
    s.brokers.emplace(1, registered(1, 0x11, 1));
    s.brokers.emplace(2, registered(2, 0x22, closed_port()));
    store.set(s);
    make_probe();
    probe->listener()(2);
    EXPECT_TRUE(ended(1));
    // Suspecting itself, or a broker not registered, does nothing.
    probe->suspect(1);
    probe->suspect(9);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(probe->sessions_ended(), 1u);
}

TEST_F(dead_broker_probe_test, test_a_listening_port_is_alive_even_when_nothing_answers) {
    // Like a SIGSTOPped broker: the kernel completes connects to its listening socket, though
    // the process accepts nothing.
    asio::io_context io;
    tcp::acceptor paused(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    auto s = store.copy();
    s.brokers.emplace(2, registered(2, 0x22, paused.local_endpoint().port()));
    auto fenced = registered(3, 0x33, closed_port());
    fenced.fenced = true;
    s.brokers.emplace(3, fenced);
    store.set(s);
    make_probe();
    for (int i = 0; i < 3; ++i) {
        probe->suspect(2);
        probe->suspect(3);
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_FALSE(ended(1));
}

TEST_F(dead_broker_probe_test, test_a_stopped_probe_probes_nothing) {
    auto s = store.copy();
    s.brokers.emplace(2, registered(2, 0x22, closed_port()));
    store.set(s);
    make_probe();
    auto lost = probe->listener();
    probe->stop();
    lost(2);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(probe->sessions_ended(), 0u);
    probe.reset();
    lost(2);  // the fetchers may outlive the probe: nothing to reach, nothing done
}

}  // namespace
}  // namespace spool::broker::cluster
