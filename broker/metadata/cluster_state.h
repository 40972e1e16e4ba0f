#pragma once

// The cluster's metadata tables as plain values: topics (name, Kafka topic id, partitions with
// leader/epoch/replicas/ISR, config overrides), dynamic broker configs, and the producer id
// counter, and the ACL bindings (their index, shared between snapshots until they change). A
// store hands out immutable snapshots of this; handlers read them without locks.

#include "broker/config/topic_config.h"
#include "broker/metadata/features.h"
#include "broker/security/acl_index.h"
#include "protocol/wire/uuid.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace spool::broker::metadata {

// One listener a broker advertises (Metadata's broker entries carry the one whose name matches
// the listener the request came in on).
struct broker_endpoint {
    std::string listener;  // e.g. "PLAINTEXT"
    std::string host;
    int32_t port = 0;
    std::string security_protocol = "PLAINTEXT";

    bool operator==(const broker_endpoint&) const = default;
};

// A live broker: present while its registration (an etcd lease, or the embedded store's own
// broker) lives. incarnation_id is new on every process start; log_dir_id is stable for a data
// directory (a restarted broker on the same directory replaces its own stale registration).
//
// Incarnations (Kafka's broker epochs and fencing): every registration of an etcd cluster's
// broker starts fenced. A fenced broker is live but not eligible: it may not lead, join an ISR
// or take new replicas, and the controller moves its leaderships at epoch + 1 and takes it out
// of every ISR (controller_plan.h). The controller unfences it (rewrites the registration with
// fenced false) once its logs are recovered and nothing of that is left to do. So a broker that
// restarted quickly, possibly with less on disk than it had acknowledged, never leads at the
// epoch of its previous life, and followers never truncate to what it lost.
struct broker_registration {
    int32_t node_id = -1;
    std::string incarnation_id;
    std::string log_dir_id;
    std::optional<std::string> rack;
    std::vector<broker_endpoint> endpoints;
    // Written by the broker: false until its logs are open and recovered (only then may the
    // controller unfence it).
    bool fenced = false;
    bool recovered = true;
    // How this incarnation started (KIP-966): without the log dir's clean-shutdown marker
    // (kill -9, a crash, a power cut: unsynced records may be gone), and whether its log
    // directory is not the one this node id last registered with (a replaced or wiped volume,
    // KIP-858: everything it held is gone).
    bool unclean_shutdown = false;
    bool directory_changed = false;
    // The registration record's etcd mod_revision and lease (0 embedded), for the controller's
    // compare-and-swap when it unfences the broker. Not part of the stored value.
    int64_t record_revision = 0;
    int64_t lease = 0;

    const broker_endpoint* endpoint(std::string_view listener) const {
        for (const auto& e : endpoints) {
            if (e.listener == listener) {
                return &e;
            }
        }
        return nullptr;
    }
    bool operator==(const broker_registration&) const = default;
};

struct partition_state {
    int32_t partition = 0;
    int32_t leader = -1;  // -1: no leader (unplaced, or every eligible replica is offline)
    int32_t leader_epoch = 0;
    // Bumped on every change of this partition's state (KRaft's partition epoch); compared by
    // the ISR updates of replication.
    int32_t partition_epoch = 0;
    std::vector<int32_t> replicas;  // empty: not placed yet by the controller
    std::vector<int32_t> isr;
    // Revision of this partition's record in the cluster store (etcd's mod_revision; 0: no
    // record yet), for the controller's compare-and-swap. The embedded store leaves it 0.
    int64_t record_revision = 0;
    // A partition reassignment (AlterPartitionReassignments, KIP-455; controller_reassign.h).
    // target_replicas: the replicas asked for, written by the broker that took the request
    // (empty: none asked, or cancelled). adding_replicas / removing_replicas: written by the
    // controller while `replicas` is target plus the original replicas (KRaft's
    // PartitionRecord fields of the same names); empty when no move is under way.
    std::vector<int32_t> target_replicas;
    std::vector<int32_t> adding_replicas;
    std::vector<int32_t> removing_replicas;
    // KIP-966's eligible leader replicas: members the controller took out of the ISR while it
    // had fewer than min.insync.replicas members. No acks=all write is accepted while the ISR is
    // that small, so such a member holds every record acknowledged to an acks=all producer and
    // may be elected when no ISR member is eligible. (The strict min ISR rule, Kafka's and
    // replication::partition's, also stops the high watermark there, so acks=0/1 records written
    // meanwhile, which it may lack, were never committed.) Removed when it rejoins the ISR, when it comes back from an unclean
    // shutdown or with another directory, and cleared once the ISR has min.insync.replicas
    // members again.
    std::vector<int32_t> elr;
    // The leader before the partition went leaderless (-1: it has a leader, or never had one):
    // what an operator reads to know whose log was the newest.
    int32_t last_known_leader = -1;

    bool placed() const { return !replicas.empty(); }
    // A reassignment is asked for or under way.
    bool reassigning() const {
        return !target_replicas.empty() || !adding_replicas.empty() || !removing_replicas.empty();
    }

    bool operator==(const partition_state&) const = default;
};

struct topic_metadata {
    std::string name;
    protocol::uuid id;
    std::vector<partition_state> partitions;  // index == partition number
    // Replicas of each new partition (CreateTopics' replication factor, kept in the topic
    // record; a record written before it was kept reads as the replica count of its first
    // placed partition, or 1).
    int16_t replication_factor = 1;
    config::topic_overrides configs;
    // Revision of the topic's record in the cluster store (etcd's mod_revision; 0 embedded).
    int64_t record_revision = 0;

    // Whether `partition` names one of this topic's partitions (negative never does).
    bool has_partition(int32_t partition) const {
        return partition >= 0 && static_cast<size_t>(partition) < partitions.size();
    }

    bool operator==(const topic_metadata&) const = default;
};

// ElectLeaders' election types (Kafka's ElectionType, KIP-460).
enum class election_type : int8_t {
    preferred = 0,  // the first replica leads again, if it is live, eligible and in sync
    unclean = 1,    // a partition without a leader gets one, out of sync if it must
};

// An ElectLeaders request waiting for the controller (etcd_layout.h: P/elections/<id>): the
// controller carries it out (controller_elections.h) and deletes it.
struct election_request {
    election_type type = election_type::preferred;
    std::map<std::string, std::vector<int32_t>, std::less<>> partitions;  // topic -> partitions

    bool operator==(const election_request&) const = default;
};

struct cluster_state {
    std::string cluster_id;
    // Bumped on every change; lets caches notice staleness cheaply.
    int64_t version = 0;
    std::map<std::string, topic_metadata, std::less<>> topics;
    std::unordered_map<protocol::uuid, std::string> topic_names;  // id -> name
    // Dynamic broker configs: "" = cluster default, "<node id>" = one broker.
    std::map<std::string, std::map<std::string, std::string>> broker_configs;
    // SCRAM credentials (AlterUserScramCredentials): user -> mechanism ("SCRAM-SHA-256") ->
    // Kafka's credential text (broker/security/scram.h: salt, stored and server keys, iterations).
    std::map<std::string, std::map<std::string, std::string>> user_scram;
    // Dynamic group configs (resource type GROUP, KIP-848/KIP-932): group id -> key -> value, as
    // set; a group may have configs before it exists, and they outlive its deletion (Kafka).
    std::map<std::string, std::map<std::string, std::string>> group_configs;
    // Next producer id to hand out.
    int64_t next_producer_id = 0;
    // Live brokers by node id, and the current controller (-1: none elected right now).
    std::map<int32_t, broker_registration> brokers;
    int32_t controller_id = -1;

    // Live brokers in controlled shutdown (store::shut_down_gracefully): still serving, but the
    // controller moves their leaderships away, takes them out of ISRs and places nothing new on
    // them.
    std::set<int32_t> shutting_down;
    // Brokers being decommissioned (P/decommission/<id>, decommission.h), each with the
    // partitions its decommission reassigned: they keep serving and leading until their
    // replicas moved, but placement gives them nothing new.
    std::map<int32_t, std::vector<std::pair<std::string, int32_t>>> decommissioning;

    // The finalized feature levels (features.h): metadata.version, and transaction.version once
    // an operator finalized one.
    finalized_features features;
    // What each broker's binary supports, as it stored it at start (etcd only; the embedded
    // store's one broker is this binary). Kept after a broker leaves: compare the incarnation.
    std::map<int32_t, broker_features> broker_support;

    // ElectLeaders requests the controller has not handled yet, by request id.
    std::map<std::string, election_request, std::less<>> elections;

    // The ACL bindings (Kafka keeps them in the metadata log), indexed for the authorizer;
    // never null. A new index is built only when the bindings change, so copying a state shares
    // it.
    security::acl_snapshot acls = std::make_shared<const security::acl_index>();

    bool is_live(int32_t node_id) const { return brokers.contains(node_id); }
    // Live, but a new incarnation the controller has not unfenced yet.
    bool is_fenced(int32_t node_id) const {
        auto it = brokers.find(node_id);
        return it != brokers.end() && it->second.fenced;
    }
    // May lead, join an ISR and take new replicas: live, unfenced and not in controlled
    // shutdown.
    bool eligible(int32_t node_id) const {
        auto it = brokers.find(node_id);
        return it != brokers.end() && !it->second.fenced && !shutting_down.contains(node_id);
    }
    int32_t eligible_broker_count() const {
        return static_cast<int32_t>(
            std::count_if(brokers.begin(), brokers.end(), [this](const auto& b) {
                return !b.second.fenced && !shutting_down.contains(b.first);
            }));
    }
    // The replicas of p whose broker is not live (Metadata's offline_replicas).
    std::vector<int32_t> offline_replicas(const partition_state& p) const {
        std::vector<int32_t> out;
        std::copy_if(p.replicas.begin(), p.replicas.end(), std::back_inserter(out),
                     [this](int32_t r) { return !is_live(r); });
        return out;
    }

    const topic_metadata* find(std::string_view name) const {
        auto it = topics.find(name);
        return it == topics.end() ? nullptr : &it->second;
    }
    const topic_metadata* find(const protocol::uuid& id) const {
        auto it = topic_names.find(id);
        return it == topic_names.end() ? nullptr : find(it->second);
    }
};

using cluster_snapshot = std::shared_ptr<const cluster_state>;

}  // namespace spool::broker::metadata
