#include "operator/reconcilers/storage_expansion.h"

#include "operator/api/cluster_options.h"

#include <fmt/format.h>

namespace spool::op::reconcilers {

namespace {

std::string claim_request(const json& claim) {
    const json* spec = find(claim, "spec");
    const json* res = spec ? find(*spec, "resources") : nullptr;
    const json* req = res ? find(*res, "requests") : nullptr;
    return req ? get_string(*req, "storage") : "";
}

std::string claim_capacity(const json& claim) {
    const json* st = find(claim, "status");
    const json* cap = st ? find(*st, "capacity") : nullptr;
    return cap ? get_string(*cap, "storage") : "";
}

// Below `size`; a missing or unreadable quantity counts as below.
bool below(const std::string& quantity, double size) {
    auto q = api::parse_quantity(quantity);
    return !q || *q < size;
}

}  // namespace

std::string template_storage(const json& statefulset) {
    const json* spec = find(statefulset, "spec");
    const json* templates = spec ? find(*spec, "volumeClaimTemplates") : nullptr;
    if (!templates || !templates->is_array()) {
        return "";
    }
    for (const auto& t : templates->as_array()) {
        const json* meta = find(t, "metadata");
        if (meta && get_string(*meta, "name") == "data") {
            return claim_request(t);
        }
    }
    return "";
}

storage_plan plan_storage(const json& statefulset, const std::vector<json>& claims,
                          const std::string& size) {
    storage_plan plan;
    plan.template_size = template_storage(statefulset);
    auto wanted = api::parse_quantity(size);
    auto current = api::parse_quantity(plan.template_size);
    if (!wanted) {
        return plan;  // validation reports a malformed spec
    }
    if (current && *wanted < *current) {
        plan.what = storage_plan::kind::refuse;
        plan.message = fmt::format(
            "storage.size cannot shrink from {} to {}: PersistentVolumeClaims only grow (set it "
            "back to {} or more)",
            plan.template_size, size, plan.template_size);
        return plan;
    }
    std::string sts = get_string(statefulset.at("metadata"), "name");
    std::string prefix = "data-" + sts + "-";
    for (const auto& claim : claims) {
        std::string name = get_string(claim.at("metadata"), "name");
        if (name.rfind(prefix, 0) != 0) {
            continue;
        }
        ++plan.claims;
        const json* st = find(claim, "status");
        bool bound = st && get_string(*st, "phase") == "Bound";
        if (below(claim_request(claim), *wanted)) {
            // The API server lets only a bound claim change its request; an unbound one grows
            // on a later pass, once bound.
            (bound ? plan.claims_to_grow : plan.claims_unbound).push_back(name);
        }
        // An unbound claim has no capacity yet: binding, not resizing.
        if (!claim_capacity(claim).empty() && below(claim_capacity(claim), *wanted)) {
            ++plan.resizing;
        }
    }
    if (current && *wanted > *current) {
        plan.what = storage_plan::kind::expand;
        plan.message = fmt::format(
            "growing the volumes from {} to {}: {} claims to resize, then the StatefulSet is "
            "recreated with the new claim template (its pods keep running)",
            plan.template_size, size, plan.claims_to_grow.size());
    } else if (plan.resizing > 0) {
        plan.message = fmt::format("{} of {} volumes are still growing to {}", plan.resizing,
                                   plan.claims, size);
    } else if (!plan.claims_unbound.empty()) {
        plan.message = fmt::format("{} claims wait to be bound before they can grow to {}",
                                   plan.claims_unbound.size(), size);
    }
    return plan;
}

}  // namespace spool::op::reconcilers
