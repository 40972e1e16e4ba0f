#include "operator/api/broker_config_keys.h"

#include <algorithm>
#include <array>

namespace spool::op::api {

namespace {

// Sorted, for binary search. A copy of the broker-scope names in broker/config/property_table.cc
// (make_broker_table) as of this writing; see the header for why it is a copy.
constexpr std::array<std::string_view, 59> known_keys = {
    "advertised.listeners",
    "auto.create.topics.enable",
    "broker.rack",
    "compression.type",
    "connections.max.idle.ms",
    "default.replication.factor",
    "delete.topic.enable",
    "fetch.max.bytes",
    "group.initial.rebalance.delay.ms",
    "group.max.session.timeout.ms",
    "group.max.size",
    "group.min.session.timeout.ms",
    "http.listener",
    "listeners",
    "log.cleaner.delete.retention.ms",
    "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio",
    "log.cleaner.min.compaction.lag.ms",
    "log.cleanup.policy",
    "log.dirs",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.flush.scheduler.interval.ms",
    "log.index.interval.bytes",
    "log.index.size.max.bytes",
    "log.message.timestamp.after.max.ms",
    "log.message.timestamp.before.max.ms",
    "log.message.timestamp.type",
    "log.preallocate",
    "log.retention.bytes",
    "log.retention.check.interval.ms",
    "log.retention.hours",
    "log.retention.minutes",
    "log.retention.ms",
    "log.roll.hours",
    "log.roll.jitter.hours",
    "log.roll.jitter.ms",
    "log.roll.ms",
    "log.segment.bytes",
    "log.segment.delete.delay.ms",
    "max.incremental.fetch.session.cache.slots",
    "message.max.bytes",
    "min.insync.replicas",
    "node.id",
    "num.partitions",
    "offsets.commit.timeout.ms",
    "offsets.retention.minutes",
    "offsets.topic.num.partitions",
    "offsets.topic.replication.factor",
    "offsets.topic.segment.bytes",
    "producer.id.expiration.ms",
    "queued.max.requests",
    "socket.receive.buffer.bytes",
    "socket.request.max.bytes",
    "socket.send.buffer.bytes",
    "spool.cores",
    "spool.shutdown.timeout.ms",
    "transactional.id.expiration.ms",
    "unclean.leader.election.enable",
};

// Derived from the Cluster (ports, pod identity, volume), so never taken from spec.config.
constexpr std::array<std::string_view, 5> operator_owned = {
    "advertised.listeners", "http.listener", "listeners", "log.dirs", "node.id",
};

}  // namespace

bool is_known_broker_config_key(std::string_view key) {
    return std::binary_search(known_keys.begin(), known_keys.end(), key);
}

bool is_operator_owned_broker_config_key(std::string_view key) {
    return std::find(operator_owned.begin(), operator_owned.end(), key) != operator_owned.end();
}

}  // namespace spool::op::api
