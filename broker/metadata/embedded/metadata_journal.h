#pragma once

// The records of the embedded store's journal (embedded_store.h): what one commit changed, as
// one line of text, so a commit costs the size of its change and not of the whole state.
//
//     line:    <crc32c of the JSON, 8 lowercase hex digits> <JSON>\n
//     JSON:    {"seq": N, "changes": [change, ...]}
//     change:  {"topic": "<name>", "record": <topic_record>, "partitions": [<partition_record>]}
//                  the topic as it is now (created, or any of its fields changed); the records
//                  are records.h's (the etcd store's values too), partition i at index i
//              {"delete_topic": "<name>"}
//              {"broker_configs": "<entity>", "configs": {"k": "v"}}
//                  the entity's dynamic configs as they are now ({}: none left)
//              {"user_scram": "<user>", "credentials": {"SCRAM-SHA-256": "<credential>"}}
//                  the user's SCRAM credentials as they are now ({}: none left)
//              {"group_configs": "<group>", "configs": {"k": "v"}}
//                  the group's dynamic configs as they are now ({}: none left)
//              {"next_producer_id": N}
//              {"acl": <acl binding, records.h>}          a binding created
//              {"delete_acl": <acl binding>}              a binding deleted
//
// seq numbers the commits: 1, 2, 3, ... without gaps, continuing across snapshots. The cluster
// id is never journalled: the snapshot holds it from the store's creation on.
//
// A record holds the changed entries whole (absolute values, never increments).
//
// Plain functions; no state, no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "common/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace spool::broker::metadata::journal {

struct topic_put {
    topic_metadata topic;
    bool operator==(const topic_put&) const = default;
};
struct topic_delete {
    std::string name;
    bool operator==(const topic_delete&) const = default;
};
struct broker_configs_put {
    std::string entity;  // "" = cluster default, "<node id>" = one broker
    std::map<std::string, std::string> configs;
    bool operator==(const broker_configs_put&) const = default;
};
struct user_scram_put {
    std::string user;
    std::map<std::string, std::string> credentials;
    bool operator==(const user_scram_put&) const = default;
};
struct group_configs_put {
    std::string group;
    std::map<std::string, std::string> configs;
    bool operator==(const group_configs_put&) const = default;
};
struct producer_id_put {
    int64_t next_producer_id = 0;
    bool operator==(const producer_id_put&) const = default;
};
struct acl_put {
    security::acl_binding binding;
    bool operator==(const acl_put&) const = default;
};
struct acl_delete {
    security::acl_binding binding;
    bool operator==(const acl_delete&) const = default;
};
// The finalized feature levels as a whole (features.h; UpdateFeatures).
struct features_put {
    finalized_features features;
    bool operator==(const features_put&) const = default;
};
using change = std::variant<topic_put, topic_delete, broker_configs_put, user_scram_put,
                            group_configs_put, producer_id_put, acl_put, acl_delete, features_put>;

struct record {
    int64_t seq = 0;
    std::vector<change> changes;  // deletions first
    bool operator==(const record&) const = default;
};

// What turns `before` into `after` (topics, broker, user and group configs, next producer id,
// ACL bindings, features),
// numbered seq.
// No changes: nothing that is persisted differs.
record diff(const cluster_state& before, const cluster_state& after, int64_t seq);

// Replays r's changes onto s. A change that does not fit s (deleting an absent topic, a topic id
// another topic has, a name Kafka refuses) fails with std::errc::bad_message, leaving s partly
// changed: the caller refuses the whole state.
result<void> apply(cluster_state& s, const record& r);

// One journal line, '\n' included.
std::string encode(const record& r);
// A line without its '\n'. Anything but exactly what encode writes (a checksum that does not
// match, malformed JSON, wrong types, numbers out of range) fails with std::errc::bad_message.
result<record> decode(std::string_view line);

}  // namespace spool::broker::metadata::journal
