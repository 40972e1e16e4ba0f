#pragma once

// Where the cluster's metadata lives in etcd, and how each value is written: the one contract
// between every broker of a cluster (the etcd store, the broker session, the controller). A
// change here is a change of the on-etcd format: every broker of a cluster must agree on it.
//
//     P = etcd.prefix (no trailing slash)
//     P/cluster_id                the 22-char Kafka cluster id, plain text
//     P/brokers/<node id>         broker_registration JSON, under the broker's session lease;
//                                 "fenced", "recovered", "unclean_shutdown" and
//                                 "directory_changed" only when they differ from false, true,
//                                 false, false (cluster_state.h: incarnations)
//     P/broker_dirs/<node id>     the log_dir_id this node id last registered with, plain text
//                                 (no lease: it outlives the broker, so a replaced volume shows)
//     P/controller                controller_record JSON, under the controller's session lease;
//                                 the controller epoch is this key's create_revision
//     P/topics/<name>             topic_record JSON: {"id", "partitions", "replication_factor"
//                                 (absent in records older than replication), "configs"}
//     P/partitions/<name>/<p>     partition_record JSON; absent = not placed yet. A reassignment
//                                 adds "target_replicas" (the request), "adding_replicas" and
//                                 "removing_replicas" (the controller's move), each only while
//                                 not empty; "elr" and "last_known_leader" (KIP-966) likewise
//     P/decommission/<node id>    decommission_record JSON {"partitions":[["t",0],...]}: the
//                                 broker is being drained (no lease: it outlives restarts); the
//                                 partitions are those the decommission reassigned
//     P/broker_configs/<entity>   {"k":"v"}; entity "_default" = cluster default, else node id
//     P/user_scram/<user>         {"SCRAM-SHA-256":"<credential>"}; the user name with '%' and
//                                 '/' written %25 and %2F
//     P/group_configs/<group>     {"k":"v"}: a group's dynamic configs (resource type GROUP);
//                                 the group id with '%' and '/' written %25 and %2F
//     P/producer_ids              next free producer id, decimal text
//     P/shutdown/<node id>        shutdown_record JSON {"incarnation_id"}, under the broker's
//                                 session lease: the broker is in controlled shutdown
//                                 (store::shut_down_gracefully). Counts only while the broker's
//                                 registration has that incarnation (a mark a killed earlier
//                                 process left, until its lease expires, says nothing of the
//                                 next one); goes with the lease when the broker leaves.
//     P/elections/<id>            election_request JSON {"type": "preferred"|"unclean",
//                                 "partitions": {"<topic>": [p, ...]}}: an ElectLeaders request
//                                 (at most max_partitions_per_election partitions; a bigger one
//                                 is several keys), under the session lease of the broker that
//                                 received it and waits for the answer. The controller elects
//                                 what it can (controller_elections.h) and deletes the key once
//                                 nothing in it needs a write; the waiting broker then answers
//                                 from its snapshot. <id> is a fresh Kafka uuid text.
//     P/features                  finalized_features JSON {"metadata.version": 33,
//                                 "transaction.version": 2 (only once finalized), "epoch": N}
//                                 (features.h); absent: metadata.version 32, the layout of
//                                 Spool 0.3. The first broker of a cluster writes it with the
//                                 cluster id; UpdateFeatures rewrites it (compare on its revision)
//     P/supported_features/<id>   {"incarnation_id", "features": {"metadata.version": [32, 33],
//                                 ...}}: what the binary of that node id's incarnation supports
//                                 (no lease; UpdateFeatures checks every live registration
//                                 against it, a registration without a matching one is 0.3's)
//     P/acls/<hex>                an ACL binding's JSON (records.h); <hex> is the lowercase hex of
//                                 that JSON's bytes, so one binding has one key whoever writes
//                                 it (CreateAcls of a binding that exists rewrites the same key)
//
// Decoding never trusts a value: anything that is not exactly the expected shape (bad JSON,
// wrong types, numbers out of range, a topic claiming more partitions than a broker can hold)
// is an error (std::errc::bad_message), never an exception or a huge allocation.
//
// Plain functions and values; no state, no threading concerns.

#include "broker/config/topic_config.h"
#include "broker/metadata/cluster_state.h"
#include "broker/metadata/records.h"
#include "common/result.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::metadata::etcd_layout {

// The key segment of the cluster-wide default broker configs.
inline constexpr std::string_view default_entity = "_default";
// The most partitions one P/elections/<id> record may name: keeps one value far below etcd's
// request size limit (1.5 MiB by default) whatever the topic names.
inline constexpr size_t max_partitions_per_election = 10'000;

struct keys {
    std::string prefix;  // P, without a trailing slash

    std::string all() const;  // "P/": everything the store loads and watches
    std::string cluster_id() const;
    std::string brokers() const;  // "P/brokers/"
    std::string broker(int32_t id) const;
    std::string broker_dir(int32_t id) const;  // "P/broker_dirs/<id>"
    std::string controller() const;
    std::string topics() const;  // "P/topics/"
    std::string topic(std::string_view name) const;
    std::string partitions(std::string_view topic) const;  // "P/partitions/<t>/"
    std::string partition(std::string_view topic, int32_t p) const;
    std::string all_broker_configs() const;                     // "P/broker_configs/"
    std::string broker_configs(std::string_view entity) const;  // "" = cluster default
    std::string all_user_scram() const;                          // "P/user_scram/"
    std::string user_scram(std::string_view user) const;
    std::string all_group_configs() const;  // "P/group_configs/"
    std::string group_configs(std::string_view group) const;
    std::string producer_ids() const;
    std::string shutdowns() const;  // "P/shutdown/"
    std::string shutdown(int32_t id) const;
    std::string elections() const;  // "P/elections/"
    std::string election(std::string_view id) const;
    std::string decommissions() const;  // "P/decommission/"
    std::string decommission(int32_t id) const;
    std::string features() const;                    // "P/features"
    std::string supported_features(int32_t id) const;  // "P/supported_features/<id>"
    std::string acls() const;  // "P/acls/"
    std::string acl(const security::acl_binding& b) const;
};

// The topic and partition records (topic_record, partition_record) and their JSON are the
// stores' shared records (records.h); encode / decode below are their etcd values.

struct shutdown_record {
    std::string incarnation_id;

    bool operator==(const shutdown_record&) const = default;
};

struct decommission_record {
    std::vector<std::pair<std::string, int32_t>> partitions;

    bool operator==(const decommission_record&) const = default;
};

struct controller_record {
    int32_t node_id = -1;
    std::string incarnation_id;

    bool operator==(const controller_record&) const = default;
};

std::string encode(const topic_record& r);
result<topic_record> decode_topic(std::string_view value);
std::string encode(const partition_record& r);
result<partition_record> decode_partition(std::string_view value);
std::string encode(const broker_registration& r);
result<broker_registration> decode_broker(std::string_view value);
std::string encode(const controller_record& r);
result<controller_record> decode_controller(std::string_view value);
std::string encode(const shutdown_record& r);
result<shutdown_record> decode_shutdown(std::string_view value);
std::string encode(const election_request& r);
result<election_request> decode_election(std::string_view value);
std::string encode(const decommission_record& r);
result<decommission_record> decode_decommission(std::string_view value);
// P/acls/<hex>: the binding's JSON (etcd_state ignores a value its key does not name).
std::string encode(const security::acl_binding& b);
result<security::acl_binding> decode_acl(std::string_view value);
// P/broker_configs/<entity>: {"k":"v"}.
std::string encode_broker_configs(const std::map<std::string, std::string>& configs);
result<std::map<std::string, std::string>> decode_broker_configs(std::string_view value);
// P/producer_ids: a non-negative decimal int64.
std::string encode_producer_id(int64_t next);
result<int64_t> decode_producer_id(std::string_view value);
// P/features and P/supported_features/<id> (features.h); decoding checks shapes and ranges, not
// whether this binary supports the levels.
std::string encode(const finalized_features& f);
result<finalized_features> decode_features(std::string_view value);
std::string encode(const broker_features& f);
result<broker_features> decode_broker_features(std::string_view value);
// P/cluster_id: a Kafka uuid's text.
result<std::string> decode_cluster_id(std::string_view value);

// What a key names: "P/partitions/t/3" -> {partition, "t", 3}; "P/brokers/2" -> {broker, "", 2};
// "P/topics/t" -> {topic, "t"}; "P/broker_configs/_default" -> {broker_config, "", -1},
// "P/broker_configs/4" -> {broker_config, "4", 4}; "P/shutdown/2" -> {shutdown, "", 2};
// "P/elections/<id>" -> {election, "<id>"} (id: 1..64 of [A-Za-z0-9_-]);
// "P/decommission/2" -> {decommission, "", 2}; "P/acls/<hex>" -> {acl, "<hex>"};
// "P/user_scram/a%2Fb" -> {user_scram, "a/b"}; "P/group_configs/g%25" -> {group_config, "g%"}.
// Anything else under P, outside P, or with a
// non-canonical number or an invalid topic name -> unknown.
struct parsed_key {
    enum class kind {
        cluster_id,
        broker,
        controller,
        topic,
        partition,
        broker_config,
        producer_ids,
        shutdown,
        election,
        decommission,
        acl,
        user_scram,
        group_config,
        features,
        supported_features,
        unknown
    };
    kind what = kind::unknown;
    std::string name;
    int32_t number = -1;

    bool operator==(const parsed_key&) const = default;
};
parsed_key parse(const keys& k, std::string_view key);

}  // namespace spool::broker::metadata::etcd_layout
