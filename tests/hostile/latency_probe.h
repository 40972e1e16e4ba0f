#pragma once

// The well-behaved client of a hostile-client test: one connection sending Metadata requests
// for one topic, one at a time, timing each. A test measures a baseline first, then the same
// while the hostile clients run, and compares the p99s.

#include "protocol/messages/metadata.h"
#include "tests/integration/kafka_client.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::hostile {

struct latency_stats {
    size_t sent = 0;
    size_t answered = 0;
    double p50_ms = 0;
    double p99_ms = 0;
};

// `count` requests, `pause` apart; a request without an answer within 5 s ends the run.
inline latency_stats measure_latency(uint16_t port, const std::string& topic, size_t count,
                                     std::chrono::milliseconds pause) {
    kafka_client c(port);
    c.set_read_timeout(std::chrono::seconds(5));
    protocol::metadata_request req;
    req.topics.emplace().emplace_back().name = topic;
    std::vector<double> ms;
    latency_stats out;
    for (size_t i = 0; i < count; ++i) {
        auto start = std::chrono::steady_clock::now();
        ++out.sent;
        auto resp = c.call<protocol::metadata_request, protocol::metadata_response>(1, req);
        if (!resp) {
            break;
        }
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        std::this_thread::sleep_for(pause);
    }
    out.answered = ms.size();
    if (!ms.empty()) {
        std::sort(ms.begin(), ms.end());
        out.p50_ms = ms[ms.size() / 2];
        out.p99_ms = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
    }
    return out;
}

// The bound the tests assert: within 2x of the baseline p99, where a baseline below 1 ms counts
// as 1 ms (sub-millisecond loopback latencies on a shared machine vary more than 2x by
// themselves).
inline double allowed_p99_ms(const latency_stats& baseline) {
    return 2.0 * std::max(baseline.p99_ms, 1.0);
}

}  // namespace spool::tests::hostile
