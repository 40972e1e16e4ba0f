#include "operator/builders/pdb.h"

#include "operator/builders/common.h"

namespace spool::op::builders {

json build_pdb(const api::cluster& c) {
    return obj({{"apiVersion", str("policy/v1")},
                {"kind", str("PodDisruptionBudget")},
                {"metadata", object_metadata(c, pdb_name(c))},
                {"spec", obj({{"maxUnavailable", num(c.spec.pdb_max_unavailable)},
                              {"selector",
                               obj({{"matchLabels", from_string_map(selector_labels(c))}})}})}});
}

}  // namespace spool::op::builders
