// Hostile clients against connection lifetimes: long polls and parked group requests whose
// clients go away, reconnect storms, and the connection limits. A closed connection must give
// back its fd, pending work and memory within a second, and every parked request an answer.

#include "protocol/messages/api_versions.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/sync_group.h"
#include "tests/hostile/hostile_fixture.h"

#include <atomic>
#include <cstdio>
#include <thread>
#include <tuple>
#include <vector>

namespace spool::tests::hostile {
namespace {

using namespace std::chrono_literals;
namespace pr = spool::protocol;

std::vector<uint8_t> long_poll_fetch() {
    pr::fetch_request req;
    req.max_wait_ms = INT32_MAX;  // accepted, as by Kafka
    req.min_bytes = 1;
    req.max_bytes = 1 << 20;
    req.session_epoch = -1;
    auto& t = req.topics.emplace_back();
    t.topic = "good";
    auto& p = t.partitions.emplace_back();
    p.partition = 0;
    p.fetch_offset = 0;  // the topic is empty: the fetch waits for data
    p.partition_max_bytes = 1 << 20;
    return pr::encode_request(7, "hostile", 11, req);
}

TEST_F(hostile_test, test_closed_long_poll_fetches_release_their_fds_within_a_second) {
    start();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    auto frame = long_poll_fetch();
    std::vector<raw_socket> polls;
    for (int i = 0; i < 300; ++i) {
        raw_socket s(port());
        ASSERT_TRUE(s.valid());
        ASSERT_EQ(s.send(frame), frame.size());
        polls.push_back(std::move(s));
    }
    // fds_before may still count a closing client; on a loaded machine accepting takes a while.
    ASSERT_GE(time_until_fds_at_least(pid(), fds_before + 295, 5000ms).count(), 0)
        << fd_count(pid()) << " descriptors, " << fds_before << " before the 300 fetches";
    std::this_thread::sleep_for(300ms);  // every fetch read and parked
    int64_t fds_held = fd_count(pid());
    EXPECT_FALSE(polls.front().readable_within(0)) << "the fetch should be waiting";
    polls.clear();
    auto back = time_until_fds_at_most(pid(), fds_before, 5000ms);
    std::printf("300 closed long polls: fds %lld -> %lld -> back in %lld ms; RSS %lld -> %lld MB\n",
                (long long)fds_before, (long long)fds_held, (long long)back.count(),
                (long long)rss_before, (long long)rss_mb(pid()));
    EXPECT_GE(back.count(), 0) << "fds did not return to " << fds_before;
    EXPECT_LE(back, 1000ms);
}

struct member {
    std::string id;
    int32_t generation = -1;
    bool leader = false;
};

pr::join_group_request join_req(const std::string& member_id) {
    pr::join_group_request r;
    r.group_id = "hostile-group";
    r.session_timeout_ms = 30000;
    r.rebalance_timeout_ms = 30000;
    r.member_id = member_id;
    r.protocol_type = "consumer";
    auto& p = r.protocols.emplace_back();
    p.name = "range";
    p.metadata = {0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};  // no topics, null user data
    return r;
}

std::optional<member> read_join(kafka_client& c) {
    auto r = c.receive<pr::join_group_response>(3);
    if (!r || r->error_code != 0) {
        return std::nullopt;
    }
    return member{r->member_id, r->generation_id, r->leader == r->member_id};
}

pr::sync_group_request sync_req(const member& m,
                                std::vector<std::pair<std::string, uint8_t>> assignments = {}) {
    pr::sync_group_request r;
    r.group_id = "hostile-group";
    r.generation_id = m.generation;
    r.member_id = m.id;
    for (auto& [id, byte] : assignments) {
        r.assignments.push_back({id, {byte}, {}});
    }
    return r;
}

TEST_F(hostile_test, test_duplicate_sync_group_of_a_member_answers_both_requests) {
    start();
    // A forms the group alone and becomes its leader.
    kafka_client a(port());
    a.set_read_timeout(5s);
    a.send(3, join_req(""));
    auto am = read_join(a);
    ASSERT_TRUE(am && am->leader);
    auto s =
        a.call<pr::sync_group_request, pr::sync_group_response>(3, sync_req(*am, {{am->id, 1}}));
    ASSERT_TRUE(s && s->error_code == 0);
    // B joins; the rebalance completes when A rejoins.
    kafka_client b1(port());
    b1.set_read_timeout(5s);
    b1.send(3, join_req(""));
    std::this_thread::sleep_for(200ms);
    a.send(3, join_req(am->id));
    am = read_join(a);
    auto bm = read_join(b1);
    ASSERT_TRUE(am && bm);
    ASSERT_EQ(am->generation, bm->generation);
    // B's SyncGroup parks (the leader has not sent the assignment); B sends it again on a new
    // connection, as a client that gave up on the first would.
    b1.send(3, sync_req(*bm));
    std::this_thread::sleep_for(200ms);
    kafka_client b2(port());
    b2.set_read_timeout(5s);
    b2.send(3, sync_req(*bm));
    auto first = b1.receive<pr::sync_group_response>(3);
    ASSERT_TRUE(first) << "the older SyncGroup was never answered";
    EXPECT_EQ(first->error_code, 27);  // REBALANCE_IN_PROGRESS
    auto ls = a.call<pr::sync_group_request, pr::sync_group_response>(
        3, sync_req(*am, {{am->id, 1}, {bm->id, 2}}));
    ASSERT_TRUE(ls && ls->error_code == 0);
    auto second = b2.receive<pr::sync_group_response>(3);
    ASSERT_TRUE(second) << "the newer SyncGroup was never answered";
    EXPECT_EQ(second->error_code, 0);
    EXPECT_EQ(second->assignment, std::vector<uint8_t>{2});
}

TEST_F(hostile_test, test_closed_parked_join_group_releases_its_connection) {
    start();
    kafka_client a(port());
    a.set_read_timeout(5s);
    a.send(3, join_req(""));
    auto am = read_join(a);
    ASSERT_TRUE(am);
    int64_t fds_before = fd_count(pid());
    std::vector<std::unique_ptr<kafka_client>> parked;
    for (int i = 0; i < 50; ++i) {
        parked.push_back(std::make_unique<kafka_client>(port()));
        parked.back()->send(3, join_req(""));  // parks until A rejoins (30 s rebalance timeout)
    }
    // Every connection accepted (on a loaded machine the last ones came after 300 ms). fds_before
    // may count a descriptor the broker held only for a moment (CI once saw 49 of 50 more, for
    // 5 s): allow a few, as the long-poll test does.
    ASSERT_GE(time_until_fds_at_least(pid(), fds_before + 47, 5000ms).count(), 0)
        << fd_count(pid()) << " descriptors, " << fds_before << " before the 50 connections";
    std::this_thread::sleep_for(300ms);  // and every JoinGroup read and parked
    parked.clear();
    auto back = time_until_fds_at_most(pid(), fds_before, 5000ms);
    std::printf("50 closed parked JoinGroups: fds back in %lld ms\n", (long long)back.count());
    EXPECT_GE(back.count(), 0) << "fds did not return to " << fds_before;
    EXPECT_LE(back, 1000ms);
}

// Two threads connecting to the port aimed at about 1,000 times a second each (at most 7,000
// connections per thread), until the object goes: connect and go; send a request and go without
// reading the answer; send half a frame and reset. Paced: the test shares two cores with the
// broker, and an unpaced loop measures the machine's scheduler, not the broker.
class reconnect_storm {
public:
    // Counts the connections made to `broker_port`, where it aims first.
    explicit reconnect_storm(uint16_t broker_port) : _broker_port(broker_port), _port(broker_port) {
        for (int t = 0; t < 2; ++t) {
            _threads.emplace_back([this, t] { run(t); });
        }
    }
    ~reconnect_storm() {
        _stop = true;
        for (auto& th : _threads) {
            th.join();
        }
    }
    void aim(uint16_t port) { _port = port; }
    uint64_t connections() const { return _connections; }

private:
    void run(int t) {
        auto versions = pr::encode_request(1, "storm", 3, pr::api_versions_request{});
        for (int i = 0; i < 7000 && !_stop; ++i) {
            std::this_thread::sleep_for(1ms);
            uint16_t port = _port;
            raw_socket s(port);
            if (!s.valid()) {
                continue;
            }
            if (port == _broker_port) {
                ++_connections;
            }
            switch ((i + t) % 3) {
                case 0:  // connect and go
                    break;
                case 1:  // a request, then away without reading the answer
                    s.send(versions);
                    break;
                case 2:  // half a frame, then a reset
                    s.send(versions.data(), versions.size() / 2);
                    s.reset();
                    break;
            }
        }
    }
    const uint16_t _broker_port;
    std::atomic<uint16_t> _port;
    std::atomic<bool> _stop{false};
    std::atomic<uint64_t> _connections{0};
    std::vector<std::thread> _threads;
};

TEST_F(hostile_test, test_reconnect_storm_leaves_nothing_behind) {
    start();
    auto base = baseline();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    read_only_sink sink;
    latency_stats control;
    latency_stats during;
    uint64_t connections = 0;
    int64_t peak_mb = 0;
    {
        reconnect_storm storm(port());
        rss_sampler sampler(pid());
        std::tie(control, during) = measure_against_control(
            port(), good_topic, 6, 100, 5ms,
            [&](bool at_broker) { storm.aim(at_broker ? port() : sink.port()); });
        sampler.stop();
        peak_mb = sampler.peak_mb();
        connections = storm.connections();
    }
    auto back = time_until_fds_at_most(pid(), fds_before, 3000ms);
    std::printf(
        "reconnect storm: %llu connections, RSS %lld -> peak %lld MB, fds back in %lld ms; "
        "p99 %.3f ms (baseline %.3f ms, control %.3f ms: bound %.3f ms at load %.2f per core)\n",
        (unsigned long long)connections, (long long)rss_before, (long long)peak_mb,
        (long long)back.count(), during.p99_ms, base.p99_ms, control.p99_ms,
        allowed_p99_ms(base, control), load_per_core());
    EXPECT_GT(connections, 1000u);
    EXPECT_LT(peak_mb - rss_before, 48);
    EXPECT_EQ(during.answered, during.sent);
    SPOOL_EXPECT_P99_WITHIN("reconnect storm", during.p99_ms, allowed_p99_ms(base, control));
    std::printf("reconnect storm: slowest %s\n", during.slowest.c_str());
    EXPECT_GE(back.count(), 0) << "fds did not return to " << fds_before;
    EXPECT_LE(back, 1000ms);
}

bool answers_api_versions(raw_socket& s, int ms) {
    auto frame = pr::encode_request(1, "quota", 3, pr::api_versions_request{});
    return s.send(frame) == frame.size() && s.readable_within(ms);
}

TEST_F(hostile_test, test_connection_beyond_max_connections_per_ip_is_closed) {
    start({"max.connections.per.ip=10"});
    std::vector<raw_socket> held;
    std::this_thread::sleep_for(200ms);  // start()'s own connections are gone by then
    for (int i = 0; i < 10; ++i) {
        raw_socket s(port());
        ASSERT_TRUE(answers_api_versions(s, 2000)) << "connection " << i;
        held.push_back(std::move(s));
    }
    raw_socket over(port());
    ASSERT_TRUE(over.valid());
    EXPECT_TRUE(over.closed_by_peer(2000));
    held.pop_back();
    std::this_thread::sleep_for(200ms);
    raw_socket again(port());
    EXPECT_TRUE(answers_api_versions(again, 2000)) << "a freed slot is usable again";
}

TEST_F(hostile_test, test_connection_beyond_max_connections_waits_for_a_free_slot) {
    start({"max.connections=10"});
    std::this_thread::sleep_for(200ms);  // start()'s own connections are gone by then
    std::vector<raw_socket> held;
    for (int i = 0; i < 10; ++i) {
        raw_socket s(port());
        ASSERT_TRUE(answers_api_versions(s, 2000)) << "connection " << i;
        held.push_back(std::move(s));
    }
    raw_socket waiting(port());  // completes in the listen backlog, not accepted yet
    ASSERT_TRUE(waiting.valid());
    EXPECT_FALSE(answers_api_versions(waiting, 500)) << "an 11th connection was served";
    held.pop_back();
    EXPECT_TRUE(waiting.readable_within(2000)) << "the waiting connection was never accepted";
}

}  // namespace
}  // namespace spool::tests::hostile
