#pragma once

// A real Apache Kafka 4.x cluster for one test, the reference the power-cut scenarios compare
// Spool with (issue #31): N KRaft nodes (3 by default), each broker and controller in one JVM
// (combined mode, a static quorum of every node), started through tests/fixtures/start-kafka.sh
// --foreground as bench/replicated.sh starts them, so the JVM is this process's child (kill -9
// and reaping are the harness's, and a crashed test leaves no JVM behind: PR_SET_PDEATHSIG).
//
// Node i has node.id i, its own client and controller ports (kept across restarts) and its data
// directory data_dir(i) = <temp>/node-i with server.properties and kafka.log; its log.dirs,
// data_dir(i)/logs, holds the partitions AND the metadata log (__cluster_metadata-0, whose
// metadata.log.dir defaults to the first log dir) and, with power_cut_mounts, is a mount of its
// own of tests/durability/unsynced_fs, where a power cut rolls every file back to its last fsync.
//
// Settings comparable with tests/cluster/cluster_harness.h's Spool cluster: broker.session.
// timeout.ms 3000 and broker.heartbeat.interval.ms 500, unclean.leader.election.enable=false,
// Kafka's default flush settings (none), internal topics with replication factor 3 and
// min.insync.replicas 2; topics set their own min.insync.replicas.
//
// A replaced volume is formatted again on the next start as a Kafka operator does with a new
// disk: `kafka-storage format` with the cluster's id and the node's id (the fixture's copy of a
// formatted template, which fsyncs it), a new directory id, and the same static voter set
// (controller.quorum.voters): the node rejoins the quorum as the same voter with an empty
// metadata log and catches up from the others. That is the only course a static quorum offers
// (KIP-853's remove/add-controller needs a dynamic quorum); it is safe while the other voters
// hold the metadata log, as they do here.
//
// Lifecycle: construct, start(), use, destroy (kills the JVMs, unmounts, removes the data;
// SPOOL_KAFKA_REFERENCE_KEEP_LOGS=<dir> keeps each node's kafka.log there).
// Threading: test thread only (the JVMs die with the thread that spawned them).

#include "tests/cluster/cluster_harness.h"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::tests {
class unsynced_mount;
}

namespace spool::tests::kafka_reference {

struct kafka_options {
    size_t nodes = 3;
    int session_timeout_ms = 3000;
    int heartbeat_interval_ms = 500;
    std::vector<std::string> overrides;  // extra key=value for every node
    // Extra key=value for node i alone (after `overrides`): e.g. its broker.rack.
    std::vector<std::vector<std::string>> per_node_overrides;
    bool power_cut_mounts = true;
    // The Kafka version (SPOOL_KAFKA_VERSION for the fixture, jars in the peer cache); empty:
    // scripts/peers/versions.sh's.
    std::string version;
};

class kafka_cluster {
public:
    explicit kafka_cluster(kafka_options options = {});
    ~kafka_cluster();
    kafka_cluster(const kafka_cluster&) = delete;
    kafka_cluster& operator=(const kafka_cluster&) = delete;

    // Mounts the volumes, starts every node, waits until each serves clients and every node's
    // Metadata lists all of them and a controller. Empty on success, else what went wrong.
    [[nodiscard]] std::string start(std::chrono::milliseconds timeout = std::chrono::seconds(120));

    size_t size() const { return _nodes.size(); }
    uint16_t port(size_t i) const { return _nodes.at(i).port; }
    std::string bootstrap() const;  // "127.0.0.1:a,..."
    const kafka_options& options() const { return _options; }
    const std::string& cluster_id() const { return _cluster_id; }
    std::filesystem::path data_dir(size_t i) const { return _nodes.at(i).dir; }
    std::filesystem::path log_dir(size_t i) const { return _nodes.at(i).dir / "logs"; }
    pid_t pid(size_t i) const { return _nodes.at(i).pid; }
    bool running(size_t i);

    // Faults on node i.
    void kill9(size_t i);
    void pause(size_t i);   // SIGSTOP
    void resume(size_t i);  // SIGCONT
    // SIGTERM (a clean shutdown: the broker's controlled shutdown) and waits up to `timeout` for
    // the JVM to exit; false when it did not (it is killed then).
    bool sigterm(size_t i, std::chrono::milliseconds timeout = std::chrono::seconds(60));
    // Starts node i again on its data directory and ports. wait: until it serves clients (its
    // log says "Kafka Server started", which KRaft logs once the broker caught up with the
    // metadata log and was unfenced, and its port accepts), at most `timeout`; else only until
    // the JVM runs. False when it exited or did not get there in time.
    [[nodiscard]] bool restart(size_t i, bool wait = true,
                               std::chrono::milliseconds timeout = std::chrono::seconds(90));
    // Waits for a node started without waiting; as restart(i, true).
    [[nodiscard]] bool wait_ready(size_t i,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(90));
    // Power loss of node i: kill -9, every file on its volume back to its last fsync, the volume
    // unmounted and mounted again. Not restarted. Empty on success.
    [[nodiscard]] std::string power_cut(size_t i);
    // An empty volume where node i's data was (node i must be down); formatted on its next start
    // (see above). Empty on success.
    [[nodiscard]] std::string replace_volume(size_t i);
    std::string volume_log(size_t i) const;

    std::optional<cluster::metadata_view> metadata(size_t i,
                                                   const std::vector<std::string>& topics = {});
    bool wait_for_cluster(std::chrono::milliseconds timeout, std::string* why = nullptr);

    std::string log_text(size_t i) const;
    std::string log_tails(size_t lines = 40) const;
    // What the controllers logged about node i (its incarnations, fencing, unclean shutdowns,
    // and how many registrations they refused) since byte `from` of every node's log, in time
    // order, each as "+N ms message" (N: ms after `since`), trimmed: for the measured lines.
    std::string controller_events(size_t i, const std::vector<size_t>& from,
                                  std::chrono::system_clock::time_point since) const;
    // Each node's log size now: a mark for controller_events.
    std::vector<size_t> log_marks() const;

private:
    struct node {
        std::filesystem::path dir;
        uint16_t port = 0;
        uint16_t controller_port = 0;
        pid_t pid = -1;
        size_t log_mark = 0;  // log size when the current process started
    };
    bool spawn(size_t i);
    std::filesystem::path log_path(size_t i) const { return _nodes.at(i).dir / "kafka.log"; }

    kafka_options _options;
    std::string _cluster_id;
    std::string _voters;
    std::filesystem::path _root;
    std::vector<node> _nodes;
    std::vector<std::unique_ptr<unsynced_mount>> _mounts;
    int _replaced = 0;
};

// Metadata (v12) from the broker on 127.0.0.1:port, decoded; nullopt when it does not answer.
std::optional<cluster::metadata_view> metadata_via(uint16_t port,
                                                   const std::vector<std::string>& topics = {});

// The Kafka version the fixture runs for `version` ("" = scripts/peers/versions.sh's).
std::string kafka_version_of(const std::string& version);

}  // namespace spool::tests::kafka_reference
