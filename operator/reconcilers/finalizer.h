#pragma once

// Adding and removing one finalizer of a resource the operator reconciles (Topic, User), as JSON
// merge patches conditional on the resourceVersion read: a concurrent change of the finalizer
// list by someone else is never overwritten (409, retried by the controller).

#include "operator/api/error.h"
#include "operator/api/meta.h"
#include "operator/kube/client.h"

namespace spool::op::reconcilers {

result<void> add_finalizer(kube::client& api, const kube::resource_kind& kind,
                           const api::object_meta& meta, const char* finalizer);
// An object already gone is no error.
result<void> remove_finalizer(kube::client& api, const kube::resource_kind& kind,
                              const api::object_meta& meta, const char* finalizer);

}  // namespace spool::op::reconcilers
