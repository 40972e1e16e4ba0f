#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
//   - the leader renews spec.renewTime every retry_period;
//   - a candidate takes the Lease over only when the holder's record has not changed for
//     lease_duration by the candidate's own clock (no clock sync between pods needed);
//   - all writes are PUTs with resourceVersion, so two candidates cannot both win (409);
//   - a leader that cannot renew within renew_deadline stops leading (the caller exits: another
//     replica may already act);
//   - on a clean stop the leader releases the Lease so a successor starts at once.
//
// Lifecycle: run() blocks until stop() or lost leadership; call it on a dedicated thread.

#include "operator/kube/client.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace spool::op::kube {

struct leader_election_config {
    std::string namespace_;
    std::string name = "spool-operator-leader";
    std::string identity;
    std::chrono::seconds lease_duration{15};
    std::chrono::seconds renew_deadline{10};
    std::chrono::seconds retry_period{2};
};

class leader_elector {
public:
    leader_elector(client& api, leader_election_config cfg) : _api(api), _cfg(std::move(cfg)) {}

    // Blocks; calls on_started when this process becomes leader and on_stopped when it stops
    // leading (lost or released). Returns when stopped or after losing leadership.
    void run(const std::function<void()>& on_started, const std::function<void()>& on_stopped);
    void stop();

    bool leading() const { return _leading; }
    // One acquire-or-renew attempt; true when this process holds the Lease afterwards.
    bool try_acquire_or_renew();
    // Gives the Lease up (holder cleared) if this process holds it.
    void release();

private:
    bool wait(std::chrono::milliseconds d);

    client& _api;
    const leader_election_config _cfg;
    std::atomic<bool> _leading{false};
    std::atomic<bool> _stopping{false};
    std::mutex _mutex;
    std::condition_variable _wake;
    // The last holder record seen and when (steady clock) it last changed.
    std::string _observed_record;
    std::chrono::steady_clock::time_point _observed_at{};
};

// RFC 3339 with microseconds, the format of metav1.MicroTime.
std::string micro_time_now();
// RFC 3339 to seconds, the format of metav1.Time.
std::string time_now();

}  // namespace spool::op::kube
