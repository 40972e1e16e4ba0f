#include "tests/latency/latency_recorder.h"

#include "protocol/messages/produce.h"
#include "protocol/records/batch_builder.h"
#include "tests/integration/kafka_client.h"

#include <algorithm>

namespace spool::tests {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;

protocol::produce_request produce_to_partition_0(const std::string& topic,
                                                 const std::vector<uint8_t>& batch) {
    pr::produce_request req;
    req.acks = 1;
    req.timeout_ms = 30000;
    auto& t = req.topic_data.emplace_back();
    t.name = topic;
    auto& p = t.partition_data.emplace_back();
    p.index = 0;
    p.records = pr::records_field::view(batch);
    return req;
}

void latency_recorder::start() {
    _thread = std::thread([this] { run(); });
}

void latency_recorder::stop() {
    _stop = true;
    if (_thread.joinable()) {
        _thread.join();
    }
}

void latency_recorder::run() {
    kafka_client c(_port);
    std::string value(100, 'v');
    auto next_due = latency_clock::now();
    while (!_stop) {
        auto now = latency_clock::now();
        std::chrono::microseconds wake_late{-1};
        if (now < next_due) {
            std::this_thread::sleep_until(next_due);
            wake_late = std::chrono::duration_cast<std::chrono::microseconds>(latency_clock::now() -
                                                                              next_due);
        }
        auto due = next_due;
        next_due += _interval;
        rec::batch_builder b;
        int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
        b.add(wall, rec::nullable_bytes::null(), rec::nullable_bytes::of(value));
        auto batch = b.build();
        auto req = produce_to_partition_0(_topic, batch);
        auto resp = c.call<pr::produce_request, pr::produce_response>(9, req);
        auto done = latency_clock::now();
        if (!resp || resp->responses.empty() || resp->responses[0].partition_responses.empty() ||
            resp->responses[0].partition_responses[0].error_code != 0) {
            ++_failures;
            if (!resp) {
                return;  // the connection is gone
            }
        }
        std::lock_guard lock(_mu);
        _samples.push_back(
            {due, std::chrono::duration_cast<std::chrono::microseconds>(done - due), wake_late});
    }
}

bool latency_recorder::wait_on_schedule(std::chrono::milliseconds timeout) const {
    auto deadline = latency_clock::now() + timeout;
    while (latency_clock::now() < deadline) {
        {
            std::lock_guard lock(_mu);
            if (!_samples.empty() && _samples.back().due >= latency_clock::now() - 10 * _interval -
                                                                std::chrono::milliseconds(20)) {
                return true;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

std::vector<latency_sample> latency_recorder::samples(latency_clock::time_point from,
                                                      latency_clock::time_point to) const {
    std::lock_guard lock(_mu);
    std::vector<latency_sample> out;
    for (const auto& s : _samples) {
        if (s.due >= from && s.due < to) {
            out.push_back(s);
        }
    }
    return out;
}

double quantile_us(std::vector<latency_sample> s, double q) {
    if (s.empty()) {
        return 0;
    }
    auto rank = std::min(s.size() - 1, static_cast<size_t>(q * double(s.size())));
    std::nth_element(s.begin(), s.begin() + static_cast<ptrdiff_t>(rank), s.end(),
                     [](const auto& a, const auto& b) { return a.latency < b.latency; });
    return double(s[rank].latency.count());
}

window_stats summarise(const std::vector<latency_sample>& samples,
                       std::chrono::milliseconds window) {
    window_stats out;
    out.samples = samples.size();
    if (samples.empty()) {
        return out;
    }
    out.overall_p99_us = quantile_us(samples, 0.99);
    std::vector<latency_sample> woke;
    for (const auto& s : samples) {
        if (s.wake_late.count() >= 0) {
            woke.push_back({s.due, s.wake_late});
        }
    }
    out.wake_late_p99_us = quantile_us(std::move(woke), 0.99);
    for (const auto& s : samples) {
        out.max_us = std::max(out.max_us, double(s.latency.count()));
    }
    std::vector<double> p99s;
    auto start = samples.front().due;
    std::vector<latency_sample> current;
    for (const auto& s : samples) {
        if (s.due - start >= window) {
            p99s.push_back(quantile_us(current, 0.99));
            current.clear();
            start = s.due;
        }
        current.push_back(s);
    }
    // A last partial window counts only when at least half full.
    if (!current.empty() && (p99s.empty() || current.back().due - start >= window / 2)) {
        p99s.push_back(quantile_us(current, 0.99));
    }
    std::sort(p99s.begin(), p99s.end());
    out.windows = p99s.size();
    out.median_p99_us = p99s[p99s.size() / 2];
    return out;
}

}  // namespace spool::tests
