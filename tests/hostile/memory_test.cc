// Hostile clients against memory: requests that expand, frames that claim more than they send,
// and slow trickles of maximum-size frames. Each asserts the broker's RSS stays bounded, its
// fds come back, and a well-behaved client keeps its latency.

#include "tests/hostile/hostile_fixture.h"

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace spool::tests::hostile {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t max_frame = 104857600;  // socket.request.max.bytes default

// DescribeGroups v5 naming `groups` empty group ids: one byte each on the wire.
std::vector<uint8_t> describe_empty_groups(uint32_t groups) {
    std::vector<uint8_t> body = {0, 15, 0, 5, 0, 0, 0, 1, 0, 0, 0};  // header v2, null-free id ""
    uint64_t n = uint64_t(groups) + 1;
    while (n >= 0x80) {
        body.push_back(uint8_t(n | 0x80));
        n >>= 7;
    }
    body.push_back(uint8_t(n));
    body.insert(body.end(), groups, uint8_t(1));  // compact string of length 0
    body.push_back(0);                            // include_authorized_operations
    body.push_back(0);                            // tagged fields
    auto frame = be32(static_cast<uint32_t>(body.size()));
    frame.insert(frame.end(), body.begin(), body.end());
    return frame;
}

TEST_F(hostile_test, test_describe_groups_naming_millions_of_groups_keeps_rss_bounded) {
    start();
    int64_t before = rss_mb(pid());
    rss_sampler sampler(pid());
    raw_socket s(port());
    ASSERT_TRUE(s.valid());
    auto frame = describe_empty_groups(5'000'000);
    ASSERT_EQ(s.send(frame), frame.size());
    // Refused (connection closed) or answered: either way within the bound, and soon.
    auto start_wait = std::chrono::steady_clock::now();
    bool ended = s.readable_within(60'000);
    auto took = std::chrono::steady_clock::now() - start_wait;
    sampler.stop();
    int64_t growth = sampler.peak_mb() - before;
    std::printf("describe 5M groups: RSS %lld MB -> peak %lld MB (+%lld), ended after %lld ms\n",
                (long long)before, (long long)sampler.peak_mb(), (long long)growth,
                (long long)std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
    EXPECT_TRUE(ended);
    EXPECT_LT(growth, 160) << "a 5 MB request may take a small multiple of its size";
    EXPECT_LT(took, 5s);
    // The broker still serves everyone else.
    auto after = measure_latency(port(), good_topic, 20, 1ms);
    EXPECT_EQ(after.answered, after.sent);
}

TEST_F(hostile_test, test_thousand_connections_declaring_huge_frames_hold_no_memory) {
    start();
    auto base = baseline();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    std::vector<raw_socket> hostile;
    auto claim = be32(max_frame);
    for (int i = 0; i < 1000; ++i) {
        raw_socket s(port());
        ASSERT_TRUE(s.valid()) << "connection " << i;
        ASSERT_EQ(s.send(claim), 4u);
        const uint8_t some[16] = {0, 3, 0, 2};
        s.send(some, sizeof some);
        hostile.push_back(std::move(s));
    }
    std::this_thread::sleep_for(500ms);
    int64_t rss_held = rss_mb(pid());
    int64_t fds_held = fd_count(pid());
    auto during = measure_latency(port(), good_topic, 300, 2ms);
    hostile.clear();
    auto back = time_until_fds_at_most(pid(), fds_before, 3000ms);
    std::printf(
        "1000 x 100 MiB claims: RSS %lld -> %lld MB, fds %lld -> %lld -> back in %lld ms; "
        "p99 %.3f ms (baseline %.3f ms: bound %.3f ms at load %.2f per core)\n",
        (long long)rss_before, (long long)rss_held, (long long)fds_before, (long long)fds_held,
        (long long)back.count(), during.p99_ms, base.p99_ms, allowed_p99_ms(base), load_per_core());
    EXPECT_GE(fds_held, fds_before + 990);  // fds_before may still count a closing probe
    EXPECT_LT(rss_held - rss_before, 48) << "claimed bytes must not be allocated";
    EXPECT_EQ(during.answered, during.sent);
    SPOOL_EXPECT_P99_WITHIN("1000 x 100 MiB claims", during.p99_ms, allowed_p99_ms(base));
    std::printf("1000 x 100 MiB claims: slowest %s\n", during.slowest.c_str());
    EXPECT_GE(back.count(), 0) << "fds did not return to " << fds_before;
    EXPECT_LE(back, 1000ms);
}

// 32 connections to the broker and 32 to the control server, each declaring a maximum-size
// frame; one thread offers 128 KiB every 50 ms to each connection of the side aimed at (2.5 MB/s
// each, 80 MB/s in all), until the object goes.
class slow_trickle {
public:
    slow_trickle(uint16_t broker_port, uint16_t control_port)
        : _broker(open(broker_port)), _control(open(control_port)) {
        _thread = std::thread([this] { run(); });
    }
    ~slow_trickle() { stop(); }
    void aim(bool at_broker) { _at_broker = at_broker; }
    uint64_t sent_to_broker_mb() const { return _sent / (1024 * 1024); }
    // Stops the trickle and closes the broker's connections.
    void close_broker_side() {
        stop();
        _broker.clear();
    }

private:
    void stop() {
        _stop = true;
        if (_thread.joinable()) {
            _thread.join();
        }
    }
    static std::vector<raw_socket> open(uint16_t port) {
        std::vector<raw_socket> out;
        for (int i = 0; i < 32; ++i) {
            raw_socket s(port);
            EXPECT_TRUE(s.valid());
            s.send(be32(max_frame));
            s.set_non_blocking();
            out.push_back(std::move(s));
        }
        return out;
    }
    void run() {
        std::vector<uint8_t> chunk(128 * 1024, 0x5a);
        while (!_stop) {
            bool at_broker = _at_broker;
            for (auto& s : at_broker ? _broker : _control) {
                size_t n = s.send(chunk);
                if (at_broker) {
                    _sent += n;
                }
            }
            std::this_thread::sleep_for(50ms);
        }
    }
    std::vector<raw_socket> _broker;
    std::vector<raw_socket> _control;
    std::atomic<bool> _stop{false};
    std::atomic<bool> _at_broker{false};
    std::atomic<uint64_t> _sent{0};
    std::thread _thread;
};

TEST_F(hostile_test, test_slow_trickle_of_maximum_size_frames_is_held_to_the_byte_budget) {
    // 32 MiB over the broker's two shards: one 100 MiB frame per shard is read at a time.
    start({"queued.max.request.bytes=33554432"});
    auto base = baseline();
    int64_t fds_before = fd_count(pid());
    int64_t rss_before = rss_mb(pid());
    // The control server reads two connections at a time, as the budget lets the broker.
    read_only_sink sink(2);
    slow_trickle load(port(), sink.port());
    rss_sampler sampler(pid());
    auto [control, during] = measure_against_control(port(), good_topic, 20, 50, 3ms,
                                                     [&](bool at_broker) { load.aim(at_broker); });
    sampler.stop();
    load.close_broker_side();
    auto back = time_until_fds_at_most(pid(), fds_before, 3000ms);
    int64_t growth = sampler.peak_mb() - rss_before;
    std::printf(
        "trickle: %llu MB offered, RSS %lld MB -> peak %lld MB (+%lld), fds back in %lld ms; "
        "p99 %.3f ms (baseline %.3f ms, control %.3f ms: bound %.3f ms at load %.2f per core)\n",
        (unsigned long long)load.sent_to_broker_mb(), (long long)rss_before,
        (long long)sampler.peak_mb(), (long long)growth, (long long)back.count(), during.p99_ms,
        base.p99_ms, control.p99_ms, allowed_p99_ms(base, control), load_per_core());
    EXPECT_LT(growth, 96) << "request bytes held must stay near queued.max.request.bytes";
    EXPECT_EQ(during.answered, during.sent);
    SPOOL_EXPECT_P99_WITHIN("trickle", during.p99_ms, allowed_p99_ms(base, control));
    std::printf("trickle: slowest %s\n", during.slowest.c_str());
    EXPECT_GE(back.count(), 0) << "fds did not return to " << fds_before;
    EXPECT_LE(back, 1000ms);
}

}  // namespace
}  // namespace spool::tests::hostile
