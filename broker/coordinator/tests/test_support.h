#pragma once

// Test-only stand-ins. manual_clock is the injectable clock the state machine is designed for.
// memory_log keeps records in a vector: the membership tests exercise the state machine, not
// storage, so they use it to stay pure and fast (and to inject append failures and delays,
// which a real partition_log cannot be asked to produce); persistence_test.cc replays through a
// real storage partition_log instead.

#include "broker/coordinator/clock.h"
#include "broker/coordinator/group_log.h"

#include <deque>

namespace spool::broker::coordinator::testing {

class manual_clock final : public clock {
public:
    explicit manual_clock(time_ms start = time_ms(1'700'000'000'000)) : _now(start) {}
    [[nodiscard]] time_ms now() const override { return _now; }
    void advance(time_ms d) { _now += d; }

private:
    time_ms _now;
};

class memory_log final : public group_log {
public:
    void append(std::vector<log_record> batch, append_callback done) override {
        if (fail_appends) {
            done(std::make_error_code(std::errc::io_error));
            return;
        }
        if (hold_appends) {
            held.emplace_back(std::move(batch), std::move(done));
            return;
        }
        for (auto& r : batch) {
            records.push_back(std::move(r));
        }
        done({});
    }

    std::error_code replay(const replay_fn& fn) override {
        for (const auto& r : records) {
            if (r.value) {
                fn(r.key, std::span<const uint8_t>(*r.value));
            } else {
                fn(r.key, std::nullopt);
            }
        }
        return {};
    }

    // Completes held appends in order.
    void release() {
        while (!held.empty()) {
            auto [batch, done] = std::move(held.front());
            held.pop_front();
            for (auto& r : batch) {
                records.push_back(std::move(r));
            }
            done({});
        }
    }

    std::vector<log_record> records;
    bool fail_appends = false;
    bool hold_appends = false;
    std::deque<std::pair<std::vector<log_record>, append_callback>> held;
};

}  // namespace spool::broker::coordinator::testing
