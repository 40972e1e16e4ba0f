#include "operator/status/cluster_status.h"

#include "operator/builders/common.h"
#include "operator/builders/config_map.h"

#include <fmt/format.h>

namespace spool::op::status {

api::cluster_status compute_cluster_status(const cluster_observation& seen, std::string_view now) {
    const api::cluster& c = *seen.cluster;
    const int64_t gen = c.meta.generation;
    api::cluster_status s = c.status;  // keeps lastTransitionTime of unchanged conditions
    s.observed_generation = gen;
    s.selector = builders::selector_string(c);
    s.bootstrap = builders::bootstrap_address(c);
    s.config_hash = builders::config_hash(c);
    s.restart_pending = seen.restart_pending;
    s.metadata_store_type = api::uses_etcd(c) ? "etcd" : "embedded";
    s.metadata_store_endpoints =
        api::uses_etcd(c) ? c.spec.metadata_store.etcd_endpoints : std::vector<std::string>{};
    s.metadata_store_prefix = api::uses_etcd(c) ? api::etcd_prefix(c) : "";
    if (seen.scale_down) {
        s.scale_down = *seen.scale_down;
    }
    if (seen.rebalance) {
        s.rebalance = *seen.rebalance;
    }

    bool sts_current = false;
    if (seen.statefulset) {
        const json* st = find(*seen.statefulset, "status");
        s.replicas = st ? static_cast<int32_t>(get_int(*st, "replicas")) : 0;
        s.ready_replicas = st ? static_cast<int32_t>(get_int(*st, "readyReplicas")) : 0;
        int64_t sts_gen = get_int(seen.statefulset->at("metadata"), "generation");
        sts_current = st && get_int(*st, "observedGeneration") >= sts_gen;
    }

    bool all_ready = s.ready_replicas == c.spec.replicas && s.replicas == c.spec.replicas &&
                     s.restart_pending.empty() && !seen.failure;
    set_condition(s.conditions, types::ready, all_ready,
                  all_ready ? reasons::brokers_ready : reasons::brokers_not_ready,
                  fmt::format("{}/{} brokers ready", s.ready_replicas, c.spec.replicas), gen, now);

    if (seen.failure) {
        set_condition(s.conditions, types::degraded, true, *seen.failure, seen.failure_message, gen,
                      now);
    } else {
        set_condition(s.conditions, types::degraded, false, reasons::as_expected, "", gen, now);
    }

    if (seen.blocked) {
        set_condition(s.conditions, types::progressing, !seen.stalled, *seen.blocked,
                      seen.blocked_message, gen, now);
    } else if (!seen.failure && (!all_ready || !sts_current)) {
        set_condition(s.conditions, types::progressing, true, reasons::brokers_not_ready,
                      fmt::format("waiting for {} of {} brokers",
                                  c.spec.replicas - s.ready_replicas, c.spec.replicas),
                      gen, now);
    } else {
        set_condition(s.conditions, types::progressing, false, reasons::reconciled, "", gen, now);
    }
    if (seen.start_refused && seen.start_refused->empty()) {
        remove_condition(s.conditions, types::upgrade_refused);
    } else if (seen.start_refused) {
        set_condition(s.conditions, types::upgrade_refused, true,
                      reasons::feature_level_unsupported, *seen.start_refused, gen, now);
    }
    auto open = api::plaintext_listeners(c);
    if (open.empty()) {
        remove_condition(s.conditions, types::insecure_listeners);
    } else {
        std::string names;
        for (const auto& l : open) {
            names += (names.empty() ? "" : ", ") + l;
        }
        set_condition(s.conditions, types::insecure_listeners, true, reasons::plaintext_listeners,
                      fmt::format("listeners without TLS or authentication: {} (anyone who "
                                  "reaches them reads and writes every topic; see spec.security)",
                                  names),
                      gen, now);
    }
    return s;
}

}  // namespace spool::op::status
