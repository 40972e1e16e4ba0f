#pragma once

// Coordinator errors. Only broker/handlers translates these into Kafka error numbers (a test in
// handlers/groups pins the mapping); the coordinator itself never spells a Kafka error code.

#include <system_error>

namespace spool::broker::coordinator {

enum class errc : int {
    ok = 0,
    not_coordinator = 1,              // the group's offsets partition is not owned here
    load_in_progress = 2,             // the offsets partition is still being replayed
    coordinator_not_available = 3,    // group is Dead (being deleted/unloaded): retry
    member_id_required = 4,           // KIP-394: first join; retry with the returned id
    unknown_member_id = 5,            // member not in the group (expired, left, or never joined)
    illegal_generation = 6,           // a request from an older (or newer) generation
    rebalance_in_progress = 7,        // a rebalance is running: rejoin
    fenced_instance_id = 8,           // KIP-345: another member took this group.instance.id
    inconsistent_group_protocol = 9,  // protocol type or no protocol shared with the group
    invalid_session_timeout = 10,     // outside group.{min,max}.session.timeout.ms
    group_max_size_reached = 11,      // group.max.size members already
    non_empty_group = 12,             // DeleteGroups / OffsetDelete on a group with members
    group_id_not_found = 13,          // DeleteGroups / OffsetDelete on an unknown group
    group_subscribed_to_topic = 14,   // OffsetDelete on a topic a member is subscribed to
    offset_metadata_too_large = 15,   // commit metadata above offset.metadata.max.bytes
    invalid_group_id = 16,            // empty group id where one is required
    storage_error = 17,               // the append to __consumer_offsets failed
    unknown_topic_or_partition = 18,  // commit for a partition that does not exist
    unstable_offset_commit = 19,      // require_stable fetch of an offset a transaction holds
    invalid_producer_epoch = 20,      // TxnOffsetCommit from a producer epoch the log fenced
    // KIP-848 (ConsumerGroupHeartbeat and the member-epoch checks of OffsetCommit/OffsetFetch)
    fenced_member_epoch = 21,         // a heartbeat from an epoch the member no longer has
    unreleased_instance_id = 22,      // a static member joins while its instance id is active
    unsupported_assignor = 23,        // ServerAssignor not in group.consumer.assignors
    stale_member_epoch = 24,          // an offset commit/fetch from another member epoch
    invalid_request = 25,             // a heartbeat whose fields contradict each other
    invalid_regular_expression = 26,  // SubscribedTopicRegex does not compile
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// What a request learns when its append to __consumer_offsets failed: not_coordinator when the
// partition's log is gone (the client looks the coordinator up again), invalid_producer_epoch
// when a transactional write came from a fenced producer, else storage_error.
inline std::error_code append_error(std::error_code ec) noexcept {
    return ec == make_error_code(errc::not_coordinator) ||
                   ec == make_error_code(errc::invalid_producer_epoch)
               ? ec
               : make_error_code(errc::storage_error);
}

}  // namespace spool::broker::coordinator

template <>
struct std::is_error_code_enum<spool::broker::coordinator::errc> : std::true_type {};
