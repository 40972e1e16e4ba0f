#include "operator/reconcilers/manual_roll.h"

#include <fmt/format.h>

namespace spool::op::reconcilers {

result<int> hand_manual_roll_to_pods(kube::client& api, const api::cluster& c,
                                     const std::string& selector, json& raw) {
    if (!manual_roll_requested(c.meta)) {
        return 0;
    }
    auto pods = api.list(kube::kinds::pod, c.meta.namespace_, {selector, ""});
    if (!pods) {
        return pods.error();
    }
    int marked = 0;
    for (const auto& pod : pods.value().items) {
        auto meta = api::parse_meta(pod);
        if (meta.deleting || manual_roll_requested(meta)) {
            continue;  // already going, or already marked
        }
        json patch = obj(
            {{"metadata", obj({{"annotations", obj({{manual_roll_annotation, str("true")}})}})}});
        auto r = api.merge_patch(kube::kinds::pod, c.meta.namespace_, meta.name, patch);
        if (!r && !r.error().is_not_found()) {
            auto e = r.error();
            e.message = fmt::format("annotate pod {}: {}", meta.name, e.message);
            return e;
        }
        ++marked;
    }
    // Conditional on the Cluster's resourceVersion: a request made again since we read it is
    // not dropped (409, and the next pass hands it over too).
    json patch =
        obj({{"metadata", obj({{"annotations", obj({{manual_roll_annotation, json::null()}})},
                               {"resourceVersion", str(c.meta.resource_version)}})}});
    auto r = api.merge_patch(kube::kinds::cluster, c.meta.namespace_, c.meta.name, patch);
    if (!r && !r.error().is_not_found()) {
        auto e = r.error();
        e.message = "remove the Cluster's " + std::string(manual_roll_annotation) +
                    " annotation: " + e.message;
        return e;
    }
    if (r) {
        raw = std::move(r).value();
    }
    return marked;
}

}  // namespace spool::op::reconcilers
