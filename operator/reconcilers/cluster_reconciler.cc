#include "operator/reconcilers/cluster_reconciler.h"

#include "common/log.h"
#include "operator/builders/common.h"
#include "operator/builders/config_map.h"
#include "operator/builders/network_policy.h"
#include "operator/builders/pdb.h"
#include "operator/builders/security.h"
#include "operator/builders/services.h"
#include "operator/builders/statefulset.h"
#include "operator/kube/leader_elector.h"
#include "operator/reconcilers/certificates.h"
#include "operator/reconcilers/cluster_context.h"
#include "operator/reconcilers/etcd_certificates.h"
#include "operator/reconcilers/external_hosts.h"
#include "operator/reconcilers/manual_roll.h"
#include "operator/reconcilers/pause.h"
#include "operator/reconcilers/scale_down.h"
#include "operator/reconcilers/storage_expansion.h"
#include "operator/status/cluster_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <ctime>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

std::pair<std::string, std::string> split_key(const std::string& key) {
    auto slash = key.find('/');
    if (slash == std::string::npos) {
        return {"", key};
    }
    return {key.substr(0, slash), key.substr(slash + 1)};
}

cluster_reconciler::cluster_reconciler(kube::client& api, event_recorder& events,
                                       broker_health& health, admin_client_factory& admins,
                                       std::string bootstrap_override)
    : _api(api),
      _events(events),
      _health(health),
      _admins(admins),
      _bootstrap_override(std::move(bootstrap_override)),
      _now([] { return static_cast<int64_t>(std::time(nullptr)); }) {}

const std::vector<cluster_reconciler::step>& cluster_reconciler::steps() {
    static const std::vector<step> list = {
        {"validate", &cluster_reconciler::validate},
        {"certificates", &cluster_reconciler::apply_certificates},
        {"etcd_certificates", &cluster_reconciler::apply_etcd_certificates},
        {"config_map", &cluster_reconciler::apply_config_map},
        {"services", &cluster_reconciler::apply_services},
        {"drain", &cluster_reconciler::drain_before_shrink},
        {"storage", &cluster_reconciler::expand_storage},
        {"statefulset", &cluster_reconciler::apply_statefulset},
        {"pdb", &cluster_reconciler::apply_pdb},
        {"network_policy", &cluster_reconciler::apply_network_policy},
        {"manual_roll", &cluster_reconciler::request_manual_roll},
        {"start_refusals", &cluster_reconciler::find_refusals},
        {"rolling_restart", &cluster_reconciler::rolling_restart},
        {"rebalance", &cluster_reconciler::rebalance},
    };
    return list;
}

std::vector<std::string> cluster_reconciler::step_names() {
    std::vector<std::string> names;
    for (const auto& s : steps()) {
        names.emplace_back(s.name);
    }
    return names;
}

reconcile_result cluster_reconciler::reconcile(const std::string& key) {
    auto [ns, name] = split_key(key);
    auto got = _api.get(kube::kinds::cluster, ns, name);
    if (!got) {
        if (got.error().is_not_found()) {
            if (_state)
                _state->cluster_gone(ns, name);
            return reconcile_result::done();  // deleted; owned objects go with it (GC)
        }
        return reconcile_result::failed(got.error());
    }
    context ctx;
    ctx.raw = got.value();
    auto parsed = api::parse_cluster(ctx.raw);
    if (!parsed) {
        log::get("cluster")->error("{}: {}", key, parsed.error().message);
        return reconcile_result::done();  // the CRD schema should make this impossible
    }
    ctx.cluster = std::move(parsed).value();
    api::apply_operator_defaults(ctx.cluster, _defaults);
    if (ctx.cluster.meta.deleting) {
        if (_state)
            _state->cluster_gone(ns, name);
        return reconcile_result::done();
    }
    if (reconciliation_paused(ctx.cluster.meta)) {
        return sync_paused(ctx);
    }
    step_outcome outcome;
    for (const auto& s : steps()) {
        outcome = (this->*s.run)(ctx);
        if (outcome.what != step_outcome::kind::next) {
            log::get("cluster")->debug("{}: step {} stopped the pass: {}", key, s.name,
                                       outcome.message);
            break;
        }
    }
    if (!ctx.held_replicas) {
        _scale_down_blocked_since.erase(key);
    } else if (outcome.what == step_outcome::kind::next && ctx.draining) {
        _scale_down_blocked_since.erase(key);
        outcome = {step_outcome::kind::requeue, drain_poll, status::reasons::draining_brokers,
                   ctx.scale_down_message, std::nullopt};
    } else if (outcome.what == step_outcome::kind::next) {
        auto now = std::chrono::steady_clock::now();
        auto since = _scale_down_blocked_since.try_emplace(key, now).first->second;
        auto blocked_for = std::chrono::duration_cast<std::chrono::seconds>(now - since);
        outcome = {step_outcome::kind::requeue, scale_down_backoff(blocked_for),
                   status::reasons::scale_down_blocked, ctx.scale_down_message, std::nullopt};
    }
    if (outcome.what == step_outcome::kind::next && ctx.start_refusals &&
        !ctx.start_refusals->empty()) {
        // Nothing to roll, yet a broker cannot start: say so in Progressing too. The pod watch
        // brings the next pass when it changes; the requeue is a backstop.
        outcome = {step_outcome::kind::requeue, external_poll,
                   status::reasons::feature_level_unsupported,
                   describe_start_refusals(*ctx.start_refusals), std::nullopt};
    }
    if (outcome.what == step_outcome::kind::next && !ctx.storage_resizing.empty()) {
        outcome = {step_outcome::kind::requeue, external_poll, status::reasons::resizing_storage,
                   ctx.storage_resizing, std::nullopt};
    }
    if (outcome.what == step_outcome::kind::next && ctx.load_balancers_pending > 0) {
        outcome = {step_outcome::kind::requeue, external_poll,
                   status::reasons::waiting_for_load_balancer,
                   fmt::format("{} brokers wait for their LoadBalancer address",
                               ctx.load_balancers_pending),
                   std::nullopt};
    }
    return sync_status(ctx, outcome);
}

cluster_reconciler::step_outcome cluster_reconciler::validate(context& ctx) {
    auto problems = api::validate_cluster(ctx.cluster);
    if (problems.empty()) {
        return {};
    }
    std::string message;
    for (const auto& p : problems) {
        message += (message.empty() ? "" : "; ") + p;
    }
    return {step_outcome::kind::fail, 0ms, status::reasons::invalid_spec, message,
            make_error("InvalidSpec", message, false)};
}

cluster_reconciler::step_outcome cluster_reconciler::apply_certificates(context& ctx) {
    const auto& c = ctx.cluster;
    if (!api::is_secured(c)) {
        return {};
    }
    auto r = reconcile_certificates(_api, c, _now());
    if (!r) {
        auto e = r.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "certificates: " + e.message, e};
    }
    if (!r.value().message.empty()) {
        _events.normal(kube::kinds::cluster, c.meta, "Certificates", r.value().message);
    }
    ctx.certificates_annotation = r.value().annotation;
    ctx.operator_tls = r.value().operator_tls;
    return {};
}

cluster_reconciler::step_outcome cluster_reconciler::apply_etcd_certificates(context& ctx) {
    const auto& c = ctx.cluster;
    if (!api::uses_etcd(c) || !c.spec.metadata_store.etcd_tls.managed) {
        return {};
    }
    auto r = reconcile_etcd_client_certificate(_api, c, _defaults.etcd_ca_secret, _now());
    if (!r) {
        auto e = r.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "etcd certificates: " + e.message, e};
    }
    if (!r.value().empty()) {
        _events.normal(kube::kinds::cluster, c.meta, "Certificates", r.value());
    }
    return {};
}

cluster_reconciler::step_outcome cluster_reconciler::apply(context& ctx,
                                                           const kube::resource_kind& kind,
                                                           const json& manifest, json* applied) {
    std::string name = manifest.at("metadata").at("name").as_string();
    auto r = _api.apply(kind, ctx.cluster.meta.namespace_, name, manifest, true);
    if (!r) {
        error e = r.error();
        e.message = fmt::format("apply {} {}: {}", kind.kind, name, e.message);
        auto why = status::reason_for_error(e.http_status, e.reason);
        return {step_outcome::kind::fail, 0ms, why, e.message, e};
    }
    if (applied) {
        *applied = std::move(r).value();
    }
    return {};
}

cluster_reconciler::step_outcome cluster_reconciler::apply_config_map(context& ctx) {
    const auto& c = ctx.cluster;
    std::map<int, std::string> hosts;
    if (c.spec.external_listener.enabled &&
        c.spec.external_listener.type == api::external_type::load_balancer) {
        auto services =
            _api.list(kube::kinds::service, c.meta.namespace_, {builders::selector_string(c), ""});
        if (!services) {
            auto e = services.error();
            return {step_outcome::kind::fail, 0ms,
                    status::reason_for_error(e.http_status, e.reason),
                    "list Services: " + e.message, e};
        }
        hosts = load_balancer_hosts(services.value().items);
        for (int i = 0; i < c.spec.replicas; ++i) {
            ctx.load_balancers_pending += hosts.contains(i) ? 0 : 1;
        }
    }
    return apply(ctx, kube::kinds::config_map, builders::build_config_map(c, hosts));
}

cluster_reconciler::step_outcome cluster_reconciler::apply_services(context& ctx) {
    auto out = apply(ctx, kube::kinds::service, builders::build_headless_service(ctx.cluster));
    if (out.what != step_outcome::kind::next) {
        return out;
    }
    out = apply(ctx, kube::kinds::service, builders::build_client_service(ctx.cluster));
    if (out.what != step_outcome::kind::next) {
        return out;
    }
    return apply_external_services(ctx);
}

cluster_reconciler::step_outcome cluster_reconciler::apply_statefulset(context& ctx) {
    json applied;
    json manifest = builders::build_statefulset(ctx.cluster);
    if (ctx.held_replicas) {
        manifest["spec"]["replicas"] = num(*ctx.held_replicas);
    }
    if (!ctx.certificates_annotation.empty()) {
        manifest["spec"]["template"]["metadata"]["annotations"]
                [builders::certificates_annotation] = str(ctx.certificates_annotation);
    }
    auto out = apply(ctx, kube::kinds::statefulset, manifest, &applied);
    if (out.what != step_outcome::kind::next) {
        return out;
    }
    const json* st = find(applied, "status");
    if (!st || !st->has_field("observedGeneration")) {
        // Not counted by the StatefulSet controller yet (new, or recreated for bigger volumes):
        // count the broker pods it is about to adopt, so that a recreation does not show a
        // Ready Cluster as 0 brokers for a pass.
        const auto& c = ctx.cluster;
        auto pods =
            _api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
        if (pods && !pods.value().items.empty()) {
            int64_t ready = 0;
            for (const auto& pod : pods.value().items) {
                ready += pod_ready(pod) ? 1 : 0;
            }
            applied["status"] =
                obj({{"replicas", num(pods.value().items.size())}, {"readyReplicas", num(ready)}});
        }
    }
    ctx.statefulset = std::move(applied);
    return out;
}

cluster_reconciler::step_outcome cluster_reconciler::apply_pdb(context& ctx) {
    return apply(ctx, kube::kinds::pdb, builders::build_pdb(ctx.cluster));
}

cluster_reconciler::step_outcome cluster_reconciler::apply_external_services(context& ctx) {
    const auto& c = ctx.cluster;
    for (const auto& service : builders::build_external_services(c)) {
        if (auto out = apply(ctx, kube::kinds::service, service);
            out.what != step_outcome::kind::next) {
            return out;
        }
    }
    // The Services of brokers that are gone (or of a listener turned off). A broker a held
    // scale-down keeps keeps its Service: count the StatefulSet's replicas too.
    auto services =
        _api.list(kube::kinds::service, c.meta.namespace_, {builders::selector_string(c), ""});
    if (!services) {
        auto e = services.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "list Services: " + e.message, e};
    }
    int32_t keep = -1;
    for (const auto& service : services.value().items) {
        auto meta = api::parse_meta(service);
        auto label = meta.labels.find(builders::external_broker_label);
        if (label == meta.labels.end() || meta.deleting) {
            continue;
        }
        int ordinal = ordinal_of(meta.name, c.meta.name + "-external");
        if (c.spec.external_listener.enabled && ordinal >= 0 && ordinal < c.spec.replicas) {
            continue;
        }
        if (c.spec.external_listener.enabled && keep < 0) {
            auto sts = _api.get(kube::kinds::statefulset, c.meta.namespace_,
                                builders::statefulset_name(c));
            const json* spec = sts ? find(sts.value(), "spec") : nullptr;
            keep = std::max<int32_t>(c.spec.replicas,
                                     spec ? static_cast<int32_t>(get_int(*spec, "replicas")) : 0);
        }
        if (c.spec.external_listener.enabled && ordinal >= 0 && ordinal < keep) {
            continue;
        }
        auto removed = _api.remove(kube::kinds::service, c.meta.namespace_, meta.name, meta.uid);
        if (!removed && !removed.error().is_not_found() && !removed.error().is_conflict()) {
            auto e = removed.error();
            return {step_outcome::kind::fail, 0ms,
                    status::reason_for_error(e.http_status, e.reason),
                    "delete Service " + meta.name + ": " + e.message, e};
        }
    }
    return {};
}

cluster_reconciler::step_outcome cluster_reconciler::apply_network_policy(context& ctx) {
    const auto& c = ctx.cluster;
    if (c.spec.network_policy.enabled) {
        return apply(ctx, kube::kinds::network_policy,
                     builders::build_network_policy(c, _defaults.operator_namespace));
    }
    // Turned off: remove ours, if there is one (a get first, so an idle pass writes nothing).
    auto existing =
        _api.get(kube::kinds::network_policy, c.meta.namespace_, builders::network_policy_name(c));
    if (!existing) {
        return {};  // not found, or unreadable: nothing of ours to remove
    }
    auto meta = api::parse_meta(existing.value());
    auto owner = meta.labels.find("app.kubernetes.io/managed-by");
    if (owner == meta.labels.end() || owner->second != "spool-operator" || meta.deleting) {
        return {};
    }
    auto removed = _api.remove(kube::kinds::network_policy, c.meta.namespace_, meta.name, meta.uid);
    if (!removed && !removed.error().is_not_found() && !removed.error().is_conflict()) {
        auto e = removed.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "delete NetworkPolicy " + meta.name + ": " + e.message, e};
    }
    return {};
}

cluster_reconciler::step_outcome cluster_reconciler::expand_storage(context& ctx) {
    const auto& c = ctx.cluster;
    auto existing =
        _api.get(kube::kinds::statefulset, c.meta.namespace_, builders::statefulset_name(c));
    if (!existing && !existing.error().is_not_found()) {
        return {};  // unreadable: the statefulset step reports it
    }
    // None yet, or recreated right after this step: still report claims that are growing.
    json sts = existing ? existing.value()
                        : obj({{"metadata", obj({{"name", str(builders::statefulset_name(c))}})}});
    auto sts_meta = api::parse_meta(sts);
    if (sts_meta.deleting) {
        // Our orphaning delete, still removing the pods' owner references.
        ctx.statefulset = sts;
        return {step_outcome::kind::requeue, 1s, status::reasons::resizing_storage,
                "waiting for the StatefulSet to be deleted (orphaning its pods) to recreate it "
                "with " +
                    c.spec.storage_size + " volume claims",
                std::nullopt};
    }
    auto claims = _api.list(kube::kinds::persistent_volume_claim, c.meta.namespace_,
                            {builders::selector_string(c), ""});
    if (!claims) {
        auto e = claims.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "list PersistentVolumeClaims: " + e.message, e};
    }
    auto plan = plan_storage(sts, claims.value().items, c.spec.storage_size);
    if (plan.what == storage_plan::kind::refuse) {
        ctx.statefulset = sts;
        return {step_outcome::kind::fail, 0ms, status::reasons::invalid_spec, plan.message,
                make_error("InvalidSpec", plan.message, false)};
    }
    // Claims asking less than the size: the ones to grow now, and those of brokers scaled away
    // earlier (kept by the Retain policy), so that a later scale-up finds them grown.
    for (const auto& name : plan.claims_to_grow) {
        json patch = obj(
            {{"spec", obj({{"resources",
                            obj({{"requests", obj({{"storage", str(c.spec.storage_size)}})}})}})}});
        auto patched =
            _api.merge_patch(kube::kinds::persistent_volume_claim, c.meta.namespace_, name, patch);
        if (!patched) {
            auto e = patched.error();
            ctx.statefulset = sts;
            return {step_outcome::kind::fail, 0ms,
                    status::reason_for_error(e.http_status, e.reason),
                    fmt::format("grow PersistentVolumeClaim {} to {} (does its StorageClass allow "
                                "volume expansion?): {}",
                                name, c.spec.storage_size, e.message),
                    e};
        }
    }
    if (plan.what == storage_plan::kind::expand) {
        auto removed = _api.remove(kube::kinds::statefulset, c.meta.namespace_, sts_meta.name,
                                   kube::delete_options{sts_meta.uid, "Orphan"});
        if (!removed && !removed.error().is_not_found() && !removed.error().is_conflict()) {
            auto e = removed.error();
            ctx.statefulset = sts;
            return {
                step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "delete StatefulSet (orphan) for its new volume claim template: " + e.message, e};
        }
        _events.normal(kube::kinds::cluster, c.meta, status::reasons::resizing_storage.name,
                       plan.message);
        ctx.statefulset = sts;
        return {step_outcome::kind::requeue, 1s, status::reasons::resizing_storage, plan.message,
                std::nullopt};
    }
    ctx.storage_resizing = plan.message;  // empty once every volume has the size
    return {};
}

int ordinal_of(const std::string& pod, const std::string& sts) {
    if (pod.size() <= sts.size() + 1 || pod.compare(0, sts.size() + 1, sts + "-") != 0) {
        return -1;
    }
    try {
        return std::stoi(pod.substr(sts.size() + 1));
    } catch (...) {
        return -1;
    }
}

bool pod_ready(const json& pod) {
    const json* st = find(pod, "status");
    const json* conds = st ? find(*st, "conditions") : nullptr;
    if (!conds) {
        return false;
    }
    for (const auto& c : conds->as_array()) {
        if (get_string(c, "type") == "Ready") {
            return get_string(c, "status") == "True";
        }
    }
    return false;
}

// OnDelete StatefulSet: a pod whose controller-revision-hash differs from the StatefulSet's
// updateRevision runs an old template. Restart them one at a time, highest ordinal first, only
// when every pod is ready and the broker itself says it is safe. An outdated pod that is not
// ready goes first and ungated (Strimzi's rule): it serves nothing, and waiting for it to become
// ready would wait forever when its old template is what keeps it from starting (a bad config
// value, a missing image), even after the Cluster was fixed.
cluster_reconciler::step_outcome cluster_reconciler::rolling_restart(context& ctx) {
    if (!ctx.statefulset) {
        return {};
    }
    const json* st = find(*ctx.statefulset, "status");
    std::string update_revision = st ? get_string(*st, "updateRevision") : "";
    if (update_revision.empty()) {
        return {};  // the StatefulSet controller has not looked at it yet
    }
    const auto& c = ctx.cluster;
    auto pods = _api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
    if (!pods) {
        auto e = pods.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "list pods: " + e.message, e};
    }
    struct outdated_pod {
        int ordinal;
        std::string name, uid, ip;
        bool requested = false;  // manual-rolling-update, not a template change
        bool ready = true;
    };
    std::vector<outdated_pod> outdated;
    bool all_ready = true;
    std::string refusing_on_current;  // a pod that exits 5 on the template a roll would bring
    std::string sts = builders::statefulset_name(c);
    for (const auto& pod : pods.value().items) {
        auto meta = api::parse_meta(pod);
        int ordinal = ordinal_of(meta.name, sts);
        if (ordinal < 0) {
            continue;
        }
        bool ready = !meta.deleting && pod_ready(pod);
        all_ready = all_ready && ready;
        auto rev = meta.labels.find("controller-revision-hash");
        bool old_template = rev != meta.labels.end() && rev->second != update_revision;
        bool refusing =
            ctx.start_refusals &&
            std::any_of(ctx.start_refusals->begin(), ctx.start_refusals->end(),
                        [&](const refused_pod& r) { return r.name == meta.name; });
        if (refusing && !old_template && refusing_on_current.empty()) {
            refusing_on_current = meta.name;
        }
        if ((old_template || manual_roll_requested(meta)) && !meta.deleting) {
            const json* ps = find(pod, "status");
            outdated.push_back({ordinal, meta.name, meta.uid, ps ? get_string(*ps, "podIP") : "",
                                !old_template, ready});
        }
    }
    std::sort(outdated.begin(), outdated.end(), [](const auto& a, const auto& b) {
        return std::tie(a.ready, b.ordinal) < std::tie(b.ready, a.ordinal);  // unready first
    });
    for (const auto& p : outdated) {
        ctx.restart_pending.push_back(p.name);
    }
    // A pod already gone (NotFound) or replaced (Conflict on its uid) counts as restarted.
    auto restart_pod = [&](const outdated_pod& p) -> std::optional<step_outcome> {
        auto removed = _api.remove(kube::kinds::pod, c.meta.namespace_, p.name, p.uid);
        if (removed || removed.error().is_not_found() || removed.error().is_conflict()) {
            return std::nullopt;
        }
        auto e = removed.error();
        return step_outcome{step_outcome::kind::fail, 0ms,
                            status::reason_for_error(e.http_status, e.reason),
                            "restart pod " + p.name + ": " + e.message, e};
    };
    if (outdated.empty()) {
        return {};
    }
    // Every other pod would refuse the same way once restarted onto this template, even an
    // unready one that the rule below would restart ungated: restart none.
    if (!refusing_on_current.empty()) {
        return {step_outcome::kind::requeue, restart_poll * 2,
                status::reasons::feature_level_unsupported,
                fmt::format("{} pods to restart; holding the roll while {} refuses to start on the "
                            "new template (exit status {})",
                            outdated.size(), refusing_on_current, feature_level_unsupported_exit),
                std::nullopt};
    }
    if (!outdated.front().ready) {
        const auto& stuck = outdated.front();
        if (auto failed = restart_pod(stuck)) {
            return *failed;
        }
        _events.normal(kube::kinds::cluster, c.meta, "RollingRestart",
                       fmt::format("restarted {} first: it runs an outdated template and is not "
                                   "ready, so it serves nothing",
                                   stuck.name));
        return {step_outcome::kind::requeue, restart_poll, status::reasons::rolling_restart,
                fmt::format("restarting {} ({} left)", stuck.name, outdated.size()),
                std::nullopt};
    }
    if (!all_ready) {
        return {
            step_outcome::kind::requeue, restart_poll, status::reasons::waiting_for_pods,
            fmt::format("{} pods to restart; waiting until every broker is ready", outdated.size()),
            std::nullopt};
    }
    const auto& next = outdated.front();
    // HTTPS checks the broker certificate's names: its DNS name then, not its IP.
    std::string host = next.ip.empty() || api::is_secured(c)
                           ? builders::pod_dns_name(c, next.ordinal)
                           : next.ip;
    // A single broker never calls its own restart safe (everything it hosts goes offline), yet
    // a config change must apply some time: with one replica the restart is unconditional.
    auto verdict = c.spec.replicas == 1
                       ? result<restart_verdict>(restart_verdict{true, "single broker"})
                       : _health.restart_safe(host, c.spec.http_port, next.ordinal,
                                              ctx.tls());
    if (!verdict) {
        return {step_outcome::kind::requeue, restart_poll * 2, status::reasons::brokers_unreachable,
                verdict.error().message, std::nullopt};
    }
    if (!verdict.value().safe) {
        return {step_outcome::kind::requeue, restart_poll * 2,
                status::reasons::waiting_for_restart_safe,
                fmt::format("broker {} says a restart is not safe: {}", next.ordinal,
                            verdict.value().reason),
                std::nullopt};
    }
    if (auto failed = restart_pod(next)) {
        return *failed;
    }
    // The broker's own verdict goes with the event: the record of why this restart was allowed.
    _events.normal(
        kube::kinds::cluster, c.meta, "RollingRestart",
        fmt::format("restarted {} {} (broker {}: {})", next.name,
                    next.requested ? std::string("on request (") + manual_roll_annotation + ")"
                                   : std::string("for the new configuration"),
                    next.ordinal, verdict.value().reason));
    return {step_outcome::kind::requeue, restart_poll, status::reasons::rolling_restart,
            fmt::format("restarting {} ({} left)", next.name, outdated.size()), std::nullopt};
}

// Broker pods exiting with status 5 (start_refusals.h): a Warning Event here, the UpgradeRefused
// condition in sync_status. A pod list that fails keeps the stored condition; rolling_restart
// reports the failure.
cluster_reconciler::step_outcome cluster_reconciler::find_refusals(context& ctx) {
    const auto& c = ctx.cluster;
    auto pods = _api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
    if (!pods) {
        return {};
    }
    ctx.start_refusals = find_start_refusals(pods.value().items, builders::statefulset_name(c));
    if (!ctx.start_refusals->empty()) {
        _events.warning(kube::kinds::cluster, c.meta, status::types::upgrade_refused,
                        describe_start_refusals(*ctx.start_refusals));
    }
    return {};
}

// A manual roll asked on the Cluster is handed to its pods; rolling_restart then restarts them
// with the same gating as a config roll.
cluster_reconciler::step_outcome cluster_reconciler::request_manual_roll(context& ctx) {
    const auto& c = ctx.cluster;
    auto marked = hand_manual_roll_to_pods(_api, c, builders::selector_string(c), ctx.raw);
    if (!marked) {
        auto e = marked.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                e.message, e};
    }
    if (marked.value() > 0) {
        _events.normal(kube::kinds::cluster, c.meta, "ManualRollingUpdate",
                       fmt::format("{} broker pods to restart on request ({})", marked.value(),
                                   manual_roll_annotation));
    }
    return {};
}

// Paused: nothing owned is written; only ReconciliationPaused=True goes into status.
reconcile_result cluster_reconciler::sync_paused(context& ctx) {
    auto next = ctx.cluster.status;
    mark_paused(next.conditions, true, ctx.cluster.meta.generation, kube::time_now());
    if (auto written = write_status(ctx, next); !written) {
        return reconcile_result::failed(written.error());
    }
    return reconcile_result::done();
}

// Writes `next` only when it differs from the stored status (no write on an idle pass).
result<void> cluster_reconciler::write_status(const context& ctx, const api::cluster_status& next) {
    if (next == ctx.cluster.status) {
        return ok();
    }
    json updated = ctx.raw;
    updated["status"] = api::to_json(next);
    auto written = _api.replace_status(kube::kinds::cluster, ctx.cluster.meta.namespace_,
                                       ctx.cluster.meta.name, updated);
    if (!written) {
        return written.error();
    }
    return ok();
}

reconcile_result cluster_reconciler::sync_status(context& ctx, const step_outcome& outcome) {
    status::cluster_observation seen;
    seen.cluster = &ctx.cluster;
    seen.statefulset = ctx.statefulset ? &*ctx.statefulset : nullptr;
    seen.restart_pending = ctx.restart_pending;
    seen.scale_down = ctx.scale_down;
    seen.rebalance = ctx.rebalance;
    if (ctx.start_refusals) {
        seen.start_refused = describe_start_refusals(*ctx.start_refusals);
    }
    if (outcome.what == step_outcome::kind::requeue) {
        seen.blocked = outcome.why;
        seen.blocked_message = outcome.message;
        seen.stalled =
            std::string_view(outcome.why.name) == status::reasons::scale_down_blocked.name ||
            std::string_view(outcome.why.name) == status::reasons::feature_level_unsupported.name;
    } else if (outcome.what == step_outcome::kind::fail) {
        seen.failure = outcome.why;
        seen.failure_message = outcome.message;
        _events.warning(kube::kinds::cluster, ctx.cluster.meta, outcome.why.name, outcome.message);
    }
    auto next = status::compute_cluster_status(seen, kube::time_now());
    mark_paused(next.conditions, false, ctx.cluster.meta.generation, kube::time_now());
    if (_state) {
        cluster_state state;
        for (const auto& c : next.conditions) {
            if (c.type == status::types::ready)
                state.ready = c.status == "True";
        }
        state.replicas = ctx.cluster.spec.replicas;
        state.ready_replicas = next.ready_replicas;
        state.restart_pending = static_cast<int32_t>(next.restart_pending.size());
        state.scale_down_blocked = seen.stalled;
        _state->cluster_observed(ctx.cluster.meta.namespace_, ctx.cluster.meta.name, state);
    }
    if (auto written = write_status(ctx, next); !written) {
        // 409: someone changed the Cluster since we read it; the next pass sees it.
        return reconcile_result::failed(written.error());
    }
    switch (outcome.what) {
        case step_outcome::kind::next:
            return reconcile_result::done();
        case step_outcome::kind::requeue:
            return reconcile_result::after(outcome.after);
        case step_outcome::kind::fail:
            if (outcome.failure && !outcome.failure->transient) {
                return reconcile_result::done();  // terminal: wait for a spec change
            }
            return reconcile_result::failed(
                outcome.failure.value_or(make_error(outcome.why.name, outcome.message)));
    }
    return reconcile_result::done();
}

}  // namespace spool::op::reconcilers
