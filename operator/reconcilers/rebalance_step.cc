// The Cluster reconciler's rebalance step (cluster_reconciler.h has the overview; the plan is
// rebalance_plan.h). State lives in status.rebalance only, so an operator restart resumes it:
//
//   (new token) -> Pending (brokers not all there yet) -> Moving (reassignments under way)
//               -> Done (all finished, preferred leaders elected) | Failed (the cluster refused)

#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/reconcilers/cluster_context.h"
#include "operator/reconcilers/rebalance_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::op::reconcilers {

using namespace std::chrono_literals;

namespace {

int32_t sts_ready_replicas(const std::optional<json>& sts) {
    const json* st = sts ? find(*sts, "status") : nullptr;
    return st ? static_cast<int32_t>(get_int(*st, "readyReplicas")) : 0;
}

}  // namespace

cluster_reconciler::step_outcome cluster_reconciler::rebalance(context& ctx) {
    const auto& c = ctx.cluster;
    auto annotation = c.meta.annotations.find(rebalance_annotation);
    if (annotation == c.meta.annotations.end() || annotation->second.empty()) {
        return {};
    }
    const std::string& token = annotation->second;
    const auto& prev = c.status.rebalance;
    bool same = prev && prev->token == token;
    if (same && (prev->phase == "Done" || prev->phase == "Failed")) {
        return {};  // recorded: a new token asks again
    }
    auto report = [&](std::string phase, int32_t moved, int32_t total, std::string message) {
        ctx.rebalance = std::optional(
            api::rebalance_status{token, std::move(phase), moved, total, std::move(message)});
    };
    auto moving = [&](std::string message) {
        return step_outcome{step_outcome::kind::requeue, drain_poll, status::reasons::rebalancing,
                            std::move(message), std::nullopt};
    };
    if (ctx.held_replicas || sts_ready_replicas(ctx.statefulset) < c.spec.replicas) {
        std::string why = fmt::format("rebalance {} waits for all {} brokers to be ready", token,
                                      c.spec.replicas);
        if (!same || prev->phase != "Moving") {
            report("Pending", 0, 0, why);
        }
        return moving(why);
    }
    std::string bootstrap = _bootstrap_override.empty()
                                ? builders::operator_bootstrap_address(c)
                                : _bootstrap_override;
    auto admin = _admins.connect(bootstrap, ctx.tls());
    if (!admin) {
        return moving("rebalance " + token + ": " + admin.error().message);
    }
    auto& kafka = *admin.value();
    if (same && prev->phase == "Moving") {
        auto ongoing = kafka.list_reassignments();
        if (!ongoing) {
            return moving("rebalance " + token + ": " + ongoing.error().message);
        }
        auto left = static_cast<int32_t>(ongoing.value().size());
        if (left > 0) {
            int32_t moved = std::max(0, prev->total - left);
            std::string message = fmt::format("{} of {} partitions reassigned, {} under way", moved,
                                              prev->total, left);
            report("Moving", moved, prev->total, message);
            return moving("rebalance " + token + ": " + message);
        }
        auto failed = kafka.elect_preferred_leaders();
        if (!failed) {
            return moving("rebalance " + token + ": " + failed.error().message);
        }
        std::string message =
            fmt::format("{} partitions reassigned; preferred leaders elected", prev->total);
        if (!failed.value().empty()) {
            message += fmt::format(" except {} ({} partitions)", failed.value().front(),
                                   failed.value().size());
        }
        report("Done", prev->total, prev->total, message);
        _events.normal(kube::kinds::cluster, c.meta, "Rebalanced",
                       fmt::format("rebalance {}: {}", token, message));
        return {};
    }
    auto placement = kafka.describe_placement();
    if (!placement) {
        return moving("rebalance " + token + ": " + placement.error().message);
    }
    // The Cluster's brokers, as registered: a broker that has not registered yet gets nothing.
    std::vector<int32_t> brokers;
    for (auto b : placement.value().brokers) {
        if (b >= 0 && b < c.spec.replicas) {
            brokers.push_back(b);
        }
    }
    if (static_cast<int32_t>(brokers.size()) < c.spec.replicas) {
        std::string why = fmt::format("rebalance {} waits for {} of {} brokers to register", token,
                                      c.spec.replicas - brokers.size(), c.spec.replicas);
        report("Pending", 0, 0, why);
        return moving(why);
    }
    auto plan = plan_rebalance(brokers, placement.value().partitions);
    auto total = static_cast<int32_t>(plan.moves.size());
    if (!plan.moves.empty()) {
        if (auto r = kafka.alter_reassignments(plan.moves, replica_count::keep); !r) {
            std::string message = "the cluster refused the reassignment: " + r.error().message;
            report("Failed", 0, total, message);
            _events.warning(kube::kinds::cluster, c.meta, "RebalanceFailed",
                            fmt::format("rebalance {}: {}", token, message));
            return {};
        }
    }
    std::string message = fmt::format(
        "{} partitions reassigned ({} replica moves, {} preferred-leader changes) over brokers "
        "0-{}",
        total, plan.replica_moves, plan.leader_swaps, c.spec.replicas - 1);
    _events.normal(kube::kinds::cluster, c.meta, "Rebalancing",
                   fmt::format("rebalance {}: {}", token, message));
    report("Moving", 0, total, message);
    return moving("rebalance " + token + ": " + message);
}

}  // namespace spool::op::reconcilers
