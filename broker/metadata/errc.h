#pragma once

// Metadata store errors; the handlers map them to Kafka error codes.

#include <system_error>

namespace spool::broker::metadata {

enum class errc : int {
    ok = 0,
    topic_exists = 1,
    unknown_topic = 2,
    invalid_topic_name = 3,
    invalid_partitions = 4,
    invalid_replication_factor = 5,
    invalid_config = 6,
    persist_failed = 7,  // the change could not be written; nothing changed
    not_controller = 8,
    unavailable = 9,  // the cluster store (etcd) cannot be reached now; retriable
    timed_out = 10,   // committed, but not carried out (e.g. placed) within the request timeout
    // An ISR change (store::alter_isr) refused because the partition's record changed since the
    // leader read it (revision, leader epoch or partition epoch): retry from a newer snapshot.
    stale_partition = 11,
    // An ISR change that cannot apply to the record: the caller does not lead the partition, or
    // the ISR is empty, names a non-replica or a replica twice, or leaves the leader out.
    invalid_isr = 12,
    // An ISR change adding a broker that is not live or is in controlled shutdown (KIP-841).
    ineligible_replica = 13,
    // A reassignment's target replicas are empty, name a broker twice or one not registered
    // (AlterPartitionReassignments), or a decommission finds no broker to move a replica to.
    invalid_replica_assignment = 14,
    // A cancel (null replicas) of a partition with no reassignment asked for or under way.
    no_reassignment_in_progress = 15,
    // A decommission of a broker that is neither registered nor being decommissioned.
    unknown_broker = 16,
    // UpdateFeatures: the finalized feature levels changed since the request was judged (another
    // broker's update won): judge it again on a newer snapshot.
    stale_features = 17,
    // The cluster's finalized metadata.version (or another feature level) is one this binary
    // does not support (features.h): the broker must not run on it.
    unsupported_feature_level = 18,
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

}  // namespace spool::broker::metadata

template <>
struct std::is_error_code_enum<spool::broker::metadata::errc> : std::true_type {};
