#include "tests/kafka_reference/power_cut_scenarios.h"

#include "broker/replication/fetched_records.h"
#include "tests/durability/admin_requests.h"
#include "tests/durability/rdkafka_client.h"
#include "tests/durability/unsynced_mount.h"
#include "tests/kafka_reference/kafka_cluster.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <thread>

namespace spool::tests::kafka_reference {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using cluster::partition_info;

const std::string topic = "powercut";
constexpr uint64_t initial_records = 20000;
constexpr uint64_t after_fault_records = 1000;
// volume_replaced_starts_first: how long the node with the replaced volume runs alone.
constexpr auto alone_for = 25s;

long ms_since(clock_type::time_point t0) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count());
}

bool in_sync(const partition_info& p) {
    return p.error == 0 && p.leader >= 0 && p.replicas.size() == 3 && p.isr.size() == 3;
}

// One scenario on one target: the steps of tests/cluster/cluster_power_cut_test.cc, with what
// the original asserts kept as notes.
class run {
public:
    run(power_cut_target& t, scenario s) : _t(t), _s(s) { _r.target = t.name(); }

    scenario_result go() {
        const auto t0 = clock_type::now();
        if (set_up()) {
            switch (_s) {
                case scenario::leader_cut_quick_restart:
                    leader_cut_quick_restart();
                    break;
                case scenario::follower_cut_then_leader_killed:
                    follower_cut(false);
                    break;
                case scenario::follower_cut_leader_hangs:
                    follower_cut(true);
                    break;
                case scenario::volume_replaced_starts_first:
                    volume_replaced();
                    break;
                case scenario::all_cut_no_flush:
                case scenario::all_cut_flush_messages_1:
                    all_cut();
                    break;
            }
        }
        _r.ms = ms_since(t0);
        measured("%s took %ld ms: %s", scenario_name(_s), _r.ms, _r.summary().c_str());
        for (const auto& n : _r.notes) {
            std::printf("[ note     ] %s %s: %s\n", _r.target.c_str(), scenario_name(_s),
                        n.c_str());
        }
        std::fflush(stdout);
        return _r;
    }

private:
    void measured(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
        va_list ap;
        va_start(ap, fmt);
        vprint_measured(_r.target, fmt, ap);
        va_end(ap);
    }

    void note(std::string what) { _r.notes.push_back(std::move(what)); }

    bool set_up() {
        auto err = _t.start();
        if (!err.empty()) {
            note("the cluster did not start: " + err);
            return false;
        }
        std::map<std::string, std::string> configs{{"min.insync.replicas", "2"}};
        if (_s == scenario::all_cut_flush_messages_1) {
            configs["flush.messages"] = "1";
        }
        try {
            kafka_client c(_t.port(0));
            c.set_read_timeout(40s);
            auto answer = create_topic(c, topic, 1, configs, 3);
            if (answer.error_code != 0) {
                note("CreateTopics: error " + std::to_string(answer.error_code) + " " +
                     answer.message);
                return false;
            }
        } catch (const std::exception& e) {
            note(std::string("CreateTopics: ") + e.what());
            return false;
        }
        std::string why;
        if (!wait_partition(in_sync, 60s, &why)) {
            note("the topic never had 3 in-sync replicas: " + why);
            return false;
        }
        // request.timeout.ms: a request to a node that died is retried after 5 s, not 30 s.
        _producer = std::make_unique<acked_producer>(
            _t.bootstrap(), topic,
            std::map<std::string, std::string>{{"request.timeout.ms", "5000"}, {"linger.ms", "5"}});
        auto before = produce_initial_records();
        if (!before) {
            return false;
        }
        _before = *before;
        return true;
    }

    std::optional<partition_info> partition(size_t observer = 0) {
        return partition_seen(_t, topic, observer);
    }

    std::optional<partition_info> wait_partition(
        const std::function<bool(const partition_info&)>& pred, std::chrono::milliseconds timeout,
        std::string* why, size_t observer = 0) {
        return wait_for_partition(_t, topic, pred, timeout, why, observer, [this] {
            if (_supervise) {
                supervise();
            }
        });
    }

    // A supervisor (systemd's Restart=always, a Kubernetes pod): a node whose process exited is
    // started again.
    void supervise() {
        for (size_t i = 0; i < _t.size(); ++i) {
            if (!_t.running(i) && _t.restart(i, false)) {
                ++_supervised[i];
                measured("node %zu had exited: restarted by the supervisor", i);
            }
        }
    }

    uint64_t produce(uint64_t n, std::chrono::milliseconds timeout) {
        const size_t acked_before = _producer->acked().size();
        const auto deadline = clock_type::now() + timeout;
        for (uint64_t queued = 0; queued < n && clock_type::now() < deadline;) {
            if (_producer->produce(record_id(_next_id))) {
                ++_next_id;
                ++queued;
            } else if (!_producer->fatal_error().empty()) {
                break;
            } else {
                _producer->poll(10);
            }
        }
        (void)_producer->flush(std::max(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()),
            std::chrono::milliseconds(1)));
        return _producer->acked().size() - acked_before;
    }

    std::optional<partition_info> produce_initial_records() {
        const auto acked = produce(initial_records, 90s);
        if (acked != initial_records) {
            note("before any fault only " + std::to_string(acked) + " of " +
                 std::to_string(initial_records) + " acknowledged; fatal '" +
                 _producer->fatal_error() + "'");
            return std::nullopt;
        }
        auto deadline = clock_type::now() + 60s;
        std::vector<size_t> sizes(_t.size());
        while (true) {
            std::vector<std::vector<uint8_t>> logs;
            for (size_t i = 0; i < _t.size(); ++i) {
                logs.push_back(_t.replica_batches(i, topic, 0));
                sizes[i] = logs.back().size();
            }
            const bool equal = !logs[0].empty() && logs[0] == logs[1] && logs[1] == logs[2];
            auto [low, high] = watermarks(_t.bootstrap(), topic);
            auto p = partition();
            if (equal && high == static_cast<int64_t>(initial_records) && p && in_sync(*p)) {
                measured(
                    "before the fault: %llu records acknowledged, every replica %zu bytes, "
                    "high watermark %lld, %s",
                    static_cast<unsigned long long>(acked), sizes[0], static_cast<long long>(high),
                    describe(*p).c_str());
                return p;
            }
            if (clock_type::now() >= deadline) {
                note("the replicas never all held the records: bytes " + std::to_string(sizes[0]) +
                     "/" + std::to_string(sizes[1]) + "/" + std::to_string(sizes[2]) +
                     ", high watermark " + std::to_string(high) + ", " +
                     (p ? describe(*p) : "no partition"));
                return std::nullopt;
            }
            std::this_thread::sleep_for(100ms);
        }
    }

    void expect_available(const char* after, std::chrono::milliseconds timeout = 60s) {
        const auto t0 = clock_type::now();
        const auto acked = produce(after_fault_records, timeout);
        measured("%s: %llu of %llu more records acknowledged in %ld ms", after,
                 static_cast<unsigned long long>(acked),
                 static_cast<unsigned long long>(after_fault_records), ms_since(t0));
        if (acked != after_fault_records) {
            note(std::string("availability ") + after + ": " + std::to_string(acked) + " of " +
                 std::to_string(after_fault_records) + " acknowledged within " +
                 std::to_string(timeout.count()) + " ms, unanswered " +
                 std::to_string(_producer->outq_len()) + ", failed " +
                 std::to_string(_producer->failed().size()) +
                 (_producer->failed().empty()
                      ? ""
                      : " (e.g. " + _producer->failed().begin()->second + ")"));
        }
    }

    void audit_partition() {
        _r.audited = true;
        _r.produced = _next_id;
        _r.acked = _producer->acked().size();
        _r.failed = _producer->failed().size();
        // An offline partition cannot be read (read_partition would spend a minute finding out).
        auto p = partition();
        if (!p || p->leader < 0) {
            _r.offline = true;
            _r.offline_state = p ? describe(*p) : "no node answered";
            _r.lost = _r.acked;
            note("the partition is offline: " + _r.offline_state +
                 "; nothing read back, every acknowledged record counted lost");
            return;
        }
        std::string error;
        auto log = read_partition(_t.bootstrap(), topic, &error, 30s);
        auto a = audit(_producer->acked(), log);
        auto [low, high] = watermarks(_t.bootstrap(), topic);
        _r.acked = a.acked;
        _r.read_back = log.size();
        _r.lost = a.lost;
        _r.duplicated = a.duplicated;
        _r.moved = a.moved;
        _r.low = low;
        _r.high = high;
        _r.read_error = error;
        _r.examples = a.examples;
        if (!error.empty()) {
            note("read back: " + error);
        }
    }

    // A node restarted: prints how long it took and what the cluster logged about it.
    void restarted(const char* what, size_t i, bool ok, long ms) {
        measured("%s %zu restarted%s in %ld ms (session timeout %d ms); unsynced_fs %s%s%s", what,
                 i, ok ? "" : " (FAILED)", ms, _t.session_timeout_ms(),
                 unsynced_mount::last_cut(_t.volume_log(i)).c_str(), _t.events_of(i).empty() ? "" : "; ",
                 _t.events_of(i).c_str());
        if (!ok) {
            note(std::string(what) + " " + std::to_string(i) + " did not restart");
        }
    }

    int32_t first_follower() const {
        for (int32_t r : _before.replicas) {
            if (r != _before.leader) {
                return r;  // the controller's first choice once the leader goes
            }
        }
        return -1;
    }

    void leader_cut_quick_restart() {
        const auto leader = static_cast<size_t>(_before.leader);
        const int32_t epoch = _before.leader_epoch;
        _t.mark();
        const auto t0 = clock_type::now();
        auto err = _t.power_cut(leader);
        if (!err.empty()) {
            note(err);
            return;
        }
        const bool ok = _t.restart(leader, true);
        const long back_ms = ms_since(t0);
        std::string why;
        auto after = wait_partition(
            [epoch](const partition_info& p) { return in_sync(p) && p.leader_epoch > epoch; }, 60s,
            &why, (leader + 1) % _t.size());
        restarted("leader", leader, ok, back_ms);
        measured("after the restart: %s (before: %s)",
                 after ? describe(*after).c_str() : why.c_str(), describe(_before).c_str());
        if (!after) {
            note("no new leader epoch with 3 in sync within 60 s of the restart: " + why);
        }
        expect_available("after the leader's power cut");
        audit_partition();
    }

    void follower_cut(bool leader_hangs) {
        const int32_t leader = _before.leader;
        const int32_t follower = first_follower();
        if (follower < 0) {
            note("no follower in " + describe(_before));
            return;
        }
        const auto f = static_cast<size_t>(follower);
        const auto l = static_cast<size_t>(leader);
        _t.mark();
        const auto t0 = clock_type::now();
        int32_t epoch = _before.leader_epoch;
        if (leader_hangs) {
            _t.pause(l);
        }
        auto err = _t.power_cut(f);
        if (!err.empty()) {
            _t.kill9(l);  // a stopped process never exits otherwise
            note(err);
            return;
        }
        if (leader_hangs) {
            // Started, not waited for: the records queued next cannot be acknowledged while the
            // leader hangs, and the leader dies before the follower could catch up.
            const bool ok = _t.restart(f, false);
            for (uint64_t i = 0; i < after_fault_records; ++i) {
                if (_producer->produce(record_id(_next_id))) {
                    ++_next_id;
                }
            }
            _producer->poll(0);
            _t.kill9(l);
            restarted("follower", f, ok, ms_since(t0));
            measured("leader %d stopped before the cut, killed %ld ms after it", leader,
                     ms_since(t0));
        } else {
            const bool ok = _t.restart(f, true);
            restarted("follower", f, ok, ms_since(t0));
            expect_available("after the follower's power cut");
            auto mid = partition(l);
            measured("before the leader's kill -9: %s", mid ? describe(*mid).c_str() : "no answer");
            if (mid) {
                epoch = mid->leader_epoch;
            }
            _t.kill9(l);
        }
        const auto t1 = clock_type::now();
        std::string why;
        auto moved = wait_partition(
            [leader, epoch](const partition_info& p) {
                return p.leader >= 0 && p.leader != leader && p.leader_epoch > epoch;
            },
            60s, &why, f);
        measured("leader %d killed: %s after %ld ms", leader,
                 moved ? describe(*moved).c_str() : ("no new leader; " + why).c_str(),
                 ms_since(t1));
        if (!moved) {
            note("no new leader within 60 s of the leader's kill -9: " + why);
        }
        const bool ok = _t.restart(l, true);
        if (!ok) {
            note("the old leader did not restart");
        }
        auto settled = wait_partition(in_sync, 60s, &why);
        measured("after the old leader's restart: %s; %s",
                 settled ? describe(*settled).c_str() : why.c_str(), _t.events_of(f).c_str());
        if (!settled) {
            note("not 3 in sync again after the old leader's restart: " + why);
        }
        if (leader_hangs) {
            const size_t acked_before = _producer->acked().size();
            (void)_producer->flush(30s);
            measured(
                "the %llu records queued while the leader hung: %zu acknowledged, %d "
                "unanswered",
                static_cast<unsigned long long>(after_fault_records),
                _producer->acked().size() - acked_before, _producer->outq_len());
        }
        expect_available("after the leader's kill -9");
        audit_partition();
    }

    void volume_replaced() {
        const auto leader = static_cast<size_t>(_before.leader);
        for (size_t i = 0; i < _t.size(); ++i) {
            _t.kill9((leader + 1 + i) % _t.size());  // the leader last
        }
        auto err = _t.replace_volume(leader);
        if (!err.empty()) {
            note(err);
            return;
        }
        _t.mark();
        // Started again every 200 ms while it exits at once (a supervisor restarting it): a Spool
        // broker on a new volume refuses to start while its previous life's session lives.
        const auto t0 = clock_type::now();
        const auto limit = std::chrono::milliseconds(_t.session_timeout_ms() * 3) + 5s;
        int attempts = 1;
        bool up = _t.restart(leader, false);
        for (; !up && clock_type::now() - t0 < limit; ++attempts) {
            std::this_thread::sleep_for(200ms);
            up = _t.restart(leader, false);
        }
        measured("node %zu (the leader) on an empty volume started after %ld ms (%d attempts)",
                 leader, ms_since(t0), attempts);
        if (!up) {
            note("the node with the empty volume never started");
            return;
        }
        const auto t1 = clock_type::now();
        std::this_thread::sleep_for(alone_for);
        auto alone = partition(leader);
        measured("node %zu (empty volume) alone for %ld ms: %s", leader, ms_since(t1),
                 alone ? describe(*alone).c_str() : "no answer");
        if (alone && alone->leader == static_cast<int32_t>(leader)) {
            note("the node with the empty volume was elected while alone: " + describe(*alone));
        }
        for (size_t i = 0; i < _t.size(); ++i) {
            if (i != leader && !_t.restart(i, false)) {
                note("node " + std::to_string(i) + " did not restart");
            }
        }
        // From now on a node that exits is started again, as a supervisor would: a Kafka voter
        // on a new volume can stop itself once it hears of the quorum it forgot.
        _supervise = true;
        std::string why;
        const auto t2 = clock_type::now();
        auto led = wait_partition([](const partition_info& p) { return p.leader >= 0; }, 90s, &why);
        measured("all running again: %s after %ld ms", led ? describe(*led).c_str() : why.c_str(),
                 ms_since(t2));
        if (!led) {
            note("no leader within 90 s of all running: " + why);
            audit_partition();
            return;
        }
        auto settled = wait_partition(in_sync, 60s, &why);
        measured("then: %s; %s", settled ? describe(*settled).c_str() : why.c_str(),
                 _t.events_of(leader).c_str());
        if (!settled) {
            note("not 3 in sync again: " + why);
        }
        expect_available("after the volume replacement");
        audit_partition();
    }

    void all_cut() {
        const int32_t epoch = _before.leader_epoch;
        _t.mark();
        for (size_t i = 0; i < _t.size(); ++i) {
            auto err = _t.power_cut(i);
            if (!err.empty()) {
                note(err);
                return;
            }
            measured("node %zu power cut: unsynced_fs %s", i,
                     unsynced_mount::last_cut(_t.volume_log(i)).c_str());
        }
        const auto t0 = clock_type::now();
        for (size_t i = 0; i < _t.size(); ++i) {
            if (!_t.restart(i, false)) {
                note("node " + std::to_string(i) + " did not restart");
            }
        }
        std::string why;
        auto after = wait_partition(
            [epoch](const partition_info& p) {
                return p.error == 0 && p.leader >= 0 && p.leader_epoch > epoch;
            },
            90s, &why);
        measured("after every replica's power cut: %s after %ld ms",
                 after ? describe(*after).c_str() : why.c_str(), ms_since(t0));
        for (size_t i = 0; i < _t.size(); ++i) {
            if (!_t.events_of(i).empty()) {
                measured("node %zu: %s", i, _t.events_of(i).c_str());
            }
        }
        if (!after) {
            note("no leader at a new epoch within 90 s: " + why);
            audit_partition();
            return;
        }
        expect_available("after every replica's power cut");
        audit_partition();
    }

    power_cut_target& _t;
    scenario _s;
    bool _supervise = false;
    std::map<size_t, int> _supervised;
    scenario_result _r;
    partition_info _before;
    std::unique_ptr<acked_producer> _producer;
    uint64_t _next_id = 0;
};

}  // namespace

void vprint_measured(const std::string& target, const char* fmt, va_list ap) {
    char buf[2048];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    std::printf("[ measured ] %s: %s\n", target.c_str(), buf);
    std::fflush(stdout);
}

void print_measured(const std::string& target, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint_measured(target, fmt, ap);
    va_end(ap);
}

std::optional<partition_info> partition_seen(power_cut_target& t, const std::string& topic_name,
                                             size_t observer) {
    for (size_t k = 0; k < t.size(); ++k) {
        const size_t i = (observer + k) % t.size();
        if (!t.running(i)) {
            continue;
        }
        auto v = metadata_via(t.port(i), {topic_name});
        const auto* ti = v ? v->topic(topic_name) : nullptr;
        if (ti != nullptr && ti->error == 0 && ti->partitions.size() == 1) {
            return ti->partitions[0];
        }
    }
    return std::nullopt;
}

std::optional<partition_info> wait_for_partition(
    power_cut_target& t, const std::string& topic_name,
    const std::function<bool(const partition_info&)>& pred, std::chrono::milliseconds timeout,
    std::string* why, size_t observer, const std::function<void()>& each_poll) {
    auto deadline = clock_type::now() + timeout;
    *why = "no node answered";
    while (true) {
        if (each_poll) {
            each_poll();
        }
        if (auto p = partition_seen(t, topic_name, observer)) {
            if (pred(*p)) {
                return p;
            }
            *why = describe(*p);
        }
        if (clock_type::now() >= deadline) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(100ms);
    }
}

const char* scenario_name(scenario s) {
    switch (s) {
        case scenario::leader_cut_quick_restart:
            return "leader_cut_quick_restart";
        case scenario::follower_cut_then_leader_killed:
            return "follower_cut_then_leader_killed";
        case scenario::follower_cut_leader_hangs:
            return "follower_cut_leader_hangs";
        case scenario::volume_replaced_starts_first:
            return "volume_replaced_starts_first";
        case scenario::all_cut_no_flush:
            return "all_cut_no_flush";
        case scenario::all_cut_flush_messages_1:
            return "all_cut_flush_messages_1";
    }
    return "?";
}

std::vector<scenario> all_scenarios() {
    return {scenario::leader_cut_quick_restart,  scenario::follower_cut_then_leader_killed,
            scenario::follower_cut_leader_hangs, scenario::volume_replaced_starts_first,
            scenario::all_cut_no_flush,          scenario::all_cut_flush_messages_1};
}

std::string scenario_result::summary() const {
    if (!audited) {
        return "not audited (the scenario stopped early)";
    }
    std::ostringstream out;
    if (offline) {
        out << "OFFLINE (" << offline_state << "): ";
    }
    out << "lost " << lost << " duplicated " << duplicated << " moved " << moved << " of " << acked
        << " acknowledged (produced " << produced << ", failed " << failed << "; read back "
        << read_back << ", log " << low << ".." << high << ")";
    return out.str();
}

scenario_result run_scenario(power_cut_target& target, scenario s) {
    return run(target, s).go();
}

std::vector<uint8_t> replica_batches_in(const std::string& log_dir, const std::string& topic_name,
                                        int32_t partition) {
    std::vector<fs::path> segments;
    std::error_code ec;
    const fs::path dir = fs::path(log_dir) / (topic_name + "-" + std::to_string(partition));
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() == ".log") {
            segments.push_back(e.path());
        }
    }
    std::sort(segments.begin(), segments.end());  // zero-padded base offsets: offset order
    std::vector<uint8_t> out;
    for (const auto& segment : segments) {
        std::ifstream in(segment, std::ios::binary);
        std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>()};
        bytes.resize(broker::replication::whole_batches_size(bytes));
        out.insert(out.end(), bytes.begin(), bytes.end());
    }
    return out;
}

}  // namespace spool::tests::kafka_reference
