#include "operator/reconcilers/start_refusals.h"

#include "operator/reconcilers/cluster_context.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::op::reconcilers {

namespace {

// The `terminated` state under `state_key` ("state" or "lastState") of a container status, if
// it ended with exit code 5.
const json* refused_termination(const json& container, std::string_view state_key) {
    const json* state = find(container, state_key);
    const json* terminated = state ? find(*state, "terminated") : nullptr;
    if (terminated && get_int(*terminated, "exitCode") == feature_level_unsupported_exit) {
        return terminated;
    }
    return nullptr;
}

}  // namespace

std::vector<refused_pod> find_start_refusals(const std::vector<json>& pods,
                                             const std::string& sts) {
    std::vector<refused_pod> out;
    for (const auto& pod : pods) {
        try {
            auto meta = api::parse_meta(pod);
            if (ordinal_of(meta.name, sts) < 0 || meta.deleting) {
                continue;
            }
            const json* st = find(pod, "status");
            const json* containers = st ? find(*st, "containerStatuses") : nullptr;
            if (!containers || !containers->is_array()) {
                continue;
            }
            for (const auto& c : containers->as_array()) {
                if (get_string(c, "name") != "broker" || get_bool(c, "ready")) {
                    continue;  // a ready broker started after all, whatever its last exit
                }
                // Terminated now (between restarts), else waiting or starting again after an
                // exit 5 (CrashLoopBackOff): the same refusal until the image or level changes.
                const json* t = refused_termination(c, "state");
                if (!t) {
                    t = refused_termination(c, "lastState");
                }
                if (t) {
                    out.push_back({meta.name, get_string(c, "image"), get_string(*t, "message")});
                }
            }
        } catch (const web::json::json_exception&) {
            continue;  // a pod status of an unexpected shape says nothing about a refusal
        }
    }
    std::sort(out.begin(), out.end(),
              [](const refused_pod& a, const refused_pod& b) { return a.name < b.name; });
    return out;
}

std::string describe_start_refusals(const std::vector<refused_pod>& refused) {
    std::string text;
    for (const auto& p : refused) {
        text += text.empty() ? "" : "; ";
        text +=
            fmt::format("{} ({}) exits with status {}: {}", p.name,
                        p.image.empty() ? "image unknown" : p.image, feature_level_unsupported_exit,
                        p.message.empty() ? "the cluster's finalized feature levels are newer "
                                            "than its binary supports (no termination message)"
                                          : p.message);
    }
    if (!text.empty()) {
        text +=
            ". Roll back to an image that supports the cluster's feature levels "
            "(docs/upgrades.md, \"A refused downgrade\")";
    }
    return text;
}

}  // namespace spool::op::reconcilers
