#include "operator/reconcilers/finalizer.h"

namespace spool::op::reconcilers {

namespace {

result<void> patch_finalizers(kube::client& api, const kube::resource_kind& kind,
                              const api::object_meta& meta, const json& finalizers) {
    json patch = obj({{"metadata", obj({{"finalizers", finalizers},
                                        {"resourceVersion", str(meta.resource_version)}})}});
    auto r = api.merge_patch(kind, meta.namespace_, meta.name, patch);
    if (!r) {
        return r.error();
    }
    return ok();
}

}  // namespace

result<void> add_finalizer(kube::client& api, const kube::resource_kind& kind,
                           const api::object_meta& meta, const char* finalizer) {
    json finalizers = from_strings(meta.finalizers);
    finalizers[meta.finalizers.size()] = str(finalizer);
    return patch_finalizers(api, kind, meta, finalizers);
}

result<void> remove_finalizer(kube::client& api, const kube::resource_kind& kind,
                              const api::object_meta& meta, const char* finalizer) {
    json finalizers = json::array();
    size_t i = 0;
    for (const auto& f : meta.finalizers) {
        if (f != finalizer) {
            finalizers[i++] = str(f);
        }
    }
    auto r = patch_finalizers(api, kind, meta, finalizers);
    if (!r && !r.error().is_not_found()) {
        return r.error();
    }
    return ok();
}

}  // namespace spool::op::reconcilers
