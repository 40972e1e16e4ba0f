#include "operator/reconcilers/topic_reconciler.h"

#include "common/log.h"
#include "operator/api/cluster.h"
#include "operator/builders/common.h"
#include "operator/kube/leader_elector.h"
#include "operator/reconcilers/cluster_reconciler.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

topic_reconciler::topic_reconciler(kube::client& api, event_recorder& events,
                                   admin_client_factory& admins, std::string bootstrap_override)
    : _api(api),
      _events(events),
      _admins(admins),
      _bootstrap_override(std::move(bootstrap_override)) {}

std::vector<config_change> topic_reconciler::config_changes(const api::topic& t) {
    std::vector<config_change> changes;
    for (const auto& [key, value] : t.spec.config) {
        if (value) {
            changes.push_back({key, config_change::op::set, *value});
        }
    }
    for (const auto& key : t.status.managed_config) {
        if (!t.spec.config.count(key)) {
            changes.push_back({key, config_change::op::remove, ""});
        }
    }
    return changes;
}

std::vector<std::string> topic_reconciler::managed_keys(const api::topic& t) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : t.spec.config) {
        if (value) {
            keys.push_back(key);  // std::map: already sorted
        }
    }
    return keys;
}

result<void> topic_reconciler::remove_finalizer(const api::topic& t) {
    json finalizers = json::array();
    size_t i = 0;
    for (const auto& f : t.meta.finalizers) {
        if (f != api::topic_finalizer) {
            finalizers[i++] = str(f);
        }
    }
    // Conditional on resourceVersion: never drop someone else's concurrent finalizer change.
    json patch = obj({{"metadata", obj({{"finalizers", finalizers},
                                        {"resourceVersion", str(t.meta.resource_version)}})}});
    auto r = _api.merge_patch(kube::kinds::topic, t.meta.namespace_, t.meta.name, patch);
    if (!r && !r.error().is_not_found()) {
        return r.error();
    }
    return ok();
}

reconcile_result topic_reconciler::finalize(const json& raw, const api::topic& t) {
    if (!t.meta.has_finalizer(api::topic_finalizer)) {
        return reconcile_result::done();
    }
    auto logger = log::get("topic");
    std::string why;
    if (t.skip_finalizer()) {
        why = fmt::format("annotation {}=true: Kafka topic {} left untouched",
                          api::skip_finalizer_annotation, t.spec.topic_name);
    } else if (t.spec.on_delete == api::deletion_policy::retain) {
        why = fmt::format("deletionPolicy Retain: Kafka topic {} kept", t.spec.topic_name);
    } else {
        auto cluster = _api.get(kube::kinds::cluster, t.meta.namespace_, t.spec.cluster_name);
        if (!cluster && cluster.error().is_not_found()) {
            why =
                fmt::format("Cluster {} no longer exists: nothing to delete", t.spec.cluster_name);
        } else if (!cluster) {
            return reconcile_result::failed(cluster.error());
        } else {
            auto c = api::parse_cluster(cluster.value());
            std::string bootstrap = _bootstrap_override.empty()
                                        ? builders::bootstrap_address(c.value())
                                        : _bootstrap_override;
            auto admin = _admins.connect(bootstrap);
            result<void> deleted = admin ? admin.value()->delete_topic(t.spec.topic_name)
                                         : result<void>(admin.error());
            if (!deleted) {
                auto message = fmt::format(
                    "cannot delete Kafka topic {}: {} (annotate with {}=true "
                    "to remove the resource anyway)",
                    t.spec.topic_name, deleted.error().message, api::skip_finalizer_annotation);
                return report(raw, t, t.status, false, status::reasons::admin_error, message,
                              deleted.error());
            }
            why = fmt::format("Kafka topic {} deleted", t.spec.topic_name);
        }
    }
    if (auto r = remove_finalizer(t); !r) {
        return reconcile_result::failed(r.error());
    }
    logger->info("{}/{}: finalizer removed ({})", t.meta.namespace_, t.meta.name, why);
    if (_state)
        _state->topic_gone(t.meta.namespace_, t.meta.name);
    return reconcile_result::done();
}

reconcile_result topic_reconciler::report(const json& raw, const api::topic& t,
                                          api::topic_status next, bool ready,
                                          const status::reason& why, const std::string& message,
                                          std::optional<error> failure,
                                          std::chrono::milliseconds requeue) {
    next.observed_generation = t.meta.generation;
    status::set_condition(next.conditions, status::types::ready, ready, why, message,
                          t.meta.generation, kube::time_now());
    if (failure || !ready) {
        _events.warning(kube::kinds::topic, t.meta, why.name, message);
    }
    if (_state)
        _state->topic_observed(t.meta.namespace_, t.meta.name, ready);
    if (next != t.status) {
        json updated = raw;
        updated["status"] = api::to_json(next);
        auto w = _api.replace_status(kube::kinds::topic, t.meta.namespace_, t.meta.name, updated);
        if (!w) {
            return reconcile_result::failed(w.error());
        }
    }
    if (failure && failure->transient) {
        return reconcile_result::failed(*failure);
    }
    if (failure) {
        return reconcile_result::done();
    }
    return reconcile_result::after(requeue);
}

reconcile_result topic_reconciler::reconcile(const std::string& key) {
    auto [ns, name] = split_key(key);
    auto got = _api.get(kube::kinds::topic, ns, name);
    if (!got) {
        if (!got.error().is_not_found())
            return reconcile_result::failed(got.error());
        if (_state)
            _state->topic_gone(ns, name);
        return reconcile_result::done();
    }
    const json& raw = got.value();
    auto parsed = api::parse_topic(raw);
    if (!parsed) {
        log::get("topic")->error("{}: {}", key, parsed.error().message);
        return reconcile_result::done();
    }
    const api::topic& t = parsed.value();
    if (t.meta.deleting) {
        return finalize(raw, t);
    }
    if (!t.meta.has_finalizer(api::topic_finalizer)) {
        json finalizers = from_strings(t.meta.finalizers);
        finalizers[t.meta.finalizers.size()] = str(api::topic_finalizer);
        json patch = obj({{"metadata", obj({{"finalizers", finalizers},
                                            {"resourceVersion", str(t.meta.resource_version)}})}});
        auto r = _api.merge_patch(kube::kinds::topic, ns, name, patch);
        // Success changes the object, whose watch event brings us back with the finalizer set.
        return r ? reconcile_result::done() : reconcile_result::failed(r.error());
    }

    api::topic_status next = t.status;
    next.topic_name = t.spec.topic_name;
    if (auto problems = api::validate_topic(t); !problems.empty()) {
        std::string message;
        for (const auto& p : problems) {
            message += (message.empty() ? "" : "; ") + p;
        }
        return report(raw, t, next, false, status::reasons::invalid_spec, message,
                      make_error("InvalidSpec", message, false));
    }
    auto cluster = _api.get(kube::kinds::cluster, ns, t.spec.cluster_name);
    if (!cluster) {
        if (cluster.error().is_not_found()) {
            return report(raw, t, next, false, status::reasons::cluster_not_found,
                          fmt::format("Cluster {} not found in {}", t.spec.cluster_name, ns),
                          std::nullopt, 30s);
        }
        return reconcile_result::failed(cluster.error());
    }
    auto c = api::parse_cluster(cluster.value());
    if (!c) {
        return reconcile_result::failed(c.error());
    }
    if (t.spec.replication_factor > c.value().spec.replicas) {
        return report(
            raw, t, next, false, status::reasons::replication_factor_too_high,
            fmt::format("replicationFactor {} exceeds the {} brokers of Cluster {}",
                        t.spec.replication_factor, c.value().spec.replicas, t.spec.cluster_name),
            std::nullopt, 60s);
    }

    std::string bootstrap =
        _bootstrap_override.empty() ? builders::bootstrap_address(c.value()) : _bootstrap_override;
    auto admin_or = _admins.connect(bootstrap);
    auto admin_failed = [&](const error& e, const std::string& what) {
        error failure = e;
        failure.message = fmt::format("{}: {}", what, e.message);
        return report(raw, t, next, false, status::reasons::admin_error, failure.message, failure);
    };
    if (!admin_or) {
        return admin_failed(admin_or.error(), "connect to " + bootstrap);
    }
    auto& admin = *admin_or.value();
    auto described = admin.describe_topic(t.spec.topic_name);
    if (!described) {
        return admin_failed(described.error(), "describe topic");
    }
    topic_description desc;
    if (!described.value()) {
        std::vector<std::pair<std::string, std::string>> configs;
        for (const auto& [k, v] : t.spec.config) {
            if (v) {
                configs.emplace_back(k, *v);
            }
        }
        auto created = admin.create_topic(t.spec.topic_name, t.spec.partitions,
                                          t.spec.replication_factor, configs);
        if (!created) {
            return admin_failed(created.error(), "create topic");
        }
        desc = created.value();
        _events.normal(kube::kinds::topic, t.meta, "Created",
                       fmt::format("created Kafka topic {} with {} partitions", t.spec.topic_name,
                                   t.spec.partitions));
    } else {
        desc = *described.value();
        if (desc.partitions < t.spec.partitions) {
            if (auto r = admin.create_partitions(t.spec.topic_name, t.spec.partitions); !r) {
                return admin_failed(r.error(), "create partitions");
            }
            desc.partitions = t.spec.partitions;
        }
    }
    auto changes = config_changes(t);
    if (!changes.empty()) {
        if (auto r = admin.alter_configs(t.spec.topic_name, changes); !r) {
            return admin_failed(r.error(), "alter configs");
        }
    }
    next.topic_id = desc.topic_id;
    next.partitions = desc.partitions;
    next.replication_factor = desc.replication_factor;
    next.managed_config = managed_keys(t);
    if (desc.partitions > t.spec.partitions) {
        return report(raw, t, next, false, status::reasons::partitions_exceed_spec,
                      fmt::format("the topic has {} partitions, more than spec.partitions {}; "
                                  "partitions cannot shrink",
                                  desc.partitions, t.spec.partitions),
                      std::nullopt);
    }
    return report(raw, t, next, true, status::reasons::topic_ready,
                  fmt::format("{} partitions, replication factor {}", desc.partitions,
                              desc.replication_factor),
                  std::nullopt);
}

}  // namespace spool::op::reconcilers
