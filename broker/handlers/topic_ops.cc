#include "broker/handlers/topic_ops.h"

#include "broker/handlers/leadership.h"
#include "broker/handlers/partition_limits.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/internal_topics.h"
#include "broker/metrics/topic_probe.h"
#include "common/log.h"

#include <fmt/format.h>

namespace spool::broker::handlers {

using protocol::error_code;

error_code to_kafka(metadata::errc e) {
    switch (e) {
        case metadata::errc::ok:
            return error_code::none;
        case metadata::errc::topic_exists:
            return error_code::topic_already_exists;
        case metadata::errc::unknown_topic:
            return error_code::unknown_topic_or_partition;
        case metadata::errc::invalid_topic_name:
            return error_code::invalid_topic_exception;
        case metadata::errc::invalid_partitions:
            return error_code::invalid_partitions;
        case metadata::errc::invalid_replication_factor:
            return error_code::invalid_replication_factor;
        case metadata::errc::invalid_config:
            return error_code::invalid_config;
        case metadata::errc::persist_failed:
            return error_code::kafka_storage_error;
        case metadata::errc::not_controller:
            return error_code::not_controller;
        case metadata::errc::unavailable:
        case metadata::errc::timed_out:
            return error_code::request_timed_out;
        // Kafka's AlterPartition answers (replication's ISR writes; no client request sees them).
        case metadata::errc::stale_partition:
            return error_code::invalid_update_version;
        case metadata::errc::invalid_isr:
            return error_code::invalid_request;
        case metadata::errc::ineligible_replica:
            return error_code::ineligible_replica;
        case metadata::errc::invalid_replica_assignment:
            return error_code::invalid_replica_assignment;
        case metadata::errc::no_reassignment_in_progress:
            return error_code::no_reassignment_in_progress;
        case metadata::errc::unknown_broker:
            return error_code::broker_not_available;
        // UpdateFeatures: another update came first (the handler judges again; this is what is
        // left when it kept losing), or a level no broker of this binary may run on.
        case metadata::errc::stale_features:
            return error_code::feature_update_failed;
        case metadata::errc::unsupported_feature_level:
            return error_code::invalid_update_version;
    }
    return error_code::unknown_server_error;
}

store_failure from_store(const std::error_code& ec) {
    store_failure out;
    if (ec.category() != metadata::error_category()) {
        out.message = ec.message();
        return out;
    }
    auto e = static_cast<metadata::errc>(ec.value());
    out.error = to_kafka(e);
    if (e == metadata::errc::unavailable) {
        out.message =
            "The metadata store is unavailable right now (" + ec.message() + "); retry later";
    } else if (e == metadata::errc::timed_out) {
        out.message = "The change was committed but not carried out in time (" + ec.message() +
                      "); it may still complete: check before retrying";
    } else {
        out.message = ec.message();
    }
    return out;
}

std::optional<store_failure> check_replication_factor(int32_t replication_factor,
                                                      int32_t live_brokers) {
    if (replication_factor < 1) {
        return store_failure{
            error_code::invalid_replication_factor,
            "Replication factor must be larger than 0, or -1 to use the default value."};
    }
    if (replication_factor > live_brokers) {
        return store_failure{
            error_code::invalid_replication_factor,
            fmt::format("Replication factor: {} larger than available brokers: {}.",
                        replication_factor, live_brokers)};
    }
    return std::nullopt;
}

namespace {

// Kafka 4.x leaves DeleteTopics and CreatePartitions of an internal topic to its authorizer
// (ControllerApis answers TOPIC_AUTHORIZATION_FAILED to a principal without DELETE / ALTER on
// the topic). Spool has no authorizer and its coordinator depends on __consumer_offsets keeping
// its data and its partition count, so it answers as Kafka does to a client no ACL allows.
bool refuse_internal(const std::string& name, const char* what, topic_op_result& out) {
    if (!metadata::is_internal_topic(name)) {
        return false;
    }
    out.error = error_code::topic_authorization_failed;
    out.message = fmt::format("Topic {} is internal: clients may not {} it", name, what);
    log::get("kafka")->warn("refused to {} internal topic {}", what, name);
    return true;
}

}  // namespace

boost::asio::awaitable<topic_op_result> create_topic(services& svc, metadata::new_topic t,
                                                     bool validate_only) {
    topic_op_result out;
    if (!metadata::valid_topic_name(t.name)) {
        out.error = error_code::invalid_topic_exception;
        out.message = fmt::format("Topic name '{}' is illegal", t.name);
        co_return out;
    }
    // An existing name answers TOPIC_ALREADY_EXISTS before anything else of the request is
    // checked, as Kafka's ReplicationControlManager marks existing topics first: a client that
    // ensures its topic exists (with the replication factor it was created with) must not get
    // INVALID_REPLICATION_FACTOR while a broker is down.
    auto snap = svc.store.snapshot();
    if (snap->find(t.name) != nullptr) {
        out.error = error_code::topic_already_exists;
        out.message = fmt::format("Topic '{}' already exists.", t.name);
        co_return out;
    }
    if (t.partitions < 1) {
        out.error = error_code::invalid_partitions;
        out.message = "Number of partitions must be larger than 0";
        co_return out;
    }
    if (auto refused =
            check_replication_factor(t.replication_factor, live_broker_count(svc, *snap))) {
        out.error = refused->error;
        out.message = refused->message;
        co_return out;
    }
    for (const auto& [k, v] : t.configs) {
        std::string err = config::validate_topic_override(k, v);
        if (!err.empty()) {
            out.error = error_code::invalid_config;
            out.message = err;
            co_return out;
        }
    }
    if (auto refused = check_broker_capacity(partitions_on_broker(*snap, svc.node_id), t.partitions,
                                             current_partition_budget(svc.config))) {
        log::get("kafka")->warn("refused topic {}: {}", t.name, refused->message);
        out.error = refused->error;
        out.message = refused->message;
        co_return out;
    }
    if (validate_only) {
        co_return out;
    }
    auto create = svc.store.create_topic(t);
    auto created = co_await std::move(create);
    if (!created) {
        auto failed = from_store(created.error());
        out.error = failed.error;
        out.message = failed.message;
        co_return out;
    }
    auto ec = co_await svc.partitions.ensure_topic(created.value());
    if (ec) {
        // All or nothing: ensure_topic removed what it created; take the topic out of the
        // metadata too, or the next start would fail to open its logs.
        auto undo = svc.store.delete_topic(t.name);
        auto undone = co_await std::move(undo);
        log::get("kafka")->error("topic {} not created, its logs failed: {}{}", t.name,
                                 ec.message(), undone ? "" : " (and removing it failed)");
        out.error = error_code::kafka_storage_error;
        out.message = fmt::format("Cannot create the logs of topic '{}': {}", t.name, ec.message());
        co_return out;
    }
    log::get("kafka")->info("created topic {} with {} partitions", t.name, t.partitions);
    out.topic = std::move(created).value();
    co_return out;
}

boost::asio::awaitable<topic_op_result> delete_topic(services& svc, std::string name) {
    topic_op_result out;
    auto snap = svc.store.snapshot();
    const auto* t = snap->find(name);
    if (t == nullptr) {
        out.error = error_code::unknown_topic_or_partition;
        co_return out;
    }
    if (refuse_internal(name, "delete", out)) {
        co_return out;
    }
    if (!svc.config.get(config::keys::delete_topic_enable)) {
        out.error = error_code::topic_deletion_disabled;
        co_return out;
    }
    auto partitions = static_cast<int32_t>(t->partitions.size());
    auto id = t->id;
    out.topic = *t;
    auto remove = svc.store.delete_topic(name);
    if (auto r = co_await std::move(remove); !r) {
        auto failed = from_store(r.error());
        out.error = failed.error;
        out.message = failed.message;
        co_return out;
    }
    co_await svc.partitions.remove_topic(name, partitions, id);
    // The checkpoints stop naming the topic before the answer, so that a namesake created next
    // can never pick up this one's log start after a crash.
    (void)co_await svc.partitions.forget_in_checkpoints(
        cluster::partition_manager::partitions_of(name, partitions));
    if (svc.topic_traffic != nullptr) {
        svc.topic_traffic->forget(name);  // a re-created topic's counters start from zero
    }
    log::get("kafka")->info("deleted topic {}", name);
    co_return out;
}

boost::asio::awaitable<topic_op_result> grow_topic(services& svc, std::string name, int32_t total,
                                                   bool validate_only) {
    topic_op_result out;
    auto snap = svc.store.snapshot();
    const auto* t = snap->find(name);
    if (t == nullptr) {
        out.error = error_code::unknown_topic_or_partition;
        co_return out;
    }
    if (refuse_internal(name, "add partitions to", out)) {
        co_return out;
    }
    if (total <= static_cast<int32_t>(t->partitions.size())) {
        out.error = error_code::invalid_partitions;
        out.message = fmt::format(
            "Topic currently has {} partitions, which is higher than or "
            "equal to the requested {}.",
            t->partitions.size(), total);
        co_return out;
    }
    if (auto refused = check_broker_capacity(partitions_on_broker(*snap, svc.node_id),
                                             total - static_cast<int32_t>(t->partitions.size()),
                                             current_partition_budget(svc.config))) {
        log::get("kafka")->warn("refused partitions of {}: {}", name, refused->message);
        out.error = refused->error;
        out.message = refused->message;
        co_return out;
    }
    if (validate_only) {
        co_return out;
    }
    auto grow = svc.store.create_partitions(name, total);
    auto grown = co_await std::move(grow);
    if (!grown) {
        auto failed = from_store(grown.error());
        out.error = failed.error;
        out.message = failed.message;
        co_return out;
    }
    if (auto ec = co_await svc.partitions.ensure_topic(grown.value()); ec) {
        out.error = error_code::kafka_storage_error;
        co_return out;
    }
    out.topic = std::move(grown).value();
    co_return out;
}

}  // namespace spool::broker::handlers
