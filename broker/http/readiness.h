#pragma once

// Liveness and readiness, as the Kubernetes probes see them.
//
//   /healthz (liveness):  is the process able to make progress? Fails only on a fatal,
//                         restart-worthy condition (mark_failed), never while starting or
//                         draining, so Kubernetes does not kill a broker that is recovering
//                         its logs or shutting down cleanly.
//   /readyz  (readiness): should clients be routed here? Ready when every required
//                         condition is met and the broker is not shutting down.
//
// lifecycle_state is the stock provider: the composition root declares the conditions at
// construction (see the constants below), each service sets its own as it comes up, and
// begin_shutdown() flips readiness off before anything stops.
//
// Threading: all methods are thread-safe (one mutex; probes are rare). Lifecycle: built by
// the composition root before any service starts; outlives the HTTP service.

#include "broker/http/views.h"

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::http {

struct probe_report {
    bool ok = true;
    std::vector<std::string> reasons;  // why not ok; empty when ok
};

class readiness_provider {
public:
    virtual ~readiness_provider() = default;
    virtual probe_report liveness() const = 0;
    virtual probe_report readiness() const = 0;
};

// Conditions the broker's composition root declares.
namespace condition {
inline constexpr std::string_view logs_loaded = "logs_loaded";
inline constexpr std::string_view kafka_listener_bound = "kafka_listener_bound";
inline constexpr std::string_view registered = "registered";  // with the controller
inline constexpr std::string_view replicas_caught_up = "replicas_caught_up";
}  // namespace condition

class lifecycle_state : public readiness_provider {
public:
    explicit lifecycle_state(std::vector<std::string_view> required);

    // Marks a declared condition met or not; `detail` explains an unmet one. Undeclared
    // names are ignored (and logged) so a typo cannot make the broker ready early.
    void set(std::string_view name, bool met, std::string detail = {});
    void begin_shutdown();
    // A fatal condition: liveness fails from now on.
    void mark_failed(std::string reason);

    probe_report liveness() const override;
    probe_report readiness() const override;

private:
    struct entry {
        std::string name;
        bool met = false;
        std::string detail;
    };
    mutable std::mutex _mutex;
    std::vector<entry> _conditions;
    bool _shutting_down = false;
    std::vector<std::string> _failures;
};

// The broker's readiness: `inner`'s conditions, and not ready while the cluster view reports
// the metadata store unready ("metadata store: <reason>"). Liveness is inner's alone: a store
// that cannot be reached is no reason for Kubernetes to restart the broker.
// Threading: as inner and the view (both thread-safe). Lifecycle: outlived by both.
class cluster_gated_readiness : public readiness_provider {
public:
    cluster_gated_readiness(const readiness_provider& inner, const cluster_view* cluster)
        : _inner(inner), _cluster(cluster) {}

    probe_report liveness() const override { return _inner.liveness(); }
    probe_report readiness() const override;

private:
    const readiness_provider& _inner;
    const cluster_view* _cluster;  // nullptr: inner alone
};

}  // namespace spool::broker::http
