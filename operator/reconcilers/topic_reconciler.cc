#include "operator/reconcilers/topic_reconciler.h"

#include "common/log.h"
#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/reconcilers/certificates.h"
#include "operator/kube/leader_elector.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/finalizer.h"
#include "operator/reconcilers/pause.h"
#include "operator/reconcilers/replication_plan.h"
#include "operator/reconcilers/topic_conflict.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

struct topic_reconciler::context {
    json raw;
    api::topic topic;
    api::topic_status next;  // what status becomes; steps fill it in
    std::optional<api::cluster> cluster;
    std::string bootstrap;
    std::unique_ptr<admin_client> admin;
    topic_description desc;
    int32_t replication_factor = 0;  // what the topic should have (api::replication_factor_of)
    bool created = false;  // this pass created the topic (with its configs)
};

topic_reconciler::topic_reconciler(kube::client& api, event_recorder& events,
                                   admin_client_factory& admins, std::string bootstrap_override)
    : _api(api),
      _events(events),
      _admins(admins),
      _bootstrap_override(std::move(bootstrap_override)) {}

const std::vector<topic_reconciler::step>& topic_reconciler::steps() {
    static const std::vector<step> list = {
        {"pause", &topic_reconciler::check_pause},
        {"validate", &topic_reconciler::validate},
        {"finalizer", &topic_reconciler::ensure_finalizer},
        {"cluster", &topic_reconciler::read_cluster},
        {"conflict", &topic_reconciler::check_conflict},
        {"connect", &topic_reconciler::connect},
        {"create", &topic_reconciler::create_topic},
        {"partitions", &topic_reconciler::grow_partitions},
        {"replication", &topic_reconciler::change_replication_factor},
        {"configs", &topic_reconciler::sync_configs},
        {"status", &topic_reconciler::ready},
    };
    return list;
}

std::vector<std::string> topic_reconciler::step_names() {
    std::vector<std::string> names;
    for (const auto& s : steps()) {
        names.emplace_back(s.name);
    }
    return names;
}

std::vector<config_change> topic_reconciler::config_changes(const api::topic& t,
                                                            const topic_configs& current) {
    std::vector<config_change> changes;
    for (const auto& [key, value] : t.spec.config) {
        if (!value) {
            continue;
        }
        auto it = current.find(key);
        // Already set on the topic to that value: a SET would change nothing.
        if (it != current.end() && it->second.topic_override && it->second.value == *value) {
            continue;
        }
        changes.push_back({key, config_change::op::set, *value});
    }
    for (const auto& key : t.status.managed_config) {
        if (t.spec.config.count(key)) {
            continue;
        }
        auto it = current.find(key);
        // Not a topic override any more: already back at the default.
        if (it != current.end() && !it->second.topic_override) {
            continue;
        }
        changes.push_back({key, config_change::op::remove, ""});
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

result<std::vector<api::topic>> topic_reconciler::list_topics(const std::string& ns) {
    auto listed = _api.list(kube::kinds::topic, ns);
    if (!listed) {
        return listed.error();
    }
    std::vector<api::topic> topics;
    for (const auto& item : listed.value().items) {
        if (auto t = api::parse_topic(item)) {
            topics.push_back(std::move(t).value());
        }
    }
    return topics;
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
    context ctx;
    ctx.raw = got.value();
    auto parsed = api::parse_topic(ctx.raw);
    if (!parsed) {
        log::get("topic")->error("{}: {}", key, parsed.error().message);
        return reconcile_result::done();
    }
    ctx.topic = std::move(parsed).value();
    ctx.next = ctx.topic.status;
    if (ctx.topic.meta.deleting) {
        return finalize(ctx);
    }
    step_outcome outcome;
    for (const auto& s : steps()) {
        outcome = (this->*s.run)(ctx);
        if (outcome.what != step_outcome::kind::next) {
            log::get("topic")->debug("{}: step {} stopped the pass: {}", key, s.name,
                                     outcome.message);
            break;
        }
    }
    if (outcome.what == step_outcome::kind::settled) {
        return reconcile_result::done();
    }
    return sync_status(ctx, outcome);
}

topic_reconciler::step_outcome topic_reconciler::check_pause(context& ctx) {
    if (!reconciliation_paused(ctx.topic.meta)) {
        return {};
    }
    return {step_outcome::kind::hold, false, status::reasons::paused,
            fmt::format("{}=true", pause_annotation)};
}

topic_reconciler::step_outcome topic_reconciler::validate(context& ctx) {
    ctx.next.topic_name = ctx.topic.spec.topic_name;
    auto problems = api::validate_topic(ctx.topic);
    if (problems.empty()) {
        return {};
    }
    std::string message;
    for (const auto& p : problems) {
        message += (message.empty() ? "" : "; ") + p;
    }
    return {step_outcome::kind::report, false, status::reasons::invalid_spec, message,
            make_error("InvalidSpec", message, false)};
}

topic_reconciler::step_outcome topic_reconciler::ensure_finalizer(context& ctx) {
    const auto& t = ctx.topic;
    if (t.meta.has_finalizer(api::topic_finalizer)) {
        return {};
    }
    if (auto r = add_finalizer(_api, kube::kinds::topic, t.meta, api::topic_finalizer); !r) {
        return {step_outcome::kind::report, false,
                status::reason_for_error(r.error().http_status, r.error().reason),
                "add finalizer: " + r.error().message, r.error()};
    }
    // The patch changes the object; its watch event brings us back with the finalizer set.
    return {step_outcome::kind::settled};
}

topic_reconciler::step_outcome topic_reconciler::read_cluster(context& ctx) {
    const auto& t = ctx.topic;
    auto cluster = _api.get(kube::kinds::cluster, t.meta.namespace_, t.spec.cluster_name);
    if (!cluster) {
        if (cluster.error().is_not_found()) {
            return {
                step_outcome::kind::report,
                false,
                status::reasons::cluster_not_found,
                fmt::format("Cluster {} not found in {}", t.spec.cluster_name, t.meta.namespace_),
                std::nullopt,
                30s};
        }
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "read Cluster: " + cluster.error().message, cluster.error()};
    }
    auto c = api::parse_cluster(cluster.value());
    if (!c) {
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "parse Cluster: " + c.error().message, c.error()};
    }
    ctx.cluster = std::move(c).value();
    ctx.replication_factor = api::replication_factor_of(t, *ctx.cluster);
    if (ctx.replication_factor > ctx.cluster->spec.replicas) {
        return {
            step_outcome::kind::report,
            false,
            status::reasons::replication_factor_too_high,
            fmt::format("replicationFactor {} exceeds the {} brokers of Cluster {}",
                        ctx.replication_factor, ctx.cluster->spec.replicas, t.spec.cluster_name),
            std::nullopt,
            60s};
    }
    ctx.bootstrap = _bootstrap_override.empty()
                        ? builders::operator_bootstrap_address(*ctx.cluster)
                        : _bootstrap_override;
    return {};
}

topic_reconciler::step_outcome topic_reconciler::check_conflict(context& ctx) {
    auto topics = list_topics(ctx.topic.meta.namespace_);
    if (!topics) {
        return {step_outcome::kind::report, false, status::reasons::api_error,
                "list Topics: " + topics.error().message, topics.error()};
    }
    auto owner = conflicting_owner(ctx.topic, topics.value());
    if (!owner) {
        return {};
    }
    // No event tells this Topic that the owner went away: look again soon, so that it takes
    // over within seconds rather than at the next resync.
    return {step_outcome::kind::report,
            false,
            status::reasons::topic_conflict,
            fmt::format("Kafka topic {} of Cluster {} is managed by the older Topic {}; this "
                        "one changes nothing",
                        ctx.topic.spec.topic_name, ctx.topic.spec.cluster_name, *owner),
            std::nullopt,
            30s};
}

topic_reconciler::step_outcome topic_reconciler::connect(context& ctx) {
    auto admin = connect_as_operator(_api, _admins, *ctx.cluster, ctx.bootstrap);
    if (!admin) {
        auto e = admin.error();
        e.message = fmt::format("connect to {}: {}", ctx.bootstrap, e.message);
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    ctx.admin = std::move(admin).value();
    return {};
}

namespace {

// An admin call failed: stop the pass with the error in the Ready condition.
auto admin_failure(const error& e, const std::string& what) {
    error failure = e;
    failure.message = fmt::format("{}: {}", what, e.message);
    return failure;
}

}  // namespace

topic_reconciler::step_outcome topic_reconciler::create_topic(context& ctx) {
    const auto& t = ctx.topic;
    auto described = ctx.admin->describe_topic(t.spec.topic_name);
    if (!described) {
        auto e = admin_failure(described.error(), "describe topic");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    if (described.value()) {
        ctx.desc = *described.value();
        return {};
    }
    std::vector<std::pair<std::string, std::string>> configs;
    for (const auto& [k, v] : t.spec.config) {
        if (v) {
            configs.emplace_back(k, *v);
        }
    }
    auto created = ctx.admin->create_topic(t.spec.topic_name, t.spec.partitions,
                                           ctx.replication_factor, configs);
    if (!created) {
        auto e = admin_failure(created.error(), "create topic");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    ctx.desc = created.value();
    ctx.created = true;
    _events.normal(kube::kinds::topic, t.meta, "Created",
                   fmt::format("created Kafka topic {} with {} partitions, replication factor {}",
                               t.spec.topic_name, t.spec.partitions, ctx.replication_factor));
    return {};
}

topic_reconciler::step_outcome topic_reconciler::grow_partitions(context& ctx) {
    const auto& t = ctx.topic;
    if (ctx.desc.partitions >= t.spec.partitions) {
        return {};
    }
    if (auto r = ctx.admin->create_partitions(t.spec.topic_name, t.spec.partitions); !r) {
        auto e = admin_failure(r.error(), "create partitions");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    ctx.desc.partitions = t.spec.partitions;
    return {};
}

topic_reconciler::step_outcome topic_reconciler::change_replication_factor(context& ctx) {
    const auto& t = ctx.topic;
    if (ctx.created) {
        return {};  // CreateTopics gave it the replication factor
    }
    if (ctx.desc.replication_factor == ctx.replication_factor && !t.status.change) {
        return {};  // nothing to change and no change of ours to follow: no extra reads
    }
    auto admin_report = [](const error& e, const std::string& what) {
        auto failure = admin_failure(e, what);
        return step_outcome{step_outcome::kind::report, false, status::reasons::admin_error,
                            failure.message, failure};
    };
    auto under_way = ctx.admin->list_reassignments();
    if (!under_way) {
        return admin_report(under_way.error(), "list reassignments");
    }
    auto moving = static_cast<int32_t>(
        std::count_if(under_way.value().begin(), under_way.value().end(),
                      [&](const partition_move& m) { return m.topic == t.spec.topic_name; }));
    if (moving > 0) {
        // Ours or someone else's (kafka-reassign-partitions): let it finish before planning.
        ctx.next.change = api::replicas_change{ctx.replication_factor, moving, ctx.desc.partitions};
        return {};
    }
    auto placement = ctx.admin->describe_placement();
    if (!placement) {
        return admin_report(placement.error(), "describe placement");
    }
    auto moves = plan_replication_factor(t.spec.topic_name, ctx.replication_factor,
                                         placement.value());
    if (moves.empty()) {
        ctx.next.change.reset();
        bool uneven = std::any_of(
            placement.value().partitions.begin(), placement.value().partitions.end(),
            [&](const partition_placement& p) {
                return p.topic == t.spec.topic_name &&
                       static_cast<int32_t>(p.replicas.size()) != ctx.replication_factor;
            });
        if (uneven) {
            return {step_outcome::kind::report,
                    false,
                    status::reasons::replication_factor_too_high,
                    fmt::format("replication factor {} needs {} registered brokers; {} are",
                                ctx.replication_factor, ctx.replication_factor,
                                placement.value().brokers.size()),
                    std::nullopt,
                    replication_poll};
        }
        ctx.desc.replication_factor = ctx.replication_factor;
        return {};
    }
    if (auto r = ctx.admin->alter_reassignments(moves, replica_count::may_change); !r) {
        return admin_report(r.error(), "reassign partitions");
    }
    auto asked = static_cast<int32_t>(moves.size());
    ctx.next.change = api::replicas_change{ctx.replication_factor, asked, ctx.desc.partitions};
    _events.normal(kube::kinds::topic, t.meta, "ReplicationFactorChange",
                   fmt::format("reassigning {} of {} partitions of {} to replication factor {}",
                               asked, ctx.desc.partitions, t.spec.topic_name,
                               ctx.replication_factor));
    return {};
}

topic_reconciler::step_outcome topic_reconciler::sync_configs(context& ctx) {
    const auto& t = ctx.topic;
    ctx.next.managed_config = managed_keys(t);
    if (ctx.created) {
        return {};  // CreateTopics carried the configs; nothing was managed before
    }
    auto current = ctx.admin->describe_topic_configs(t.spec.topic_name);
    if (!current) {
        auto e = admin_failure(current.error(), "describe configs");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    auto changes = config_changes(t, current.value());
    if (changes.empty()) {
        return {};
    }
    if (auto r = ctx.admin->alter_configs(t.spec.topic_name, changes); !r) {
        ctx.next.managed_config = t.status.managed_config;  // unchanged until it applies
        auto e = admin_failure(r.error(), "alter configs");
        return {step_outcome::kind::report, false, status::reasons::admin_error, e.message, e};
    }
    return {};
}

topic_reconciler::step_outcome topic_reconciler::ready(context& ctx) {
    const auto& t = ctx.topic;
    ctx.next.topic_id = ctx.desc.topic_id;
    ctx.next.partitions = ctx.desc.partitions;
    ctx.next.replication_factor = ctx.desc.replication_factor;
    if (ctx.desc.partitions > t.spec.partitions) {
        return {step_outcome::kind::report, false, status::reasons::partitions_exceed_spec,
                fmt::format("the topic has {} partitions, more than spec.partitions {}; "
                            "partitions cannot shrink",
                            ctx.desc.partitions, t.spec.partitions)};
    }
    if (const auto& change = ctx.next.change) {
        // Serving throughout; look again soon so the progress in status stays current.
        return {step_outcome::kind::report,
                true,
                status::reasons::topic_ready,
                fmt::format("{} partitions, replication factor {}; changing to {}: {} of {} "
                            "partitions moving",
                            ctx.desc.partitions, ctx.desc.replication_factor, change->target,
                            change->moving, change->total),
                std::nullopt,
                replication_poll};
    }
    return {step_outcome::kind::report, true, status::reasons::topic_ready,
            fmt::format("{} partitions, replication factor {}", ctx.desc.partitions,
                        ctx.desc.replication_factor)};
}

reconcile_result topic_reconciler::sync_status(context& ctx, const step_outcome& outcome) {
    const auto& t = ctx.topic;
    auto now = kube::time_now();
    bool paused = outcome.what == step_outcome::kind::hold;
    mark_paused(ctx.next.conditions, paused, t.meta.generation, now);
    bool ready = outcome.ready;
    if (!paused) {
        ctx.next.observed_generation = t.meta.generation;
        status::set_condition(ctx.next.conditions, status::types::ready, outcome.ready, outcome.why,
                              outcome.message, t.meta.generation, now);
        if (outcome.failure || !outcome.ready) {
            _events.warning(kube::kinds::topic, t.meta, outcome.why.name, outcome.message);
        }
    } else {
        const auto* r = status::find_condition(ctx.next.conditions, status::types::ready);
        ready = r && r->status == "True";
    }
    if (_state)
        _state->topic_observed(t.meta.namespace_, t.meta.name, ready);
    if (ctx.next != t.status) {
        json updated = ctx.raw;
        updated["status"] = api::to_json(ctx.next);
        auto w = _api.replace_status(kube::kinds::topic, t.meta.namespace_, t.meta.name, updated);
        if (!w) {
            return reconcile_result::failed(w.error());
        }
    }
    if (outcome.failure && outcome.failure->transient) {
        return reconcile_result::failed(*outcome.failure);
    }
    if (outcome.requeue > 0ms) {
        return reconcile_result::after(outcome.requeue);
    }
    return reconcile_result::done();
}

reconcile_result topic_reconciler::finalize(context& ctx) {
    const auto& t = ctx.topic;
    if (!t.meta.has_finalizer(api::topic_finalizer)) {
        return reconcile_result::done();
    }
    std::string why;
    if (t.skip_finalizer()) {
        why = fmt::format("annotation {}=true: Kafka topic {} left untouched",
                          api::skip_finalizer_annotation, t.spec.topic_name);
    } else if (reconciliation_paused(t.meta)) {
        why = fmt::format("annotation {}=true: Kafka topic {} left untouched", pause_annotation,
                          t.spec.topic_name);
    } else if (t.spec.on_delete == api::deletion_policy::retain) {
        why = fmt::format("deletionPolicy Retain: Kafka topic {} kept", t.spec.topic_name);
    } else {
        auto topics = list_topics(t.meta.namespace_);
        if (!topics) {
            return reconcile_result::failed(topics.error());
        }
        auto claimants = other_claimants(t, topics.value());
        auto cluster = _api.get(kube::kinds::cluster, t.meta.namespace_, t.spec.cluster_name);
        if (!claimants.empty()) {
            why = fmt::format("Kafka topic {} kept: Topic {} still declares it", t.spec.topic_name,
                              claimants.front());
        } else if (!cluster && cluster.error().is_not_found()) {
            why =
                fmt::format("Cluster {} no longer exists: nothing to delete", t.spec.cluster_name);
        } else if (!cluster) {
            return reconcile_result::failed(cluster.error());
        } else {
            auto c = api::parse_cluster(cluster.value());
            if (!c) {
                return reconcile_result::failed(c.error());
            }
            auto admin = connect_as_operator(_api, _admins, c.value(), _bootstrap_override);
            result<void> deleted = admin ? admin.value()->delete_topic(t.spec.topic_name)
                                         : result<void>(admin.error());
            if (!deleted) {
                auto message = fmt::format(
                    "cannot delete Kafka topic {}: {} (annotate with {}=true "
                    "to remove the resource anyway)",
                    t.spec.topic_name, deleted.error().message, api::skip_finalizer_annotation);
                return sync_status(ctx, {step_outcome::kind::report, false,
                                         status::reasons::admin_error, message, deleted.error()});
            }
            why = fmt::format("Kafka topic {} deleted", t.spec.topic_name);
        }
    }
    if (auto r = remove_finalizer(_api, kube::kinds::topic, t.meta, api::topic_finalizer);
        !r) {
        return reconcile_result::failed(r.error());
    }
    log::get("topic")->info("{}/{}: finalizer removed ({})", t.meta.namespace_, t.meta.name, why);
    if (_state)
        _state->topic_gone(t.meta.namespace_, t.meta.name);
    return reconcile_result::done();
}

}  // namespace spool::op::reconcilers
