#pragma once

// The topic and partition records as the stores write them: plain values shared by the etcd
// store (one value per key, etcd/etcd_layout.h) and the embedded store (its journal,
// embedded/metadata_journal.h), with their JSON codecs and the conversion of a partition
// record to the partition_state of a snapshot and back. Nothing here knows of etcd keys.
//
// Plain functions and values; no state, no threading concerns.

#include "broker/config/topic_config.h"
#include "broker/metadata/cluster_state.h"
#include "broker/security/acl.h"
#include "common/result.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace spool::broker::metadata {

// The most partitions one topic record may claim: bounds what a (possibly hostile) record makes
// a broker allocate. Far above what a cluster of this design serves (100,000 in total, measured).
inline constexpr int32_t max_partitions_per_topic = 1'000'000;

struct topic_record {
    protocol::uuid id;
    int32_t partitions = 0;
    config::topic_overrides configs;
    // 1..32767; 0: the record has none (written before replication existed): the reader
    // takes the replica count of the topic's first placed partition, or 1 (etcd_state).
    int16_t replication_factor = 0;

    bool operator==(const topic_record&) const = default;
};

struct partition_record {
    int32_t leader = -1;
    int32_t leader_epoch = 0;
    int32_t partition_epoch = 0;
    std::vector<int32_t> replicas;
    std::vector<int32_t> isr;
    // A reassignment (cluster_state.h, controller_reassign.h); each written only when not empty.
    std::vector<int32_t> target_replicas;
    std::vector<int32_t> adding_replicas;
    std::vector<int32_t> removing_replicas;
    // KIP-966 (cluster_state.h): written only when not empty / not -1.
    std::vector<int32_t> elr;
    int32_t last_known_leader = -1;

    bool operator==(const partition_record&) const = default;
};

// The two records as JSON values: the etcd store's values (etcd_layout.h encodes them) and the
// embedded store's journal lines (metadata_journal.h) embed them. Decoding is strict: anything
// that is not exactly the expected shape is std::errc::bad_message.
nlohmann::json to_json(const topic_record& r);
result<topic_record> topic_from_json(const nlohmann::json& j);
nlohmann::json to_json(const partition_record& r);
result<partition_record> partition_from_json(const nlohmann::json& j);

// An ACL binding: {"resource_type": "Topic", "name": "t", "pattern_type": "Literal",
// "principal": "User:alice", "host": "*", "operation": "Read", "permission": "Allow"} (Kafka's
// names, acl.h). Decoding also refuses a binding CreateAcls would refuse (invalid_binding).
// The finalized feature levels (features.h): {"metadata.version": 33, "transaction.version": 2
// (only when finalized), "epoch": N}; and a binary's supported ranges {"incarnation_id",
// "features": {"<feature>": [min, max]}}. Levels are checked for shape (0..32767), not support.
nlohmann::json to_json(const finalized_features& f);
result<finalized_features> features_from_json(const nlohmann::json& j);
nlohmann::json to_json(const broker_features& f);
result<broker_features> broker_features_from_json(const nlohmann::json& j);

nlohmann::json to_json(const security::acl_binding& b);
result<security::acl_binding> acl_from_json(const nlohmann::json& j);

// The state of a partition as its record says, and back (partition number and revision are
// the key's business).
partition_state to_state(int32_t partition, const partition_record& r, int64_t mod_revision);
partition_record to_record(const partition_state& p);

}  // namespace spool::broker::metadata
