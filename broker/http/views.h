#pragma once

// The read-only views the HTTP endpoint needs from the rest of the broker. broker/http
// depends on nothing else in the broker but broker/security: the composition root (broker/app)
// implements each interface with a small adapter over the owning module and passes it in (see
// docs/admin-api.md, "Wiring").
//
// Contract for implementations: each call returns a self-consistent copy (a snapshot) and
// may be called at any time from the HTTP thread, concurrently with the owning module's own
// work. Typical implementations read an atomically published snapshot (the coordinator's
// committed_offsets()) or take the module's lock briefly. Calls must not block for long:
// they hold up every other HTTP client (never the Kafka path).

#include "broker/model/ids.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spool::broker::http {

// ---- cluster (broker/metadata) ----

struct broker_info {
    model::node_id id{0};
    std::string host;
    int32_t port = 0;
    std::optional<std::string> rack;
    // false when the controller has lost the broker's registration/heartbeats.
    bool alive = true;
};

struct partition_info {
    model::partition_id id{0};
    std::optional<model::node_id> leader;  // nullopt: no leader
    model::leader_epoch leader_epoch{0};
    std::vector<model::node_id> replicas;
    std::vector<model::node_id> isr;
};

struct topic_info {
    std::string name;
    bool internal = false;
    // The topic's effective min.insync.replicas.
    int32_t min_insync_replicas = 1;
    std::vector<partition_info> partitions;  // sorted by id
};

struct cluster_snapshot {
    std::string cluster_id;
    std::optional<model::node_id> controller;
    std::vector<broker_info> brokers;  // sorted by id
    std::vector<topic_info> topics;    // sorted by name
};

class cluster_view {
public:
    virtual ~cluster_view() = default;
    virtual cluster_snapshot snapshot() const = 0;
    // Why the metadata store cannot serve changes now (e.g. its etcd is unreachable), which
    // makes /readyz fail; nullopt when it can (the embedded store always can).
    virtual std::optional<std::string> unready_reason() const { return std::nullopt; }
};

// ---- decommission (broker/metadata; the one write the admin API makes) ----

struct decommission_status {
    bool marked = false;  // a decommission of the broker was started and not cancelled
    int32_t partitions_remaining = 0;
    int32_t partitions_moving = 0;
    int32_t partitions_done = 0;
};

class decommission_control {
public:
    enum class outcome {
        ok,
        unknown_broker,  // neither registered nor being decommissioned
        no_replacement,  // some partition has nowhere else to go (RF = brokers left)
        unavailable,     // the metadata store cannot commit now
    };
    struct answer {
        outcome result = outcome::ok;
        std::string message;
    };
    virtual ~decommission_control() = default;
    // Start (or extend to what was placed on it since) / cancel; these wait for the metadata
    // store's commit (bounded by its change timeout), holding up other HTTP clients meanwhile.
    virtual answer start(model::node_id broker) = 0;
    virtual answer cancel(model::node_id broker) = 0;
    // nullopt: the broker is neither registered nor being decommissioned.
    virtual std::optional<decommission_status> status(model::node_id broker) const = 0;
};

// ---- local logs (broker/storage) ----

struct log_info {
    model::topic_partition tp;
    model::offset log_start_offset{0};
    model::offset log_end_offset{0};
    model::offset high_watermark{0};
    uint64_t size_bytes = 0;
    uint64_t segment_count = 0;
};

class log_view {
public:
    virtual ~log_view() = default;
    // Every partition log open on this broker.
    virtual std::vector<log_info> logs() const = 0;
};

// ---- consumer groups (broker/coordinator) ----

struct group_info {
    std::string id;
    std::string state;          // Kafka's names: Empty, PreparingRebalance, Stable, Dead...
    std::string protocol_type;  // "consumer" for Kafka consumers
    int32_t generation = 0;
    int32_t members = 0;
};

struct committed_offset {
    std::string group;
    model::topic_partition tp;
    model::offset offset{-1};
    // The partition leader's high watermark when this broker keeps no log of the partition
    // (asked over the wire, coordinator::remote_watermarks); -1 when unknown or local.
    model::offset remote_high_watermark{-1};
};

class group_view {
public:
    virtual ~group_view() = default;
    // Groups coordinated by this broker.
    virtual std::vector<group_info> groups() const = 0;
    // Committed offsets of those groups. Lag is computed here against the log view's high
    // watermark, so the coordinator need not know about storage.
    virtual std::vector<committed_offset> committed_offsets() const = 0;
};

// ---- users (broker/metadata's SCRAM credentials, the JAAS PLAIN users) ----

// The user store the admin API checks HTTP Basic credentials against: the same one SASL uses.
class credential_view {
public:
    virtual ~credential_view() = default;
    // The user's SCRAM credentials as Kafka's credential text (broker/security/scram.h), by
    // mechanism name ("SCRAM-SHA-512"); empty for an unknown user.
    virtual std::vector<std::pair<std::string, std::string>> scram_credentials(
        const std::string& user) const = 0;
    // The user's PLAIN password from the JAAS configuration; nullopt when it names no such user.
    virtual std::optional<std::string> plain_password(const std::string& user) const = 0;
};

// ---- this broker (static facts from the composition root) ----

struct listener_info {
    std::string name;     // "PLAINTEXT", "http"
    std::string address;  // "host:port"
};

struct broker_identity {
    model::node_id id{0};
    std::string version;
    std::vector<listener_info> listeners;
    std::chrono::system_clock::time_point started_at = std::chrono::system_clock::now();
};

}  // namespace spool::broker::http
