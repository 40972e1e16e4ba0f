#pragma once

// The operator's view of the Kubernetes API. Reconcilers and controllers depend on this
// interface only; http_client.h implements it on cpprestsdk.
//
// Every call is synchronous and thread-safe. Errors carry the API server's HTTP status, reason
// and message (see op::error); 404/409/410 are for the caller to handle.

#include "operator/api/error.h"
#include "operator/api/json.h"
#include "operator/kube/resource.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::op::kube {

struct list_options {
    std::string label_selector;
    std::string field_selector;
    // watch() only, with an empty resource version: stream the current objects as ADDED events
    // and end them with a BOOKMARK annotated k8s.io/initial-events-end (a "watch list").
    bool send_initial_events = false;
};

// DELETE options: the uid precondition and how dependents go (empty: the server's default,
// Background for most kinds; "Orphan" leaves them running without an owner, which is how a
// StatefulSet is recreated with a new volumeClaimTemplate while its pods keep running).
struct delete_options {
    std::string uid;
    std::string propagation_policy;  // "", "Orphan", "Background", "Foreground"
};

struct list_result {
    std::vector<json> items;
    std::string resource_version;  // the list's; a watch resumes from it
};

enum class event_type { added, modified, deleted, bookmark };

struct watch_event {
    event_type type;
    json object;
};

class client {
public:
    virtual ~client() = default;

    virtual result<json> get(const resource_kind& kind, std::string_view ns,
                             std::string_view name) = 0;
    virtual result<list_result> list(const resource_kind& kind, std::string_view ns,
                                     const list_options& options = {}) = 0;

    // Watches from `resource_version` with bookmarks until the server ends the watch
    // (timeout_seconds), `on_event` returns false, or an error. Returns the last resource
    // version seen (to resume from). An expired version fails with error::is_gone() (410): the
    // caller must list again.
    virtual result<std::string> watch(const resource_kind& kind, std::string_view ns,
                                      const list_options& options,
                                      const std::string& resource_version, int timeout_seconds,
                                      const std::function<bool(const watch_event&)>& on_event) = 0;

    // Server-side apply as field manager "spool-operator" (force: take over conflicting fields).
    virtual result<json> apply(const resource_kind& kind, std::string_view ns,
                               std::string_view name, const json& object, bool force = true) = 0;
    virtual result<json> create(const resource_kind& kind, std::string_view ns,
                                const json& object) = 0;
    // PUT with the object's metadata.resourceVersion: 409 when someone wrote in between.
    virtual result<json> replace(const resource_kind& kind, std::string_view ns,
                                 std::string_view name, const json& object) = 0;
    // PUT to the status subresource, same optimistic concurrency as replace.
    virtual result<json> replace_status(const resource_kind& kind, std::string_view ns,
                                        std::string_view name, const json& object) = 0;
    // JSON merge patch (RFC 7386); include metadata.resourceVersion to make it conditional.
    virtual result<json> merge_patch(const resource_kind& kind, std::string_view ns,
                                     std::string_view name, const json& patch) = 0;
    // DELETE, optionally only if the object still has `uid` (so a recreated pod is not hit).
    virtual result<json> remove(const resource_kind& kind, std::string_view ns,
                                std::string_view name, std::string_view uid = {}) = 0;
    virtual result<json> remove(const resource_kind& kind, std::string_view ns,
                                std::string_view name, const delete_options& options) = 0;

    // Aborts in-flight watches and requests (shutdown); later calls fail fast.
    virtual void cancel() = 0;
};

}  // namespace spool::op::kube
