#pragma once

// Writes core/v1 Events about Clusters and Topics (kubectl describe shows them). The same
// (object, reason, message) is written at most once per ten minutes so that a failing object
// requeued with backoff does not flood the namespace.
//
// Threading: thread-safe. Failures to write an Event are logged and otherwise ignored: an
// Event is a courtesy, the condition in status is the record.

#include "operator/api/meta.h"
#include "operator/kube/client.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace spool::op::reconcilers {

class event_recorder {
public:
    explicit event_recorder(kube::client& api) : _api(api) {}

    void normal(const kube::resource_kind& kind, const api::object_meta& about,
                std::string_view reason, std::string_view message);
    void warning(const kube::resource_kind& kind, const api::object_meta& about,
                 std::string_view reason, std::string_view message);

private:
    void record(const kube::resource_kind& kind, const api::object_meta& about, const char* type,
                std::string_view reason, std::string_view message);

    kube::client& _api;
    std::mutex _mutex;
    std::map<std::string, std::chrono::steady_clock::time_point> _recent;
};

}  // namespace spool::op::reconcilers
