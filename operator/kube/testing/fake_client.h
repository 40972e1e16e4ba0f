#pragma once

// An in-memory kube::client for reconciler unit tests: a stand-in for the API server where a
// test must run in milliseconds and check each write (the real-apiserver tests are tests/e2e).
//
// What it models, and what it does not:
//   - objects keyed by kind, namespace and name; metadata.uid, resourceVersion (one counter for
//     all objects, as etcd's revision), generation (bumped when anything but status/metadata
//     changes) and creationTimestamp are set as the API server sets them;
//   - apply (server-side apply) is approximated by "the manifest replaces everything but status
//     and the server-set metadata" - field ownership between managers is not modelled;
//   - replace/replace_status/merge_patch check metadata.resourceVersion when given (409);
//   - remove honours the uid precondition (409) and finalizers (sets deletionTimestamp); a
//     replace or merge_patch that drops the last finalizer of such an object removes it;
//     owner-reference garbage collection is not modelled, so a propagationPolicy changes
//     nothing here (dependents are never removed by the fake; with Orphan the real server removes
//     their ownerReferences, which no test of the fake reads) - it is recorded in the write;
//   - list filters by namespace and equality label selectors ("a=b,c=d"); field selectors are
//     ignored; watch only replays the current objects (send_initial_events) and returns.
// Every write is recorded (writes()) so a test can assert that a pass made no needless write,
// and fail_next() injects one error for the next matching call.

#include "operator/kube/client.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace spool::op::kube::testing {

struct recorded_write {
    std::string verb;  // apply, create, replace, replace_status, merge_patch, remove
    std::string kind;  // resource_kind::kind
    std::string ns;
    std::string name;
    std::string detail;  // remove: the propagationPolicy, when one was given
};

class fake_client : public client {
public:
    result<json> get(const resource_kind& kind, std::string_view ns,
                     std::string_view name) override;
    result<list_result> list(const resource_kind& kind, std::string_view ns,
                             const list_options& options = {}) override;
    result<std::string> watch(const resource_kind& kind, std::string_view ns,
                              const list_options& options, const std::string& resource_version,
                              int timeout_seconds,
                              const std::function<bool(const watch_event&)>& on_event) override;
    result<json> apply(const resource_kind& kind, std::string_view ns, std::string_view name,
                       const json& object, bool force = true) override;
    result<json> create(const resource_kind& kind, std::string_view ns,
                        const json& object) override;
    result<json> replace(const resource_kind& kind, std::string_view ns, std::string_view name,
                         const json& object) override;
    result<json> replace_status(const resource_kind& kind, std::string_view ns,
                                std::string_view name, const json& object) override;
    result<json> merge_patch(const resource_kind& kind, std::string_view ns, std::string_view name,
                             const json& patch) override;
    result<json> remove(const resource_kind& kind, std::string_view ns, std::string_view name,
                        std::string_view uid = {}) override;
    result<json> remove(const resource_kind& kind, std::string_view ns, std::string_view name,
                        const delete_options& options) override;
    void cancel() override;

    // Test helpers. put() stores an object as given (status included, as another controller
    // - the StatefulSet controller, the kubelet - would have written it) and returns it with
    // the server-set metadata filled in.
    json put(const resource_kind& kind, const json& object);
    std::optional<json> object(const resource_kind& kind, std::string_view ns,
                               std::string_view name) const;
    // Removes an object outright, ignoring finalizers (what GC or a test's "drift" does).
    bool erase(const resource_kind& kind, std::string_view ns, std::string_view name);
    std::vector<recorded_write> writes() const;
    void clear_writes();
    // The next call with this verb (and kind, when not empty) fails with `e`.
    void fail_next(std::string verb, error e, std::string kind = {});

private:
    using key = std::tuple<std::string, std::string, std::string>;  // plural, namespace, name
    static key key_of(const resource_kind& kind, std::string_view ns, std::string_view name);
    std::optional<error> take_failure(std::string_view verb, const resource_kind& kind);
    void record(std::string_view verb, const resource_kind& kind, std::string_view ns,
                std::string_view name);
    json stamp_new(const resource_kind& kind, std::string_view ns, json object);
    std::string next_version();

    mutable std::mutex _mutex;
    std::map<key, json> _objects;
    std::vector<recorded_write> _writes;
    struct injected {
        std::string verb, kind;
        error e;
    };
    std::vector<injected> _failures;
    int64_t _version = 100;
    int64_t _uids = 0;
    bool _cancelled = false;
};

}  // namespace spool::op::kube::testing
