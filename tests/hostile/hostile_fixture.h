#pragma once

// One real spool-broker process per test, with the overrides the test needs, a topic for the
// well-behaved client, and enough file descriptors in the test process for a thousand sockets.

#include "protocol/messages/create_topics.h"
#include "tests/hostile/latency_probe.h"
#include "tests/hostile/process_stats.h"
#include "tests/hostile/raw_socket.h"
#include "tests/hostile/read_only_sink.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

namespace spool::tests::hostile {

inline void raise_fd_limit() {
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
}

class hostile_test : public ::testing::Test {
protected:
    static constexpr const char* good_topic = "good";

    // Starts the broker (the spawned process inherits the raised fd limit).
    void start(std::vector<std::string> overrides = {}) {
        raise_fd_limit();
        rlimit r{};
        ::getrlimit(RLIMIT_NOFILE, &r);
        ASSERT_GE(r.rlim_cur, 4096u) << "the test needs fds for its hostile sockets";
        broker = std::make_unique<broker_process>();
        if (plain_port != 0) {
            broker->set_port(plain_port);
        }
        broker->add_override("group.initial.rebalance.delay.ms=0");
        for (auto& o : overrides) {
            broker->add_override(std::move(o));
        }
        ASSERT_TRUE(broker->start()) << broker->log_text();
        kafka_client c(broker->port());
        c.set_read_timeout(std::chrono::seconds(10));
        protocol::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = good_topic;
        t.num_partitions = 1;
        t.replication_factor = 1;
        req.timeout_ms = 5000;
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        ASSERT_TRUE(resp);
        ASSERT_EQ(resp->topics.at(0).error_code, 0);
        // Let start-up settle (coordinator load, first metadata) before baselines are taken.
        measure_latency(port(), good_topic, 20, std::chrono::milliseconds(1));
    }

    void TearDown() override {
        if (broker) {
            EXPECT_TRUE(broker->running()) << "the broker died during the test:\n"
                                           << broker->log_text();
            broker->stop();
        }
    }

    uint16_t port() const { return broker->port(); }
    pid_t pid() const { return broker->pid(); }

    latency_stats baseline() {
        auto b = measure_latency(port(), good_topic, 300, std::chrono::milliseconds(2));
        EXPECT_EQ(b.answered, b.sent);
        return b;
    }

    std::unique_ptr<broker_process> broker;
    // The PLAINTEXT listener's port; 0: any free one. Set before start() by tests whose
    // overrides name the listeners.
    uint16_t plain_port = 0;
};

}  // namespace spool::tests::hostile
