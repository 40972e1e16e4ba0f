#pragma once

// The power-cut scenarios of tests/cluster/cluster_power_cut_test.cc, written once against a
// small interface so that the same steps run on Spool (tests/cluster/cluster_harness.h) and on
// Apache Kafka (kafka_cluster.h), for the side-by-side counts of issue #31. Three nodes, one
// partition with replication factor 3 and min.insync.replicas=2, the same idempotent acks=all
// librdkafka producer (tests/durability/rdkafka_client.h: acked_producer) and the same audit of
// every acknowledged record: lost, duplicated, moved (found at another offset).
//
//   leader_cut_quick_restart     the leader loses power and is restarted at once
//   follower_cut_then_leader_killed
//                                a follower loses power and is restarted at once, 1,000 more
//                                records are produced, then the leader is killed (kill -9)
//   follower_cut_leader_hangs    the same with the leader hung (SIGSTOP) from before the cut, so
//                                the restarted follower cannot catch up before the leader dies
//   volume_replaced_starts_first all killed, the leader's volume replaced by an empty one, that
//                                node started first and alone, the others 25 s later
//   all_cut_no_flush             every replica loses power at once, no flush policy
//   all_cut_flush_messages_1     the same with the topic's flush.messages=1
//
// Each first produces 20,000 records and waits until every replica holds them (their segment
// files equal byte for byte below the common end), applies the fault, produces 1,000 more once
// the cluster is back, then reads the whole partition back. What a scenario expected and did not
// see (no new leader in time, records not acknowledged after the fault...) is noted, not
// asserted: the caller compares the counts.
//
// Threading: test thread only (the targets' processes die with the thread that started them).

#include "tests/cluster/cluster_harness.h"

#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace spool::tests::kafka_reference {

// One cluster under test: node i has node id i.
class power_cut_target {
public:
    virtual ~power_cut_target() = default;
    virtual std::string name() const = 0;  // "spool", "kafka 4.1.1"
    [[nodiscard]] virtual std::string start() = 0;
    virtual size_t size() const = 0;
    virtual uint16_t port(size_t i) const = 0;
    virtual std::string bootstrap() const = 0;
    virtual bool running(size_t i) = 0;
    virtual int session_timeout_ms() const = 0;
    virtual void kill9(size_t i) = 0;
    // SIGTERM, a clean shutdown, waited for; false when the process did not exit by itself.
    [[nodiscard]] virtual bool sigterm(size_t i) = 0;
    virtual void pause(size_t i) = 0;
    [[nodiscard]] virtual std::string power_cut(size_t i) = 0;
    // Starts node i again; wait: until it serves clients (Spool: its port accepts; Kafka: its
    // broker caught up with the metadata log and was unfenced), else until its process runs.
    [[nodiscard]] virtual bool restart(size_t i, bool wait) = 0;
    [[nodiscard]] virtual std::string replace_volume(size_t i) = 0;
    virtual std::string volume_log(size_t i) const = 0;
    // The record batches node i holds for topic-partition (its segment files in offset order,
    // each cut to whole batches): what replicas compare byte for byte.
    virtual std::vector<uint8_t> replica_batches(size_t i, const std::string& topic,
                                                 int32_t partition) const = 0;
    virtual std::string log_tails(size_t lines = 40) const = 0;
    // What the cluster logged about node i's restarts since mark() (Kafka: its controllers'
    // lines on incarnations and fencing), or "".
    virtual void mark() {}
    virtual std::string events_of(size_t) const { return {}; }
};

enum class scenario {
    leader_cut_quick_restart,
    follower_cut_then_leader_killed,
    follower_cut_leader_hangs,
    volume_replaced_starts_first,
    all_cut_no_flush,
    all_cut_flush_messages_1,
};
const char* scenario_name(scenario s);
std::vector<scenario> all_scenarios();

struct scenario_result {
    std::string target;
    bool audited = false;  // the records were produced and read back: the counts mean something
    // The partition had no leader at the end (no node answered with one): nothing could be read
    // back, so lost counts every acknowledged record although the replicas may still hold them.
    bool offline = false;
    std::string offline_state;  // what the partition looked like then
    uint64_t produced = 0;
    uint64_t acked = 0;
    uint64_t failed = 0;
    uint64_t read_back = 0;
    uint64_t lost = 0;
    uint64_t duplicated = 0;
    uint64_t moved = 0;
    int64_t low = -1;
    int64_t high = -1;
    std::string read_error;
    std::vector<std::string> notes;     // expectations not met, each one line
    std::vector<std::string> examples;  // audit examples
    long ms = 0;                        // the scenario's wall time, start to audit
    std::string summary() const;        // "lost X duplicated Y moved Z of A acked ..."
};

// Starts the target, runs one scenario on it, prints its [ measured ] lines.
scenario_result run_scenario(power_cut_target& target, scenario s);

// "[ measured ] <target>: <printf text>" on stdout, flushed.
void print_measured(const std::string& target, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vprint_measured(const std::string& target, const char* fmt, va_list ap);

// The one partition of `topic` as the first running node from `observer` on that answers shows
// it (Metadata), or nullopt.
std::optional<cluster::partition_info> partition_seen(power_cut_target& t, const std::string& topic,
                                                      size_t observer = 0);

// Polls (every 100 ms, each_poll first when set) until the partition satisfies `pred`; the
// partition then, or nullopt with `why` saying what was seen last.
std::optional<cluster::partition_info> wait_for_partition(
    power_cut_target& t, const std::string& topic,
    const std::function<bool(const cluster::partition_info&)>& pred,
    std::chrono::milliseconds timeout, std::string* why, size_t observer = 0,
    const std::function<void()>& each_poll = {});

// The record batches under log_dir/topic-partition (segments in offset order, whole batches).
std::vector<uint8_t> replica_batches_in(const std::string& log_dir, const std::string& topic,
                                        int32_t partition);

}  // namespace spool::tests::kafka_reference
