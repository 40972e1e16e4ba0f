#pragma once

// A real Spool cluster for one test: a real etcd (tests/integration/etcd_process.h) and N real
// spool-broker processes (tests/integration/broker_process.h) on 127.0.0.1, each started with
//
//   --override node.id=<i> --override metadata.store=etcd --override etcd.endpoints=<etcd>
//   --override etcd.prefix=/spool/test-<unique> --override http.listener=127.0.0.1:<port>
//
// plus a short broker.session.timeout.ms (3000 by default) so fault tests run in seconds. Broker
// i has node id i, its own data directory, Kafka port and HTTP port, kept across restarts.
// Faults: kill9/pause/resume/sigterm/restart of one broker, and the etcd process itself; with
// cluster_options::power_cut_mounts also power_cut (its unsynced writes vanish) and
// replace_volume (an empty disk in place of its data).
// Observations go through the Kafka protocol (Metadata, DescribeCluster sent to broker k) and
// HTTP (/readyz), with bounded polling: every wait has a timeout and says what it last saw.
//
// Lifecycle: construct, start(), use, destroy (kills whatever still runs, removes the data).
// Threading: test thread only.

#include "tests/integration/broker_process.h"
#include "tests/integration/etcd_process.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spool::tests {
class unsynced_mount;
}

namespace spool::tests::cluster {

struct broker_info {
    int32_t node_id = -1;
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
};

struct partition_info {
    int32_t index = 0;
    int16_t error = 0;
    int32_t leader = -1;
    int32_t leader_epoch = -1;
    std::vector<int32_t> replicas;
    std::vector<int32_t> isr;
    std::vector<int32_t> offline;
};

struct topic_info {
    int16_t error = 0;
    std::vector<partition_info> partitions;
};

// One Metadata answer, decoded.
struct metadata_view {
    std::vector<broker_info> brokers;
    int32_t controller_id = -1;
    std::string cluster_id;
    std::map<std::string, topic_info> topics;

    const topic_info* topic(const std::string& name) const;
    // A topic known, without error, whose every partition has a leader.
    bool all_led(const std::string& name, size_t partitions) const;
    std::string describe() const;  // for failure messages
};

struct cluster_options {
    size_t brokers = 3;
    int session_timeout_ms = 3000;
    int heartbeat_interval_ms = 500;
    std::vector<std::string> overrides;  // extra key=value for every broker
    // Extra key=value for broker i alone (index i; after `overrides`, so they win): e.g. its own
    // etcd.endpoints, a proxy in front of etcd (tests/nemesis/etcd_proxy.h).
    std::vector<std::vector<std::string>> per_broker_overrides;
    // Called by start() once etcd runs, before any broker starts, with etcd's client port (picked
    // at etcd's first start): e.g. to point those proxies at it.
    std::function<void(uint16_t etcd_client_port)> on_etcd_started;
    // Each broker's log.dirs (its data_dir()/data) on a power-cut file system of its own:
    // tests/durability/unsynced_fs, mounted by start(). Needs FUSE (/dev/fuse, root, the
    // unsynced_fs binary built from libfuse3-dev): start() fails, naming the reason, when a mount
    // cannot be made; a test asking for it is never skipped.
    bool power_cut_mounts = false;
    // Extra key=value for broker i from its Kafka port (the PLAINTEXT listener the harness
    // observes through; after per_broker_overrides): e.g. listeners beside it.
    std::function<std::vector<std::string>(size_t i, uint16_t port)> overrides_for;
    // etcd over TLS (etcd_process::use_tls): its endpoint, and so every broker's
    // etcd.endpoints, is https.
    std::optional<etcd_process::tls_files> etcd_tls;
};

class cluster_harness {
public:
    explicit cluster_harness(cluster_options options = {});
    ~cluster_harness();
    cluster_harness(const cluster_harness&) = delete;
    cluster_harness& operator=(const cluster_harness&) = delete;

    // Starts etcd and every broker, then waits until every broker's Metadata lists all of them
    // and one controller. Empty on success, else what went wrong (with the brokers' log tails).
    // only > 0: starts brokers 0..only-1 alone (the others are set up alike; restart(i) starts
    // them later), as a rollout whose other brokers come late.
    [[nodiscard]] std::string start(std::chrono::milliseconds timeout = std::chrono::seconds(40),
                                    size_t only = 0);

    size_t size() const { return _brokers.size(); }
    etcd_process& etcd() { return *_etcd; }
    broker_process& broker(size_t i) { return *_brokers.at(i); }
    uint16_t port(size_t i) const { return _brokers.at(i)->port(); }
    uint16_t http_port(size_t i) const { return _http_ports.at(i); }
    const std::string& prefix() const { return _prefix; }
    const cluster_options& options() const { return _options; }
    // "127.0.0.1:a,127.0.0.1:b,...": every broker.
    std::string bootstrap() const;

    // Faults on broker i (node id i).
    void kill9(size_t i);
    void pause(size_t i);   // SIGSTOP
    void resume(size_t i);  // SIGCONT
    broker_process::exit_info sigterm(size_t i);
    // Starts broker i again on its data directory and ports; true once its port accepts.
    [[nodiscard]] bool restart(size_t i);
    // A broker with node id `node_id` on a fresh data directory and ports of its own, set up like
    // the others but not started: for the duplicate node.id test.
    std::unique_ptr<broker_process> extra_broker(int32_t node_id);

    // Power loss of broker i (power_cut_mounts only): kill -9, then every file on its volume goes
    // back to its last fsync (unsynced_mount::power_cut), the volume is unmounted and mounted
    // again with what survived. Not restarted: restart(i) is the power coming back. Empty on
    // success, else what went wrong (with the FUSE daemon's log).
    [[nodiscard]] std::string power_cut(size_t i);
    // A replaced disk: an empty volume where broker i's data was (broker i must be down; kill9
    // it first). With power_cut_mounts a new empty backing directory is mounted (the old one is
    // kept aside until the harness goes); else its log.dirs is emptied. Empty on success.
    [[nodiscard]] std::string replace_volume(size_t i);
    // A disk that fails under a live broker (power_cut_mounts only): from now on every read,
    // write and fsync on broker i's volume answers EIO, its unsynced writes gone; the process
    // is left running (it should notice and exit). Empty on success.
    [[nodiscard]] std::string fail_disk(size_t i);
    // After fail_disk: broker i killed if it still runs, its volume unmounted and mounted again
    // with what survived (the disk back after a reboot). Not restarted. Empty on success.
    [[nodiscard]] std::string remount(size_t i);
    // restart(i), again every 200 ms while the broker exits at once, until its port accepts or
    // `timeout` passes (a supervisor restarting it): a broker on a new volume refuses to start
    // while its previous life's registration is still live (broker_session.h). How long it took
    // in ms, or -1; the starts tried in *attempts.
    long restart_when_accepted(size_t i, std::chrono::milliseconds timeout, int* attempts);
    // The unsynced_fs daemon's log of broker i's volume (its "power cut: ..." lines), or "".
    std::string volume_log(size_t i) const;

    // Broker i's Metadata (all topics when `topics` is empty); nullopt when it does not answer.
    std::optional<metadata_view> metadata(size_t i, const std::vector<std::string>& topics = {});
    // The partition of a one-partition topic as the first running broker (from `observer` on)
    // that answers shows it; nullopt when none does.
    std::optional<partition_info> single_partition(const std::string& topic, size_t observer = 0);
    // Polls broker i's Metadata every 50 ms until `pred` holds; the view that satisfied it, or
    // nullopt at the timeout (`last`, when given, gets the last answer seen).
    std::optional<metadata_view> wait_for_metadata(
        size_t i, const std::function<bool(const metadata_view&)>& pred,
        std::chrono::milliseconds timeout, const std::vector<std::string>& topics = {},
        metadata_view* last = nullptr);
    // Every broker shows all `size()` brokers (or `expect_brokers`) and a controller.
    bool wait_for_cluster(std::chrono::milliseconds timeout, size_t expect_brokers = 0,
                          std::string* why = nullptr);

    // GET on broker i's HTTP listener: the status (0 when nothing answered) and body.
    struct http_answer {
        int status = 0;
        std::string body;
    };
    http_answer http_get(size_t i, const std::string& path);
    // Any method (POST, DELETE...) without a body.
    http_answer http_call(size_t i, const std::string& method, const std::string& path);

    // The last lines of every broker's log, for failure messages.
    std::string log_tails(size_t lines = 40) const;

    // Broker i's directory of topic-partition (in its log.dirs), whether or not it exists now.
    std::filesystem::path replica_dir(size_t i, const std::string& topic, int32_t partition) const;
    // The record batches broker i holds for topic-partition, read from its segment files in
    // offset order, each without the zero-filled preallocated tail of an active segment (which
    // storage ignores too): what replicas compare byte for byte. Empty when there are none.
    std::vector<uint8_t> replica_batches(size_t i, const std::string& topic,
                                         int32_t partition) const;

private:
    std::vector<std::string> broker_overrides(int32_t node_id, uint16_t http_port) const;

    cluster_options _options;
    std::string _prefix;
    std::unique_ptr<etcd_process> _etcd;
    std::vector<std::unique_ptr<broker_process>> _brokers;
    std::vector<uint16_t> _http_ports;
    // power_cut_mounts: one mount per broker (on its data_dir()/data), backed under _volumes.
    std::filesystem::path _volumes;
    std::vector<std::unique_ptr<unsynced_mount>> _mounts;
    int _replaced = 0;  // volumes replaced so far: names the next backing directory
};

// "partition P error X leader L epoch E replicas [..] isr [..]": for messages and measurements.
std::string describe(const partition_info& p);

// Creates a topic through broker `port` (CreateTopics v4); the error code (-999: no answer).
int16_t create_topic_via(uint16_t port, const std::string& name, int32_t partitions,
                         int32_t timeout_ms = 30000, std::string* message = nullptr,
                         int16_t replication_factor = 1);

// Creates several topics in one CreateTopics request through broker `port`; each one's error code
// in order (all -999 when nothing answered).
std::vector<int16_t> create_topics_via(uint16_t port, const std::vector<std::string>& names,
                                       int32_t partitions, int32_t timeout_ms = 60000);

// Produces `values` as one batch to topic/partition through broker `port` (Produce v9, acks -1
// unless given); the partition's error code (-999: no answer).
int16_t produce_via(uint16_t port, const std::string& topic, int32_t partition,
                    const std::vector<std::string>& values, int16_t acks = -1);

// produce_via until the leader accepts (a new partition's leader answers NOT_LEADER_OR_FOLLOWER,
// retriable, until its log is open), at most `timeout`; the last error code.
int16_t produce_when_open(uint16_t port, const std::string& topic, int32_t partition,
                          const std::vector<std::string>& values,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));

// One consumer Fetch of topic/partition from `offset` through broker `port` (Fetch `version`,
// topic names: v12 at most; rack_id from v11), max_wait 5 s, min_bytes 1: what it answered.
struct consumer_fetch {
    int16_t error = -1;
    int32_t preferred_read_replica = -2;
    int64_t high_watermark = -1;
    size_t record_bytes = 0;
};
std::optional<consumer_fetch> consumer_fetch_via(uint16_t port, int16_t version,
                                                 const std::string& topic, int32_t partition,
                                                 int64_t offset, const std::string& rack);

// FindCoordinator v3 for a group through broker `port`: {error code, node id} (-999: no answer).
std::pair<int16_t, int32_t> find_coordinator_via(uint16_t port, const std::string& group);

// Runs a shell command (sh -c) killed after `timeout_seconds`; its stdout, and its exit status
// into *exit_code when given (124: timed out).
std::string run_bounded(const std::string& cmd, int timeout_seconds, int* exit_code = nullptr);

}  // namespace spool::tests::cluster
