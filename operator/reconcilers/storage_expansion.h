#pragma once

// Growing the brokers' volumes when spec.storage.size grows. A StatefulSet's
// volumeClaimTemplates are immutable, so (the Redpanda operator's way):
//   1. every existing claim of the Cluster gets spec.resources.requests.storage = the new size
//      (the API server accepts it only when the claim's StorageClass has
//      allowVolumeExpansion: true; a CSI external-resizer then grows the volume and sets
//      status.capacity);
//   2. the StatefulSet is deleted with propagationPolicy=Orphan (its pods keep running, without
//      an owner) and applied again with the new template, which adopts the same pods: the pod
//      template did not change, so neither did the revision, and nothing restarts;
//   3. until every claim's status.capacity reaches the size, Progressing says ResizingStorage.
// A smaller size is refused (InvalidSpec): claims never shrink.
//
// Pure; the Cluster reconciler reads the StatefulSet and the claims and does the writes.

#include "operator/api/json.h"

#include <string>
#include <vector>

namespace spool::op::reconcilers {

struct storage_plan {
    enum class kind { none, refuse, expand } what = kind::none;
    std::string template_size;                // the StatefulSet's volumeClaimTemplate asks this
    std::vector<std::string> claims_to_grow;  // bound claims asking less than the size
    std::vector<std::string> claims_unbound;  // unbound ones: grown once bound
    int32_t claims = 0;                       // of this StatefulSet ("data-<sts>-<n>")
    int32_t resizing = 0;                     // bound, with status.capacity still below the size
    std::string message;
};

// `statefulset`: the stored one (or just {metadata: {name}} while there is none: then only the
// claims' growth is reported); `claims`: the Cluster's PersistentVolumeClaims (label
// selector); `size`: spec.storage.size.
storage_plan plan_storage(const json& statefulset, const std::vector<json>& claims,
                          const std::string& size);

// The storage a StatefulSet's "data" volumeClaimTemplate requests ("" when none).
std::string template_storage(const json& statefulset);

}  // namespace spool::op::reconcilers
