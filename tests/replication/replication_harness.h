#pragma once

// What the replication fault suite adds to the cluster harness (tests/cluster/cluster_harness.h):
// replicated topics, waits on one partition's leader and ISR as a broker's Metadata shows them,
// a producer load on a thread of its own, and the figures the suite prints.
//
//   producer_load   one acked_producer (tests/durability/rdkafka_client.h: idempotent, acks=all,
//                   the offset each record was acknowledged at) owned by one thread that queues
//                   records at a fixed rate until stopped, so the test thread can inject faults
//                   while records are in flight.
//
// Every wait is bounded and reports what it last saw. Threading: test thread only, except
// producer_load's own thread, which alone touches its producer.

#include "tests/cluster/cluster_harness.h"
#include "tests/durability/rdkafka_client.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::replication {

using cluster::cluster_harness;
using cluster::metadata_view;
using cluster::partition_info;
using namespace std::chrono_literals;

constexpr int16_t not_enough_replicas = 19;

// CreateTopics (v5) through broker `port` with a replication factor and configs; empty on
// success, else the error code and message.
std::string create_replicated_topic(uint16_t port, const std::string& name, int32_t partitions,
                                    int16_t replication_factor,
                                    const std::map<std::string, std::string>& configs);

// One partition as broker `observer` shows it; nullopt when it does not answer or lacks it.
std::optional<partition_info> partition_seen(cluster_harness& c, size_t observer,
                                             const std::string& topic, int32_t partition);

// Polls `observer` until the partition has a leader other than `old_leader` (-1: any leader)
// at a leader epoch above `old_epoch`; the partition as seen then, or nullopt (`why` says what
// it last saw).
std::optional<partition_info> wait_for_leader_change(cluster_harness& c, size_t observer,
                                                     const std::string& topic, int32_t partition,
                                                     int32_t old_leader, int32_t old_epoch,
                                                     std::chrono::milliseconds timeout,
                                                     std::string* why);

// Polls `observer` until the partition has a leader and `isr_size` ISR members.
std::optional<partition_info> wait_for_isr_size(cluster_harness& c, size_t observer,
                                                const std::string& topic, int32_t partition,
                                                size_t isr_size, std::chrono::milliseconds timeout,
                                                std::string* why);

// describe(partition_info): cluster_harness.h.

// Creates `topic` (one partition, replication factor 3, min.insync.replicas=2) through broker 0,
// waits until all three replicas are in its ISR and its leader acknowledged a first record
// ("first"): the partition then, or nullopt with `why` set.
std::optional<partition_info> three_replicas_in_sync(cluster_harness& c, const std::string& topic,
                                                     std::string* why);

// A broker that is not `a` (nor `b`): where to watch a fault on `a` from.
size_t other_than(size_t a, size_t b = SIZE_MAX);

class producer_load {
public:
    // Queues about `records_per_second` records ("rec-<n>") to partition 0 of `topic`.
    producer_load(std::string bootstrap, std::string topic, int records_per_second,
                  std::map<std::string, std::string> settings = {});
    ~producer_load();
    producer_load(const producer_load&) = delete;
    producer_load& operator=(const producer_load&) = delete;

    void start();
    uint64_t queued() const { return _queued.load(); }
    uint64_t acked() const { return _acked_count.load(); }
    // Waits until at least `n` records are acknowledged; false at the timeout.
    bool wait_acked(uint64_t n, std::chrono::milliseconds timeout) const;
    // Stops queueing, waits up to `flush_timeout` for every queued record to be answered, and
    // joins the thread. The results below are readable afterwards.
    void finish(std::chrono::milliseconds flush_timeout);
    // The longest time between two acknowledgements (sampled every 10 ms tick) since the last
    // reset: how long a fault stalled the producer.
    std::chrono::milliseconds longest_ack_gap() const {
        return std::chrono::milliseconds(_longest_gap_ms.load());
    }
    void reset_longest_ack_gap() {
        _longest_gap_ms = 0;
        _gap_reset = true;
    }

    bool flushed() const { return _flushed; }
    size_t unanswered() const { return _unanswered; }
    const std::string& fatal_error() const { return _fatal; }
    const std::map<std::string, int64_t>& acked_offsets() const { return _acked; }
    const std::map<std::string, std::string>& failed() const { return _failed; }

private:
    void run();

    std::string _bootstrap;
    std::string _topic;
    int _rate;
    std::map<std::string, std::string> _settings;
    std::thread _thread;
    std::atomic<bool> _stop{false};
    std::atomic<int64_t> _flush_timeout_ms{0};
    std::atomic<uint64_t> _queued{0};
    std::atomic<uint64_t> _acked_count{0};
    std::atomic<int64_t> _longest_gap_ms{0};
    std::atomic<bool> _gap_reset{false};
    // Written by the thread, read after join.
    bool _flushed = false;
    size_t _unanswered = 0;
    std::string _fatal;
    std::map<std::string, int64_t> _acked;
    std::map<std::string, std::string> _failed;
};

// The partition read back, checked against what was acknowledged: the audit of
// tests/durability plus the log's own shape.
struct log_check {
    ack_audit audit;
    size_t records = 0;
    int64_t first_offset = -1;
    uint64_t gaps = 0;             // offsets not following the previous one by 1
    uint64_t repeated_values = 0;  // a value in the log more than once (acknowledged or not)
    uint64_t unacknowledged = 0;   // in the log, never acknowledged (their sends failed)
    std::string read_error;
};
log_check check_log(const std::string& bootstrap, const std::string& topic,
                    const std::map<std::string, int64_t>& acked);
std::string describe(const log_check& c);

// "min/median/max" of a list of durations in ms, for the printed figures.
std::string spread(std::vector<long> ms);

}  // namespace spool::tests::replication
