#pragma once

// A steady, well-behaved producer for latency tests: one connection, acks=1, one small record
// every `interval`, each latency measured from the moment the request was due (not when it was
// sent), so a broker that stalls is charged for every request the stall delayed (no coordinated
// omission: a synchronous client would otherwise send one request during a 3 s stall and record
// one bad sample). Statistics: p99 per window of samples, then the median of the windows' p99s,
// which shrugs off one noisy window on a shared machine but not a broker that stalls often.
//
// Lifecycle: start() spawns the thread; stop() joins it. Threading: samples() and the statistics
// from any thread (a mutex guards the samples; the broker under test is what is measured).

#include "protocol/messages/produce.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests {

using latency_clock = std::chrono::steady_clock;

struct latency_sample {
    latency_clock::time_point due;
    std::chrono::microseconds latency;
    // How late the recorder's own thread woke for this request (it slept until `due`), or -1 when
    // it did not sleep (behind schedule): the part of `latency` that is the test machine's
    // scheduler, not the broker.
    std::chrono::microseconds wake_late{-1};
};

class latency_recorder {
public:
    latency_recorder(uint16_t port, std::string topic, std::chrono::microseconds interval)
        : _port(port), _topic(std::move(topic)), _interval(interval) {}
    ~latency_recorder() { stop(); }

    void start();
    void stop();

    // Samples due in [from, to).
    std::vector<latency_sample> samples(latency_clock::time_point from,
                                        latency_clock::time_point to) const;
    // Waits (at most `timeout`) until the producer is back on schedule: a phase measured while it
    // still works off a backlog from the previous one would be charged for that one's stall.
    bool wait_on_schedule(std::chrono::milliseconds timeout) const;
    // Requests that did not come back with error 0 (must stay 0).
    int64_t failures() const { return _failures.load(); }

private:
    void run();

    uint16_t _port;
    std::string _topic;
    std::chrono::microseconds _interval;
    std::atomic<bool> _stop{false};
    std::atomic<int64_t> _failures{0};
    mutable std::mutex _mu;
    std::vector<latency_sample> _samples;
    std::thread _thread;
};

// An acks=1 Produce of batch to partition 0 of topic (the records view batch: keep it alive).
protocol::produce_request produce_to_partition_0(const std::string& topic,
                                                 const std::vector<uint8_t>& batch);

// The q-quantile (0..1) of the latencies, in microseconds.
double quantile_us(std::vector<latency_sample> s, double q);

struct window_stats {
    double median_p99_us = 0;  // median over the windows of each window's p99
    double overall_p99_us = 0;
    double max_us = 0;
    size_t windows = 0;
    size_t samples = 0;
    double wake_late_p99_us = 0;  // p99 of the recorder's own wake-up delay (latency_sample)
};

// Splits the samples into consecutive windows of `window` and summarises them.
window_stats summarise(const std::vector<latency_sample>& samples,
                       std::chrono::milliseconds window);

}  // namespace spool::tests
