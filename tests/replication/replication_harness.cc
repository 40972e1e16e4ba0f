#include "tests/replication/replication_harness.h"

#include "tests/durability/admin_requests.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace spool::tests::replication {

using clock_type = std::chrono::steady_clock;

std::string create_replicated_topic(uint16_t port, const std::string& name, int32_t partitions,
                                    int16_t replication_factor,
                                    const std::map<std::string, std::string>& configs) {
    try {
        kafka_client c(port);
        c.set_read_timeout(40s);
        auto answer = create_topic(c, name, partitions, configs, replication_factor);
        if (answer.error_code == 0) {
            return {};
        }
        return "CreateTopics " + name + " (RF " + std::to_string(replication_factor) +
               ") answered " + std::to_string(answer.error_code) + ": " + answer.message;
    } catch (const std::exception& e) {
        return std::string("CreateTopics: ") + e.what();
    }
}

std::optional<partition_info> partition_seen(cluster_harness& c, size_t observer,
                                             const std::string& topic, int32_t partition) {
    auto v = c.metadata(observer, {topic});
    if (!v) {
        return std::nullopt;
    }
    const auto* t = v->topic(topic);
    if (t == nullptr || t->error != 0) {
        return std::nullopt;
    }
    for (const auto& p : t->partitions) {
        if (p.index == partition) {
            return p;
        }
    }
    return std::nullopt;
}

namespace {

std::optional<partition_info> wait_for_partition(
    cluster_harness& c, size_t observer, const std::string& topic, int32_t partition,
    const std::function<bool(const partition_info&)>& pred, std::chrono::milliseconds timeout,
    std::string* why) {
    auto deadline = clock_type::now() + timeout;
    std::string last = "no answer from broker " + std::to_string(observer);
    while (true) {
        if (auto p = partition_seen(c, observer, topic, partition)) {
            if (pred(*p)) {
                return p;
            }
            last = describe(*p);
        }
        if (clock_type::now() >= deadline) {
            if (why != nullptr) {
                *why = "broker " + std::to_string(observer) + " last showed " + last;
            }
            return std::nullopt;
        }
        std::this_thread::sleep_for(25ms);
    }
}

}  // namespace

std::optional<partition_info> wait_for_leader_change(cluster_harness& c, size_t observer,
                                                     const std::string& topic, int32_t partition,
                                                     int32_t old_leader, int32_t old_epoch,
                                                     std::chrono::milliseconds timeout,
                                                     std::string* why) {
    return wait_for_partition(
        c, observer, topic, partition,
        [&](const partition_info& p) {
            return p.leader >= 0 && p.leader != old_leader && p.leader_epoch > old_epoch;
        },
        timeout, why);
}

std::optional<partition_info> wait_for_isr_size(cluster_harness& c, size_t observer,
                                                const std::string& topic, int32_t partition,
                                                size_t isr_size, std::chrono::milliseconds timeout,
                                                std::string* why) {
    return wait_for_partition(
        c, observer, topic, partition,
        [&](const partition_info& p) { return p.leader >= 0 && p.isr.size() == isr_size; }, timeout,
        why);
}

std::optional<partition_info> three_replicas_in_sync(cluster_harness& c, const std::string& topic,
                                                     std::string* why) {
    if (auto failed =
            create_replicated_topic(c.port(0), topic, 1, 3, {{"min.insync.replicas", "2"}});
        !failed.empty()) {
        *why = "CreateTopics: " + failed;
        return std::nullopt;
    }
    auto state = wait_for_isr_size(c, 0, topic, 0, 3, 20s, why);
    if (!state) {
        return std::nullopt;
    }
    const auto leader = static_cast<size_t>(state->leader);
    if (auto e = cluster::produce_when_open(c.port(leader), topic, 0, {"first"}); e != 0) {
        *why = "the first record got error " + std::to_string(e);
        return std::nullopt;
    }
    return state;
}

size_t other_than(size_t a, size_t b) {
    for (size_t i = 0;; ++i) {
        if (i != a && i != b) {
            return i;
        }
    }
}

producer_load::producer_load(std::string bootstrap, std::string topic, int records_per_second,
                             std::map<std::string, std::string> settings)
    : _bootstrap(std::move(bootstrap)),
      _topic(std::move(topic)),
      _rate(records_per_second),
      _settings(std::move(settings)) {}

producer_load::~producer_load() {
    if (_thread.joinable()) {
        finish(10s);
    }
}

void producer_load::start() {
    _thread = std::thread([this] { run(); });
}

bool producer_load::wait_acked(uint64_t n, std::chrono::milliseconds timeout) const {
    auto deadline = clock_type::now() + timeout;
    while (_acked_count.load() < n) {
        if (clock_type::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

void producer_load::finish(std::chrono::milliseconds flush_timeout) {
    _flush_timeout_ms = flush_timeout.count();
    _stop = true;
    if (_thread.joinable()) {
        _thread.join();
    }
}

void producer_load::run() {
    acked_producer producer(_bootstrap, _topic, _settings);
    // Paced in 10 ms ticks: a steady stream, so every fault finds records in flight.
    const auto tick = 10ms;
    const double per_tick = _rate / 100.0;
    double owed = 0;
    uint64_t next = 0;
    auto next_tick = clock_type::now();
    auto last_ack = clock_type::now();
    while (!_stop.load()) {
        owed += per_tick;
        while (owed >= 1 && producer.produce(record_id(next))) {
            ++next;
            owed -= 1;
        }
        owed = std::min(owed, per_tick * 10);  // a full local queue does not bank a burst
        _queued = next;
        next_tick += tick;
        auto wait =
            std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - clock_type::now());
        producer.poll(static_cast<int>(std::max<int64_t>(wait.count(), 0)));
        const uint64_t acked = producer.acked().size();
        const auto now = clock_type::now();
        const bool reset = _gap_reset.exchange(false);
        if (acked != _acked_count.load() || reset) {
            last_ack = now;  // (a reset also restarts the count from here)
        }
        const auto gap =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - last_ack).count();
        if (gap > _longest_gap_ms.load()) {
            _longest_gap_ms = gap;
        }
        _acked_count = acked;
        if (!producer.fatal_error().empty()) {
            break;
        }
    }
    _flushed = producer.flush(std::chrono::milliseconds(_flush_timeout_ms.load()));
    _unanswered = static_cast<size_t>(producer.outq_len());
    _fatal = producer.fatal_error();
    _acked = producer.acked();
    _failed = producer.failed();
    _acked_count = _acked.size();
}

log_check check_log(const std::string& bootstrap, const std::string& topic,
                    const std::map<std::string, int64_t>& acked) {
    log_check c;
    auto log = read_partition(bootstrap, topic, &c.read_error);
    c.audit = audit(acked, log);
    c.records = log.size();
    std::set<std::string> seen;
    int64_t previous = -1;
    for (const auto& r : log) {
        if (c.first_offset < 0) {
            c.first_offset = r.offset;
        } else if (r.offset != previous + 1) {
            ++c.gaps;
        }
        previous = r.offset;
        if (!seen.insert(r.value).second) {
            ++c.repeated_values;
        }
        if (!acked.contains(r.value)) {
            ++c.unacknowledged;
        }
    }
    return c;
}

std::string describe(const log_check& c) {
    std::ostringstream out;
    out << "acked " << c.audit.acked << ", lost " << c.audit.lost << ", dup " << c.audit.duplicated
        << ", moved " << c.audit.moved << "; log: " << c.records << " records from offset "
        << c.first_offset << ", gaps " << c.gaps << ", repeated " << c.repeated_values
        << ", unacknowledged " << c.unacknowledged;
    if (!c.read_error.empty()) {
        out << "; read error: " << c.read_error;
    }
    for (const auto& e : c.audit.examples) {
        out << "\n  " << e;
    }
    return out.str();
}

std::string spread(std::vector<long> ms) {
    if (ms.empty()) {
        return "-";
    }
    std::sort(ms.begin(), ms.end());
    return std::to_string(ms.front()) + "/" + std::to_string(ms[ms.size() / 2]) + "/" +
           std::to_string(ms.back()) + " ms";
}

}  // namespace spool::tests::replication
