// The Cluster reconciler's drain step: brokers leave only once they host nothing
// (cluster_reconciler.h has the overview; the broker's side is docs/admin-api.md).

#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/reconcilers/cluster_context.h"
#include "operator/reconcilers/scale_down.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

namespace {

// Brokers that lead or host a replica of some partition.
std::set<int32_t> busy_brokers(const cluster_placement& placement) {
    std::set<int32_t> busy;
    for (const auto& p : placement.partitions) {
        busy.insert(p.replicas.begin(), p.replicas.end());
        if (p.leader >= 0) {
            busy.insert(p.leader);
        }
    }
    return busy;
}

}  // namespace

std::string cluster_reconciler::admin_host(context& ctx, int32_t below) {
    const auto& c = ctx.cluster;
    auto pods = _api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
    if (pods) {
        std::string sts = builders::statefulset_name(c);
        std::pair<int, std::string> best{below, ""};
        for (const auto& pod : pods.value().items) {
            auto meta = api::parse_meta(pod);
            int ordinal = ordinal_of(meta.name, sts);
            const json* st = find(pod, "status");
            std::string ip = st ? get_string(*st, "podIP") : "";
            if (ordinal >= 0 && ordinal < best.first && !meta.deleting && pod_ready(pod) &&
                !ip.empty()) {
                // HTTPS checks the certificate's names: the DNS name then.
                best = {ordinal, api::is_secured(c) ? builders::pod_dns_name(c, ordinal) : ip};
            }
        }
        if (!best.second.empty()) {
            return best.second;
        }
    }
    return builders::pod_dns_name(c, 0);
}

bool cluster_reconciler::pod_left_above(context& ctx, int32_t ordinal) {
    const auto& c = ctx.cluster;
    auto pods = _api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
    if (!pods) {
        return true;  // cannot tell: wait
    }
    std::string sts = builders::statefulset_name(c);
    for (const auto& pod : pods.value().items) {
        if (ordinal_of(api::parse_meta(pod).name, sts) >= ordinal) {
            return true;
        }
    }
    return false;
}

// DELETE /v1/brokers/{id}/decommission for ids [from, to): brokers that stay (a scale-up while
// draining) or come back (a scale-up after a scale-down left their marks in the metadata store,
// where placement would keep skipping them). Best effort: a scale-up must not wait for the admin
// API; a failure is a Warning Event, and the ids that failed are returned.
std::vector<int32_t> cluster_reconciler::cancel_decommissions(context& ctx, int32_t from,
                                                              int32_t to) {
    const auto& c = ctx.cluster;
    std::string host;
    std::vector<int32_t> failed;
    for (int32_t id = from; id < to; ++id) {
        if (host.empty()) {
            host = admin_host(ctx, std::min(from, c.spec.replicas));
        }
        auto r = _health.cancel_decommission(host, c.spec.http_port, id, ctx.tls());
        if (!r) {
            failed.push_back(id);
            _events.warning(kube::kinds::cluster, c.meta, "DecommissionNotCancelled",
                            fmt::format("broker {} stays, but its decommission could not be "
                                        "cancelled: {}",
                                        id, r.error().message));
        }
    }
    return failed;
}

cluster_reconciler::step_outcome cluster_reconciler::drain_before_shrink(context& ctx) {
    const auto& c = ctx.cluster;
    auto existing =
        _api.get(kube::kinds::statefulset, c.meta.namespace_, builders::statefulset_name(c));
    if (!existing) {
        if (existing.error().is_not_found()) {
            ctx.scale_down = std::vector<api::draining_broker>{};
            return {};  // first pass: nothing to shrink
        }
        auto e = existing.error();
        return {step_outcome::kind::fail, 0ms, status::reason_for_error(e.http_status, e.reason),
                "read StatefulSet: " + e.message, e};
    }
    const json* spec = find(existing.value(), "spec");
    auto current = static_cast<int32_t>(spec ? get_int(*spec, "replicas") : 0);
    const int32_t desired = c.spec.replicas;
    // Scaled back up while draining: the brokers that stay are drained no more (one whose
    // cancel failed stays listed, and is tried again next pass).
    std::vector<api::draining_broker> still_marked;
    for (const auto& b : c.status.scale_down) {
        if (b.id < desired && !cancel_decommissions(ctx, b.id, b.id + 1).empty()) {
            still_marked.push_back(b);
        }
    }
    if (current < desired) {
        (void)cancel_decommissions(ctx, current, desired);
    }
    if (current <= desired) {
        ctx.scale_down = still_marked;
        return {};
    }
    auto skip = c.meta.annotations.find(skip_scale_down_check_annotation);
    if (skip != c.meta.annotations.end() && skip->second == "true") {
        _events.warning(kube::kinds::cluster, c.meta, "ScaleDownUnchecked",
                        fmt::format("scaling down from {} to {} brokers without checking "
                                    "partitions ({}=true)",
                                    current, desired, skip_scale_down_check_annotation));
        ctx.scale_down = std::vector<api::draining_broker>{};
        return {};
    }
    auto hold = [&](int32_t replicas, std::string message) {
        ctx.held_replicas = replicas;
        ctx.scale_down_message = std::move(message);
        _events.warning(kube::kinds::cluster, c.meta, status::reasons::scale_down_blocked.name,
                        ctx.scale_down_message);
        return step_outcome{};
    };
    std::string bootstrap = _bootstrap_override.empty()
                                ? builders::operator_bootstrap_address(c)
                                : _bootstrap_override;
    auto admin = _admins.connect(bootstrap, ctx.tls());
    auto placement =
        admin ? admin.value()->describe_placement() : result<cluster_placement>(admin.error());
    if (!placement) {
        // Cannot prove the removed brokers are empty: keep them.
        return hold(current, fmt::format("scale-down from {} to {} brokers held: cannot read "
                                         "partition placement from {}: {} (annotate with {}=true "
                                         "to scale down anyway)",
                                         current, desired, bootstrap, placement.error().message,
                                         skip_scale_down_check_annotation));
    }
    auto plan = plan_scale_down(current, desired, placement.value());
    if (!plan.blocked && c.status.scale_down.empty()) {
        ctx.scale_down = std::vector<api::draining_broker>{};
        return {};  // the removed brokers host nothing and none was drained: shrink at once
    }
    // Drain every broker to remove, highest first. All at once: a broker drained alone could
    // receive replicas from the next one drained only to pass them on again.
    std::string host = admin_host(ctx, desired);
    auto busy = busy_brokers(placement.value());
    std::vector<api::draining_broker> seen;
    int32_t keep = desired;  // the StatefulSet size the brokers allow now
    for (int32_t id = current - 1; id >= desired; --id) {
        auto progress = _health.decommission_status(host, c.spec.http_port, id, ctx.tls());
        // remaining > 0: replicas placed on it since, or moves cancelled: POST again (idempotent).
        if (!progress || progress.value().phase == drain_progress::state::none ||
            progress.value().remaining > 0) {
            if (progress || progress.error().is_not_found()) {
                progress = _health.start_decommission(host, c.spec.http_port, id, ctx.tls());
            }
        }
        if (!progress && progress.error().is_conflict()) {
            return hold(plan.replicas,
                        fmt::format("{}; broker {} cannot be drained: {} (add brokers, lower the "
                                    "replication factor or delete the topic, or annotate with "
                                    "{}=true)",
                                    plan.message, id, progress.error().message,
                                    skip_scale_down_check_annotation));
        }
        if (!progress) {
            // The admin API is out of reach: today's hold (as far as Metadata allows).
            return hold(plan.replicas, fmt::format("{} (draining broker {} failed: {})",
                                                   plan.message, id, progress.error().message));
        }
        const auto& p = progress.value();
        bool drained = p.phase == drain_progress::state::drained && !busy.count(id);
        seen.push_back({id, drained ? "Drained" : "Draining", p.left()});
        if (!drained && keep == desired) {
            keep = id + 1;
        }
    }
    ctx.scale_down = seen;
    // One ordinal at a time, as the StatefulSet removes them, each once its broker is empty and
    // the pod dropped before it is gone (so a broker leaves the cluster before the next one).
    int32_t next = std::max(keep, current - 1);
    if (next < current && pod_left_above(ctx, current)) {
        next = current;
    }
    std::string detail;
    for (const auto& b : seen) {
        detail += fmt::format("{}broker {}: {}", detail.empty() ? "" : "; ", b.id,
                              b.phase == "Drained"
                                  ? std::string("drained")
                                  : fmt::format("{} partition replicas left", b.partitions_left));
    }
    ctx.draining = true;
    ctx.held_replicas = next;
    ctx.scale_down_message = fmt::format("scale-down from {} to {} brokers: StatefulSet at {}; {}",
                                         current, desired, next, detail);
    return {};
}

}  // namespace spool::op::reconcilers
