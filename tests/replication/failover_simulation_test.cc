// A randomized failover simulation of one partition on three replicas, over many seeds: the real
// replication::partition on real partition_logs (temp dirs), the real truncation decision
// (replication/truncation.h), and a model of the rest played by the test in one thread:
//
//   controller  elects leaders from the live ISR members only, first in replica order, bumps the
//               leader epoch; removes a dead broker from the ISR unless it is the last member
//               (KIP-966: then the partition waits for it, leader -1); applies ISR changes the
//               leader proposes by compare-and-swap on partition epoch and record revision.
//   fetcher     a follower asks the leader OffsetForLeaderEpoch (its latest epoch), truncates as
//               decide_truncation says (in rounds for KIP-279), then fetches from its log end:
//               on_follower_fetch, the leader's batches up to its LEO, append_from_leader,
//               follow_high_watermark.
//   faults      crash (the process dies; the page cache survives, so the files stay) and restart of
//               any replica, leader included; time passing (ISR shrink after
//               replica.lag.time.max.ms); ISR changes answered late or never.
//
// Checked after every step: everything below the leader's high watermark ("committed") stays,
// batch for batch, in every later leader's log (no elected replica lacks a committed batch;
// KIP-101), and at the end, with every replica up and caught up, all three logs are the same.
// A batch is identified by (base offset, last offset delta, max timestamp): each produced batch
// has a timestamp of its own.

#include "broker/replication/partition.h"
#include "broker/replication/truncation.h"
#include "broker/storage/batch_info.h"
#include "broker/storage/tests/test_util.h"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

namespace spool::broker::replication {
namespace {

using namespace std::chrono_literals;
using storage::test::batch_spec;
using storage::test::make_batch;
using storage::test::slice_bytes;

using batch_id = std::tuple<int64_t, int32_t, int64_t>;  // base offset, last delta, max ts

// Every batch of a log below `upper`, by base offset.
std::map<int64_t, batch_id> batches_of(const storage::partition_log& log, model::offset upper) {
    std::map<int64_t, batch_id> out;
    auto start = log.log_start_offset();
    while (start < upper) {
        auto r = log.read(start, 1 << 20, upper);
        if (!r || r.value().slices.empty()) {
            break;
        }
        for (const auto& s : r.value().slices) {
            auto bytes = slice_bytes(s);
            size_t pos = 0;
            while (pos + protocol::records::batch_header_size <= bytes.size()) {
                auto b = storage::batch_info::decode(bytes.data() + pos);
                out[b.base_offset.value()] = {b.base_offset.value(), b.last_offset_delta,
                                              b.max_timestamp.value()};
                pos += b.size();
            }
        }
        start = r.value().next_offset;
    }
    return out;
}

std::vector<uint8_t> read_all_bytes(const storage::partition_log& log, model::offset from) {
    std::vector<uint8_t> out;
    auto r = log.read(from, 1 << 20, log.log_end_offset());
    if (!r) {
        return out;
    }
    for (const auto& s : r.value().slices) {
        auto b = slice_bytes(s);
        out.insert(out.end(), b.begin(), b.end());
    }
    return out;
}

class simulation : public isr_writer {
public:
    explicit simulation(uint32_t seed) : _rng(seed) {
        _a.replicas = {1, 2, 3};
        _a.isr = {1, 2, 3};
        _a.leader = 1;
        _a.leader_epoch = 1;
        _a.record_revision = 1;
        for (int32_t id : _a.replicas) {
            _up[id] = open(id);
        }
        broadcast();
    }

    void write(isr_change change, std::function<void(std::error_code)> done) override {
        _pending.push_back({std::move(change), std::move(done)});
    }

    // One random step; false (with `failure` set) when an invariant broke.
    bool step() {
        const int dice = static_cast<int>(_rng() % 100);
        if (dice < 35) {
            produce();
        } else if (dice < 70) {
            fetch(random_replica());
        } else if (dice < 78) {
            answer_isr_change();
        } else if (dice < 86) {
            crash(random_replica());
        } else if (dice < 94) {
            restart(random_replica());
        } else {
            _now += 12s;  // replica.lag.time.max.ms is 30 s: a few of these shrink the ISR
            if (auto* l = leader()) {
                l->tick();
            }
        }
        return check_committed();
    }

    // Everything up, every ISR change answered, followers fetching until all logs end together.
    bool heal() {
        for (int32_t id : _a.replicas) {
            restart(id);
        }
        for (int round = 0; round < 200; ++round) {
            // Time passes while healing: a leader whose ISR change was refused proposes again
            // only after partition_options::isr_retry_backoff (1 s).
            _now += 100ms;
            while (!_pending.empty()) {
                answer_isr_change();
            }
            for (int32_t id : _a.replicas) {
                fetch(id);
            }
            if (!check_committed()) {
                return false;
            }
            auto* l = leader();
            if (l == nullptr) {
                failure = "no leader after healing: " + describe();
                return false;
            }
            bool done = _a.isr.size() == 3 && l->high_watermark() == l->log().log_end_offset();
            for (int32_t id : _a.replicas) {
                done = done && _up[id]->log().log_end_offset() == l->log().log_end_offset();
            }
            if (done) {
                auto want = batches_of(l->log(), l->log().log_end_offset());
                for (int32_t id : _a.replicas) {
                    if (batches_of(_up[id]->log(), _up[id]->log().log_end_offset()) != want) {
                        failure = "replica " + std::to_string(id) +
                                  " differs from the leader "
                                  "after healing: " +
                                  describe();
                        return false;
                    }
                }
                return true;
            }
        }
        failure = "never caught up: " + describe();
        return false;
    }

    size_t committed_batches() const { return _committed.size(); }
    int32_t leader_changes() const { return _a.leader_epoch - 1; }
    int truncation_rounds() const { return _truncation_rounds; }
    std::string failure;

private:
    struct pending_change {
        isr_change change;
        std::function<void(std::error_code)> done;
    };

    std::unique_ptr<partition> open(int32_t id) {
        auto log = storage::partition_log::open(_dir.path() / ("r" + std::to_string(id)) / "t-0",
                                                {"t", model::partition_id(0)}, {});
        EXPECT_TRUE(log) << (log ? "" : log.error().message());
        partition_options o;
        o.self = id;
        o.replica_lag_time_max = 30s;
        o.clock = [this] { return _now; };
        o.isr = this;
        return std::make_unique<partition>(std::move(log).value(), _ioc.get_executor(), o);
    }

    int32_t random_replica() { return _a.replicas[_rng() % _a.replicas.size()]; }

    partition* leader() {
        auto it = _up.find(_a.leader);
        return it == _up.end() || !it->second ? nullptr : it->second.get();
    }

    void broadcast() {
        for (auto& [id, p] : _up) {
            if (p) {
                p->apply(_a);
            }
        }
        _ioc.poll();
        _ioc.restart();
    }

    void produce() {
        auto* l = leader();
        if (l == nullptr) {
            return;
        }
        auto bytes =
            make_batch({.records = 1 + static_cast<int>(_rng() % 3), .timestamp = ++_timestamp});
        (void)l->append_as_leader(bytes, -1, 1);
    }

    void fetch(int32_t id) {
        auto* l = leader();
        auto& f = _up[id];
        if (l == nullptr || !f || id == _a.leader) {
            return;
        }
        // Truncation first, as replica_fetcher::truncate_round does it: in rounds while the
        // decision says to ask again (KIP-279).
        bool again = f->needs_truncation();
        for (int round = 0; again && round < 10; ++round) {
            auto latest = f->log().epochs().latest_epoch();
            if (!latest) {
                const auto& log = f->log();
                (void)f->truncated(log.log_end_offset() == log.log_start_offset()
                                       ? log.log_end_offset()
                                       : f->high_watermark());
                break;
            }
            auto e = l->log().end_offset_for_epoch(*latest);
            auto d = decide_truncation(f->log().epochs(), f->log().log_start_offset(),
                                       f->log().log_end_offset(),
                                       {e.epoch.value(), e.start_offset.value()});
            (void)f->truncated(d.offset);
            again = !d.complete;
            _truncation_rounds += again ? 1 : 0;
        }
        const auto from = f->log().log_end_offset();
        if (l->on_follower_fetch(id, from, _a.leader_epoch)) {
            return;
        }
        auto bytes = read_all_bytes(l->log(), from);
        if (!bytes.empty()) {
            (void)f->append_from_leader(bytes);
        }
        f->follow_high_watermark(l->high_watermark());
        _ioc.poll();
        _ioc.restart();
    }

    void answer_isr_change() {
        if (_pending.empty()) {
            return;
        }
        auto c = std::move(_pending.front());
        _pending.erase(_pending.begin());
        if (_rng() % 5 == 0) {
            c.done(std::make_error_code(std::errc::timed_out));  // etcd unreachable: dropped
            return;
        }
        if (c.change.leader_epoch != _a.leader_epoch ||
            c.change.partition_epoch != _a.partition_epoch ||
            c.change.record_revision != _a.record_revision) {
            c.done(std::make_error_code(std::errc::operation_canceled));  // stale: CAS failed
            return;
        }
        _a.isr = c.change.new_isr;
        ++_a.partition_epoch;
        ++_a.record_revision;
        c.done({});
        broadcast();
    }

    bool live(int32_t id) { return _up[id] != nullptr; }

    void crash(int32_t id) {
        if (!_up[id]) {
            return;
        }
        // The files stay as they are (the page cache survives a process crash); closed cleanly
        // so that reopening skips storage's crash recovery, which the kill -9 tests cover with
        // real processes, and 200 seeds stay within seconds.
        (void)_up[id]->log().close();
        _up[id].reset();
        const bool was_leader = _a.leader == id;
        if (_a.isr.size() > 1) {
            std::erase(_a.isr, id);
        }
        if (was_leader) {
            elect();
        }
        ++_a.partition_epoch;
        ++_a.record_revision;
        broadcast();
    }

    void restart(int32_t id) {
        if (_up[id]) {
            return;
        }
        _up[id] = open(id);
        if (_a.leader < 0) {
            elect();
            ++_a.partition_epoch;
            ++_a.record_revision;
        }
        broadcast();
    }

    // Only a live ISR member may lead (unclean.leader.election.enable=false).
    void elect() {
        _a.leader = -1;
        for (int32_t id : _a.replicas) {
            if (live(id) && std::find(_a.isr.begin(), _a.isr.end(), id) != _a.isr.end()) {
                _a.leader = id;
                break;
            }
        }
        ++_a.leader_epoch;
    }

    bool check_committed() {
        auto* l = leader();
        if (l == nullptr) {
            return true;
        }
        auto now = batches_of(l->log(), l->log().log_end_offset());
        for (const auto& [base, id] : _committed) {
            auto it = now.find(base);
            if (it == now.end() || it->second != id) {
                failure = "committed batch at " + std::to_string(base) +
                          " missing or changed "
                          "on leader " +
                          std::to_string(_a.leader) + ": " + describe();
                return false;
            }
        }
        for (const auto& [base, id] : batches_of(l->log(), l->high_watermark())) {
            _committed.emplace(base, id);
        }
        return true;
    }

    std::string describe() {
        std::ostringstream out;
        out << "leader " << _a.leader << " epoch " << _a.leader_epoch << " isr [";
        for (auto id : _a.isr) {
            out << id << " ";
        }
        out << "]";
        for (int32_t id : _a.replicas) {
            out << "; r" << id;
            if (_up[id]) {
                out << " LEO " << _up[id]->log().log_end_offset().value() << " HW "
                    << _up[id]->high_watermark().value();
            } else {
                out << " down";
            }
        }
        return out.str();
    }

    std::mt19937 _rng;
    storage::test::temp_dir _dir;
    boost::asio::io_context _ioc;
    steady_time _now = std::chrono::steady_clock::now();
    partition_assignment _a;
    std::map<int32_t, std::unique_ptr<partition>> _up;
    std::vector<pending_change> _pending;
    std::map<int64_t, batch_id> _committed;
    int64_t _timestamp = 1000;
    int _truncation_rounds = 0;
};

TEST(failover_simulation, test_replicas_agree_on_the_committed_prefix_over_many_seeds) {
    // Thousands of small logs opened, fsynced and dropped: on tmpfs when there is one, so the
    // seeds cost CPU, not disk waits (a crash here keeps the files either way).
    if (std::filesystem::is_directory("/dev/shm")) {
        ::setenv("TMPDIR", "/dev/shm", 1);
    }
    constexpr uint32_t seeds = 200;
    constexpr int steps = 300;
    size_t committed = 0;
    int32_t leader_changes = 0;
    int rounds = 0;
    for (uint32_t seed = 1; seed <= seeds; ++seed) {
        simulation sim(seed);
        for (int i = 0; i < steps; ++i) {
            ASSERT_TRUE(sim.step()) << "seed " << seed << " step " << i << ": " << sim.failure;
        }
        ASSERT_TRUE(sim.heal()) << "seed " << seed << ": " << sim.failure;
        committed += sim.committed_batches();
        leader_changes += sim.leader_changes();
        rounds += sim.truncation_rounds();
    }
    std::printf(
        "[ figures  ] %u seeds x %d steps: %zu committed batches checked, %d leader "
        "changes, %d second truncation rounds (KIP-279)\n",
        seeds, steps, committed, leader_changes, rounds);
    EXPECT_GT(leader_changes, static_cast<int32_t>(seeds));
}

}  // namespace
}  // namespace spool::broker::replication
