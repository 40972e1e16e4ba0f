#pragma once

// What the Topic and Cluster reconcilers need from a Kafka cluster. The implementation speaks
// the Kafka protocol (Metadata, CreateTopics, CreatePartitions, DescribeConfigs,
// IncrementalAlterConfigs, DeleteTopics, AlterPartitionReassignments, ListPartitionReassignments,
// ElectLeaders; for the User reconciler DescribeUserScramCredentials, AlterUserScramCredentials,
// DescribeAcls, CreateAcls, DeleteAcls) through the shared protocol library; the interface keeps the reconcilers testable
// without a broker.

#include "operator/api/error.h"
#include "operator/reconcilers/client_tls.h"

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::reconcilers {

struct topic_description {
    std::string topic_id;  // UUID text
    int32_t partitions = 0;
    int32_t replication_factor = 0;
};

// Where one partition lives, from Metadata.
struct partition_placement {
    std::string topic;
    int32_t partition = 0;
    int32_t leader = -1;
    std::vector<int32_t> replicas;
};

// Every broker the cluster knows and where every partition lives, from one all-topics Metadata.
struct cluster_placement {
    std::vector<int32_t> brokers;
    std::vector<partition_placement> partitions;
};

// One topic config as DescribeConfigs reports it. `topic_override` is true when the value is
// set on the topic itself (config source DYNAMIC_TOPIC_CONFIG), false for broker or built-in
// defaults: what decides whether a SET or DELETE would change anything.
struct topic_config_entry {
    std::string value;
    bool topic_override = false;
};
using topic_configs = std::map<std::string, topic_config_entry>;

// One partition's wanted replicas (AlterPartitionReassignments), or, listed, the target of a
// reassignment under way.
struct partition_move {
    std::string topic;
    int32_t partition = 0;
    std::vector<int32_t> replicas;

    bool operator==(const partition_move&) const = default;
};

// Whether a move may change a partition's replica count (AlterPartitionReassignments v1's
// AllowReplicationFactorChange, KIP-860): a rebalance must not, a Topic's replicationFactor
// change must.
enum class replica_count : bool { keep = false, may_change = true };

struct config_change {
    enum class op { set, remove };  // IncrementalAlterConfigs SET / DELETE (back to default)
    std::string key;
    op operation = op::set;
    std::string value;
};

// One ACL binding as Kafka's CreateAcls / DescribeAcls / DeleteAcls carry it, with Kafka's
// numeric codes: resource type (2 TOPIC, 3 GROUP, 4 CLUSTER, 5 TRANSACTIONAL_ID), pattern type
// (3 LITERAL, 4 PREFIXED), operation (2 ALL, 3 READ, 4 WRITE, ...), permission (2 DENY, 3 ALLOW).
struct acl_binding {
    int8_t resource_type = 0;
    std::string resource_name;
    int8_t pattern_type = 3;
    std::string principal;
    std::string host = "*";
    int8_t operation = 0;
    int8_t permission = 3;

    auto operator<=>(const acl_binding&) const = default;
};

// One SCRAM credential as AlterUserScramCredentials upserts it (never the password itself).
struct scram_upsert {
    std::string user;
    int8_t mechanism = 2;  // 1 SCRAM-SHA-256, 2 SCRAM-SHA-512
    int32_t iterations = 4096;
    std::vector<uint8_t> salt;
    std::vector<uint8_t> salted_password;
};

// error::reason of describe_acls on a cluster without an authorizer (Kafka's SECURITY_DISABLED).
inline constexpr const char* acls_unsupported_reason = "SecurityDisabled";

class admin_client {
public:
    virtual ~admin_client() = default;

    // nullopt when the topic does not exist.
    virtual result<std::optional<topic_description>> describe_topic(const std::string& name) = 0;
    virtual result<topic_description> create_topic(
        const std::string& name, int32_t partitions, int32_t replication_factor,
        const std::vector<std::pair<std::string, std::string>>& configs) = 0;
    virtual result<void> create_partitions(const std::string& name, int32_t total) = 0;
    virtual result<void> alter_configs(const std::string& name,
                                       const std::vector<config_change>& changes) = 0;
    // Succeeds when the topic does not exist.
    virtual result<void> delete_topic(const std::string& name) = 0;
    // The topic's configs (DescribeConfigs), so that a pass sends only the changes it needs.
    virtual result<topic_configs> describe_topic_configs(const std::string& name) = 0;
    // Leaders and replicas of every partition of every topic (internal topics included).
    virtual result<cluster_placement> describe_placement() = 0;
    // Asks for every move at once; fails with the first partition the cluster refused (Kafka
    // answers per partition; the others are then under way).
    virtual result<void> alter_reassignments(const std::vector<partition_move>& moves,
                                             replica_count count) = 0;
    // The reassignments under way, each with its target replicas.
    virtual result<std::vector<partition_move>> list_reassignments() = 0;
    // A preferred-leader election of every partition; "topic-N: ERROR" for each partition whose
    // preferred replica could not take over (ELECTION_NOT_NEEDED is no failure).
    virtual result<std::vector<std::string>> elect_preferred_leaders() = 0;

    // Users and ACLs (the User reconciler). Not pure so that admin clients which never manage
    // users (test doubles of the Cluster reconciler) need not implement them.
    // The SCRAM mechanisms `user` has credentials for (DescribeUserScramCredentials); empty
    // when it has none.
    virtual result<std::vector<int8_t>> describe_scram(const std::string& user);
    virtual result<void> upsert_scram(const scram_upsert& credential);
    // Succeeds when the user has no credential for that mechanism.
    virtual result<void> delete_scram(const std::string& user, int8_t mechanism);
    // Every binding whose principal is `principal` (DescribeAcls with a principal filter). A
    // cluster without an authorizer fails with reason acls_unsupported_reason.
    virtual result<std::vector<acl_binding>> describe_acls(const std::string& principal);
    virtual result<void> create_acls(const std::vector<acl_binding>& bindings);
    // Deletes exactly these bindings (one exact-match filter each).
    virtual result<void> delete_acls(const std::vector<acl_binding>& bindings);
};

// Connects an admin_client to a cluster's bootstrap address ("host:port"); with `tls` over TLS,
// checking the brokers' certificates against its CA and presenting its client certificate.
class admin_client_factory {
public:
    virtual ~admin_client_factory() = default;
    virtual result<std::unique_ptr<admin_client>> connect(const std::string& bootstrap,
                                                          const client_tls* tls) = 0;
    result<std::unique_ptr<admin_client>> connect(const std::string& bootstrap) {
        return connect(bootstrap, nullptr);
    }
};

}  // namespace spool::op::reconcilers
