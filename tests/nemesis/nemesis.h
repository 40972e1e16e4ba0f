#pragma once

// The nemesis suite's library (issue #31; tests/nemesis/README.md): three real brokers on a real
// etcd (tests/cluster's harness), each log directory on its own power-cut mount
// (cluster_options::power_cut_mounts) and each broker reaching etcd through its own proxy
// (etcd_proxy.h); a workload; faults as functions; checkers.
//
// Workload, all on partition 0 of one topic (replication factor 3, min.insync.replicas=2):
//   producer   tests/replication's producer_load: an idempotent acks=all librdkafka producer on
//              its own thread, recording the offset each record was acknowledged at
//   probes     one thread per broker (broker_prober): every 200 ms a raw acks=all Produce of one
//              record to that broker (send and receive times, offset), a ListOffsets latest and
//              earliest, and a Fetch for the high watermark, from that broker
//   group      a librdkafka consumer in a group committing what it consumed every 250 ms and
//              reading the commit back (group_committer)
//
// Checkers (nemesis_fixture::check_all, after the faults):
//   acknowledged records lost, duplicated, moved; offsets contiguous (check_log)
//   replicas byte for byte: equal below their common end, and the same once settled
//   acks in real-time order: a Produce sent after another was acknowledged is acknowledged at a
//     higher offset (two leaders acknowledging at once, or a deposed leader, break it)
//   ListOffsets latest/earliest and the Fetch high watermark never lower than an answer received
//     before the request was sent (any broker)
//   committed group offsets never going backwards (commits, and what OffsetFetch returns)
// and per fault (nemesis_fixture::settle): a new leader epoch after every restarted leader;
// available again (a probe acknowledged) within the session timeout + 5 s, printed always,
// asserted only with SPOOL_ASSERT_TIMING_BOUNDS=1 (label `timing`), within 60 s always.
//
// Threading: the fixture's methods on the test thread; the workload's threads own their clients
// and publish what they saw under a mutex.

#include "tests/cluster/cluster_harness.h"
#include "tests/integration/test_support.h"
#include "tests/nemesis/etcd_proxy.h"
#include "tests/replication/replication_harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace spool::tests::nemesis {

using cluster::cluster_harness;
using cluster::partition_info;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Milliseconds from a to b.
long ms_between(clock_type::time_point a, clock_type::time_point b);

// One broker's answers to the probes.
struct probe_ack {
    size_t broker = 0;
    clock_type::time_point sent;
    clock_type::time_point received;
    int64_t offset = -1;
    std::string value;
};
struct offset_sample {
    size_t broker = 0;
    const char* what = "";  // "ListOffsets latest", "ListOffsets earliest", "Fetch high watermark"
    clock_type::time_point sent;
    clock_type::time_point received;
    int64_t value = -1;
    int32_t leader_epoch = -1;
};

// Real-time order: for each observation B, every observation A received before B was sent must
// not exceed it (strictly below it for acks: a later record). The number of violations, with a
// few described in *examples.
uint64_t ack_order_violations(const std::vector<probe_ack>& acks,
                              std::vector<std::string>* examples);
uint64_t offset_decreases(const std::vector<offset_sample>& samples,
                          std::vector<std::string>* examples);

class broker_prober {
public:
    broker_prober(cluster_harness& cluster, std::string topic);
    ~broker_prober();
    void start();
    void stop();

    std::vector<probe_ack> acks() const;
    std::vector<offset_sample> samples() const;
    // The first ack of a request sent at or after `t`, if any yet.
    std::optional<probe_ack> first_ack_sent_after(clock_type::time_point t) const;
    // Acks from `broker` of requests sent within [from, to].
    std::vector<probe_ack> acks_from(size_t broker, clock_type::time_point from,
                                     clock_type::time_point to) const;
    // value -> offset of every acknowledged probe record (for the log audit).
    std::map<std::string, int64_t> acked_offsets() const;

private:
    void run(size_t broker);

    cluster_harness& _cluster;
    std::string _topic;
    std::vector<uint16_t> _ports;
    std::atomic<bool> _stop{false};
    std::vector<std::thread> _threads;
    mutable std::mutex _mutex;
    std::vector<probe_ack> _acks;
    std::vector<offset_sample> _samples;
};

class group_committer {
public:
    group_committer(std::string bootstrap, std::string topic, std::string group);
    ~group_committer();
    void start();
    void stop();

    struct figures {
        uint64_t commits_ok = 0;
        uint64_t commits_failed = 0;
        uint64_t readbacks = 0;
        uint64_t consumed = 0;
        int64_t last_committed = -1;
        uint64_t backwards = 0;  // commits or read-backs below an earlier acknowledged commit
        std::vector<std::string> examples;
    };
    figures results() const;
    // Waits until `n` commits were acknowledged; false at the timeout.
    bool wait_commits(uint64_t n, std::chrono::milliseconds timeout) const;

private:
    void run();

    std::string _bootstrap;
    std::string _topic;
    std::string _group;
    std::atomic<bool> _stop{false};
    std::thread _thread;
    mutable std::mutex _mutex;
    figures _figures;
};

// What one fault did, for settle(): when it started, from when the cluster owes availability
// again (the fault itself when two brokers stay able to serve, its end when it took all three or
// etcd), the partition before it, and which brokers came back as new processes.
struct fault_record {
    std::string name;
    clock_type::time_point injected;
    clock_type::time_point available_from;
    int32_t leader_before = -1;
    int32_t epoch_before = -1;
    std::vector<size_t> restarted;
};

class nemesis_fixture : public ::testing::Test {
protected:
    static constexpr size_t brokers = 3;

    // flushed: every broker fsyncs every record (log.flush.interval.messages=1, so also
    // __consumer_offsets), as a power cut of all three needs for nothing acknowledged to be lost.
    explicit nemesis_fixture(bool flushed = false);
    ~nemesis_fixture() override;
    void SetUp() override;
    void TearDown() override;

    std::chrono::milliseconds session() const {
        return std::chrono::milliseconds(cluster.options().session_timeout_ms);
    }
    // The partition as the running brokers show it: the answer with the highest leader epoch.
    std::optional<partition_info> partition();
    // Polls partition() until pred holds; nullopt at the timeout (what it saw last in *why).
    std::optional<partition_info> wait_partition(
        const std::function<bool(const partition_info&)>& pred, std::chrono::milliseconds timeout,
        std::string* why);
    // The leader now and a follower (the first other replica), from partition().
    size_t leader();
    size_t follower();

    // Faults. Each returns its record; a fault that could not be injected fails the test
    // (ADD_FAILURE) and says why. Delays are how long the broker, etcd or link stays down.
    fault_record kill9(size_t i, std::chrono::milliseconds restart_delay);
    fault_record sigstop(size_t i, std::chrono::milliseconds duration);
    fault_record power_cut(size_t i, std::chrono::milliseconds restart_delay);
    fault_record power_cut_all(std::chrono::milliseconds restart_delay);
    fault_record replace_volume(size_t i);
    fault_record etcd_pause(std::chrono::milliseconds duration);
    fault_record etcd_kill(std::chrono::milliseconds restart_delay);
    // Broker i cut off from etcd (its proxy refusing or blackholing) for `duration`, with the
    // correct behaviour asserted: it acknowledges nothing sent later than the session timeout
    // (+1 s) into the cut, and its leaderships move to another broker at a new epoch.
    fault_record cut_from_etcd(size_t i, etcd_proxy::mode how, std::chrono::milliseconds duration);
    fault_record failing_disk(size_t i, std::chrono::milliseconds restart_delay);

    // After a fault: the partition led with 3 in sync again (60 s), a new epoch if the leader
    // was restarted, and a probe acknowledged (availability; printed, bound asserted as above).
    void settle(const fault_record& f);
    // Stops the workload and runs every checker.
    void check_all();

    std::vector<std::unique_ptr<etcd_proxy>> proxies;  // before the cluster: its options name them
    cluster_harness cluster;
    const std::string topic = "nemesis";
    std::unique_ptr<replication::producer_load> load;
    std::unique_ptr<broker_prober> probes;
    std::unique_ptr<group_committer> group;

private:
    fault_record begin(std::string name);
    void note(const std::string& what);

    bool _flushed;
    std::set<size_t> _paused;  // SIGSTOPped now: partition() does not ask them
    clock_type::time_point _t0;
    bool _checked = false;
};

}  // namespace spool::tests::nemesis
