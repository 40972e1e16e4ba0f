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

    std::error_code replay(const replay_fn& fn) override { return replay_txn(fn, {}, {}); }

    // Transactional batches and markers are kept beside `records`, each at the records.size()
    // it was appended at, so replay interleaves them in log order.
    struct txn_entry {
        size_t at = 0;
        int64_t pid = -1;
        std::optional<bool> marker;  // set: a commit (true) or abort (false) marker
        std::vector<log_record> batch;
    };

    void append_txn(std::vector<log_record> batch, int64_t pid, int16_t /*epoch*/,
                    append_callback done) override {
        if (fail_appends) {
            done(std::make_error_code(std::errc::io_error));
            return;
        }
        txn.push_back({records.size(), pid, std::nullopt, std::move(batch)});
        done({});
    }

    void write_marker(int64_t pid, bool commit) {
        txn.push_back({records.size(), pid, commit, {}});
    }

    std::error_code replay_txn(const replay_fn& fn, const txn_record_fn& on_txn,
                               const txn_marker_fn& on_marker) override {
        size_t next_txn = 0;
        auto txn_until = [&](size_t at) {
            for (; next_txn < txn.size() && txn[next_txn].at <= at; ++next_txn) {
                const auto& e = txn[next_txn];
                if (e.marker) {
                    if (on_marker) {
                        on_marker(e.pid, *e.marker);
                    }
                    continue;
                }
                for (const auto& r : e.batch) {
                    auto value =
                        r.value ? std::optional(std::span<const uint8_t>(*r.value)) : std::nullopt;
                    if (on_txn) {
                        on_txn(e.pid, r.key, value);
                    } else {
                        fn(r.key, value);
                    }
                }
            }
        };
        for (size_t i = 0; i < records.size(); ++i) {
            txn_until(i);
            const auto& r = records[i];
            if (r.value) {
                fn(r.key, std::span<const uint8_t>(*r.value));
            } else {
                fn(r.key, std::nullopt);
            }
        }
        txn_until(records.size());
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
    std::vector<txn_entry> txn;
    bool fail_appends = false;
    bool hold_appends = false;
    std::deque<std::pair<std::vector<log_record>, append_callback>> held;
};

}  // namespace spool::broker::coordinator::testing
