#include "tests/kafka_reference/min_insync_scenario.h"

#include "tests/durability/admin_requests.h"
#include "tests/durability/rdkafka_client.h"
#include "tests/integration/test_support.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

namespace spool::tests::kafka_reference {

namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using cluster::partition_info;

const std::string guarded_topic = "isr_guarded";
const std::string rf1_topic = "isr_rf1";
constexpr int16_t not_enough_replicas = 19;

long ms_since(clock_type::time_point t0) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0).count());
}

std::string answers(const std::map<int16_t, int>& errors) {
    std::string out;
    for (auto [error, n] : errors) {
        out += (out.empty() ? "" : ", ") + std::string("error ") + std::to_string(error) + " x" +
               std::to_string(n);
    }
    return out.empty() ? "none" : out;
}

class min_insync_run {
public:
    explicit min_insync_run(power_cut_target& t) : _t(t) { _r.target = t.name(); }

    min_insync_result go() {
        const auto t0 = clock_type::now();
        if (auto err = _t.start(); !err.empty()) {
            note("the cluster did not start: " + err);
        } else if (create_topics()) {
            rf1();
            isr_below_min_insync();
        }
        _r.ms = ms_since(t0);
        print_measured(_r.target, "min.insync.replicas cases took %ld ms", _r.ms);
        for (const auto& n : _r.notes) {
            std::printf("[ note     ] %s min_insync: %s\n", _r.target.c_str(), n.c_str());
        }
        std::fflush(stdout);
        return _r;
    }

private:
    void note(std::string what) { _r.notes.push_back(std::move(what)); }

    bool create_topics() {
        try {
            kafka_client c(_t.port(0));
            c.set_read_timeout(40s);
            const std::map<std::string, std::string> configs{{"min.insync.replicas", "2"}};
            for (auto [name, rf] :
                 {std::pair{guarded_topic, int16_t{3}}, std::pair{rf1_topic, int16_t{1}}}) {
                auto answer = create_topic(c, name, 1, configs, rf);
                if (answer.error_code != 0) {
                    note("CreateTopics " + name + ": error " + std::to_string(answer.error_code) +
                         " " + answer.message);
                    return false;
                }
            }
        } catch (const std::exception& e) {
            note(std::string("CreateTopics: ") + e.what());
            return false;
        }
        return true;
    }

    // A client of the partition's leader, or nullopt (noted).
    std::optional<std::pair<partition_info, std::unique_ptr<kafka_client>>> leader_of(
        const std::string& topic, size_t isr_size) {
        std::string why;
        auto p = wait_for_partition(
            _t, topic,
            [isr_size](const partition_info& q) {
                return q.error == 0 && q.leader >= 0 && q.isr.size() == isr_size;
            },
            60s, &why);
        if (!p) {
            note(topic + ": no leader with an ISR of " + std::to_string(isr_size) +
                 " within 60 s: " + why);
            return std::nullopt;
        }
        auto c = std::make_unique<kafka_client>(_t.port(static_cast<size_t>(p->leader)));
        c->set_read_timeout(15s);
        // Another node's Metadata can name the leader before the leader serves the partition
        // (Kafka answers UNKNOWN_TOPIC_OR_PARTITION until its broker applied the topic).
        const auto deadline = clock_type::now() + 30s;
        while (latest_offset(*c, topic) < 0) {
            if (clock_type::now() >= deadline) {
                note(topic + ": its leader " + std::to_string(p->leader) +
                     " did not answer ListOffsets within 30 s");
                return std::nullopt;
            }
            std::this_thread::sleep_for(100ms);
        }
        return std::pair{*p, std::move(c)};
    }

    // The high watermark once it reached `want` (polled up to `timeout`), else the last seen.
    static int64_t latest_reaching(kafka_client& c, const std::string& topic, int64_t want,
                                   std::chrono::milliseconds timeout) {
        const auto deadline = clock_type::now() + timeout;
        int64_t seen = latest_offset(c, topic);
        while (seen < want && clock_type::now() < deadline) {
            std::this_thread::sleep_for(100ms);
            seen = latest_offset(c, topic);
        }
        return seen;
    }

    void rf1() {
        auto l = leader_of(rf1_topic, 1);
        if (!l) {
            return;
        }
        auto& c = *l->second;
        for (int i = 0; i < _r.rf1_attempts; ++i) {
            auto [error, offset] = produce_one(c, rf1_topic, "rf1-" + std::to_string(i), -1);
            if (error == 0) {
                ++_r.rf1_accepted;
            } else {
                ++_r.rf1_errors[error];
            }
        }
        _r.rf1_hw = latest_reaching(c, rf1_topic, _r.rf1_accepted, 5s);
        print_measured(
            _r.target,
            "RF=1, min.insync.replicas 2: acks=all accepted %d/%d (errors: %s), high watermark "
            "%lld: %s",
            _r.rf1_accepted, _r.rf1_attempts, answers(_r.rf1_errors).c_str(),
            static_cast<long long>(_r.rf1_hw), describe(l->first).c_str());
    }

    // "first" acked with acks=all, then until every replica holds the same batches and the high
    // watermark is 1: the partition then, or nullopt (noted).
    std::optional<partition_info> first_record_everywhere() {
        auto l = leader_of(guarded_topic, 3);
        if (!l) {
            return std::nullopt;
        }
        auto [error, offset] = produce_one(*l->second, guarded_topic, "first", -1);
        if (error != 0) {
            note("\"first\" with acks=all: error " + std::to_string(error));
            return std::nullopt;
        }
        const auto deadline = clock_type::now() + 60s;
        while (true) {
            std::vector<std::vector<uint8_t>> logs;
            for (int32_t r : l->first.replicas) {
                logs.push_back(_t.replica_batches(static_cast<size_t>(r), guarded_topic, 0));
            }
            bool equal = logs.size() == 3 && !logs[0].empty();
            for (const auto& log : logs) {
                equal = equal && log == logs[0];
            }
            auto p = partition_seen(_t, guarded_topic, static_cast<size_t>(l->first.leader));
            if (equal && p && p->isr.size() == 3 && p->leader == l->first.leader &&
                latest_offset(*l->second, guarded_topic) == 1) {
                print_measured(_r.target,
                               "\"first\" on all 3 replicas (%zu bytes each), high watermark 1: %s",
                               logs[0].size(), describe(*p).c_str());
                return p;
            }
            if (clock_type::now() >= deadline) {
                note("\"first\" never on all 3 replicas with high watermark 1: " +
                     (p ? describe(*p) : std::string("no partition")));
                return std::nullopt;
            }
            std::this_thread::sleep_for(100ms);
        }
    }

    void isr_below_min_insync() {
        auto before = first_record_everywhere();
        if (!before) {
            return;
        }
        const int32_t leader = before->leader;
        std::vector<size_t> followers;
        for (int32_t r : before->replicas) {
            if (r != leader) {
                followers.push_back(static_cast<size_t>(r));
            }
        }
        // One follower killed, the other shut down cleanly: both ways out of the ISR.
        const auto t0 = clock_type::now();
        _t.kill9(followers[0]);
        const bool clean = _t.sigterm(followers[1]);
        print_measured(
            _r.target, "follower %zu killed (kill -9), follower %zu stopped (SIGTERM%s) in %ld ms",
            followers[0], followers[1], clean ? "" : ", did not exit: killed", ms_since(t0));
        std::string why;
        auto alone = wait_for_partition(
            _t, guarded_topic,
            [leader](const partition_info& p) {
                return p.leader == leader && p.isr == std::vector<int32_t>{leader};
            },
            std::chrono::milliseconds(_t.session_timeout_ms()) * 3 + 30s, &why,
            static_cast<size_t>(leader));
        _r.isr_shrink_ms = ms_since(t0);
        if (!alone) {
            note("the ISR never shrank to the leader " + std::to_string(leader) + ": " + why);
            return;
        }
        _r.isr_alone = describe(*alone);
        print_measured(_r.target, "ISR of the leader alone after %ld ms: %s", _r.isr_shrink_ms,
                       _r.isr_alone.c_str());

        kafka_client c(_t.port(static_cast<size_t>(leader)));
        c.set_read_timeout(15s);
        _r.hw_before = latest_offset(c, guarded_topic);
        for (int i = 0; i < _r.acks_all_attempts; ++i) {
            auto [error, offset] =
                produce_one(c, guarded_topic, "refused-" + std::to_string(i), -1);
            if (error == not_enough_replicas) {
                ++_r.refused;
            } else {
                ++_r.refused_otherwise[error];
            }
        }
        for (int i = 0; i < _r.acks_one_attempts; ++i) {
            auto [error, offset] = produce_one(c, guarded_topic, "acks1-" + std::to_string(i), 1);
            if (error == 0) {
                ++_r.accepted;
            } else {
                ++_r.acks_one_errors[error];
            }
        }
        _r.hw_after = latest_offset(c, guarded_topic);
        _r.measured = true;
        print_measured(_r.target,
                       "ISR 1 < min.insync.replicas 2: acks=all refused %d/%d (other answers: %s), "
                       "acks=1 accepted %d/%d (errors: %s), high watermark %lld before, %lld after",
                       _r.refused, _r.acks_all_attempts, answers(_r.refused_otherwise).c_str(),
                       _r.accepted, _r.acks_one_attempts, answers(_r.acks_one_errors).c_str(),
                       static_cast<long long>(_r.hw_before), static_cast<long long>(_r.hw_after));

        heal(followers, leader);
    }

    void heal(const std::vector<size_t>& followers, int32_t leader) {
        const auto t0 = clock_type::now();
        for (size_t f : followers) {
            if (!_t.restart(f, true)) {
                note("follower " + std::to_string(f) + " did not restart");
            }
        }
        std::string why;
        auto healed = wait_for_partition(
            _t, guarded_topic,
            [](const partition_info& p) { return p.leader >= 0 && p.isr.size() == 3; }, 90s, &why,
            static_cast<size_t>(leader));
        if (!healed) {
            note("the ISR was not 3 again within 90 s of the restarts: " + why);
            return;
        }
        _r.healed = true;
        kafka_client c(_t.port(static_cast<size_t>(healed->leader)));
        c.set_read_timeout(15s);
        // A follower joins the ISR once it reached the high watermark; the acks=1 records are
        // committed as the followers fetch them: polled for up to 15 s.
        const int64_t want = 1 + _r.accepted;
        _r.hw_healed = latest_reaching(c, guarded_topic, want, 15s);
        print_measured(
            _r.target, "ISR 3 again %ld ms after the restarts began: %s; high watermark %lld",
            ms_since(t0), describe(*healed).c_str(), static_cast<long long>(_r.hw_healed));
        auto log = read_partition(_t.bootstrap(), guarded_topic, &_r.read_error, 30s);
        _r.records_read = log.size();
        for (const auto& r : log) {
            _r.values_read.push_back(r.value);
        }
        std::vector<std::string> want_values = {"first"};
        for (int i = 0; i < _r.accepted; ++i) {
            want_values.push_back("acks1-" + std::to_string(i));
        }
        if (_r.values_read != want_values) {
            std::string got;
            for (const auto& v : _r.values_read) {
                got += v + " ";
            }
            note("read back " + std::to_string(log.size()) + " records, not \"first\" and the " +
                 std::to_string(_r.accepted) + " accepted acks=1 ones: " + got +
                 (_r.read_error.empty() ? "" : "(" + _r.read_error + ")"));
        }
    }

    power_cut_target& _t;
    min_insync_result _r;
};

}  // namespace

std::string min_insync_result::table_line() const {
    std::ostringstream out;
    out << target << " isr_below_min_insync: ";
    if (!measured) {
        out << "NOT MEASURED";
        return out.str();
    }
    out << "refused " << refused << "/" << acks_all_attempts << ", acks1 accepted " << accepted
        << "/" << acks_one_attempts << ", hw before " << hw_before << " after " << hw_after
        << ", after heal " << hw_healed << ", records read " << records_read;
    return out.str();
}

std::string min_insync_result::rf1_table_line() const {
    std::ostringstream out;
    out << target << " rf1_min_insync_2: acks=all accepted " << rf1_accepted << "/" << rf1_attempts
        << " (errors: " << answers(rf1_errors) << "), hw " << rf1_hw;
    return out.str();
}

min_insync_result run_min_insync(power_cut_target& target) {
    return min_insync_run(target).go();
}

}  // namespace spool::tests::kafka_reference
