#pragma once

// Runs one reconciler: watchers turn events into keys on a coalescing work queue, one worker
// thread takes keys off it and calls reconcile(key).
//
//   reconcile ok, no requeue   -> forget the key's backoff
//   reconcile ok, requeue_after -> add_after (periodic checks, rolling restarts)
//   reconcile error            -> add_rate_limited (capped exponential backoff), never a hot loop
//
// Resync: resync_every() lists the primary kind every period and queues every object, so each
// one is reconciled at least that often even when no event arrives (drift no watch reports:
// Kafka-side changes, a missed event).
//
// Lifecycle: add watches, start(), stop() (joins the threads). Not restartable.

#include "operator/api/error.h"
#include "operator/kube/client.h"
#include "operator/kube/watcher.h"
#include "operator/kube/work_queue.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace spool::op::reconcilers {

struct reconcile_result {
    std::optional<std::chrono::milliseconds> requeue_after;
    std::optional<error> failure;  // transient failures requeue with backoff

    static reconcile_result done() { return {}; }
    static reconcile_result after(std::chrono::milliseconds d) { return {d, std::nullopt}; }
    static reconcile_result failed(error e) { return {std::nullopt, std::move(e)}; }
};

// Metrics seen from a controller; the app's probe implements it with prometheus-cpp.
class controller_probe {
public:
    virtual ~controller_probe() = default;
    virtual void reconciled(const std::string& controller, std::chrono::duration<double> took,
                            bool ok) = 0;
    virtual void queue_depth(const std::string& controller, size_t depth) = 0;
};

class controller {
public:
    using reconcile_fn = std::function<reconcile_result(const std::string& key)>;
    // Maps a watched object to the key(s) to reconcile; empty string: ignore.
    using key_fn = std::function<std::string(const json& object)>;

    controller(std::string name, kube::client& api, reconcile_fn reconcile,
               controller_probe* probe = nullptr);
    ~controller();

    void watch(const kube::resource_kind& kind, const std::string& ns, kube::list_options options,
               key_fn to_key);
    // Set before start(); a zero period disables the resync.
    void resync_every(const kube::resource_kind& kind, const std::string& ns,
                      std::chrono::milliseconds period);
    void start();
    void stop();

    kube::work_queue& queue() { return _queue; }
    const std::vector<std::unique_ptr<kube::watcher>>& watchers() const { return _watchers; }

    // "namespace/name" of an object.
    static std::string key_of(const json& object);

private:
    void work();
    void resync_loop();

    const std::string _name;
    kube::client& _api;
    reconcile_fn _reconcile;
    controller_probe* _probe;
    kube::work_queue _queue;
    std::vector<std::unique_ptr<kube::watcher>> _watchers;
    std::vector<std::thread> _threads;
    struct resync {
        const kube::resource_kind* kind = nullptr;
        std::string ns;
        std::chrono::milliseconds period{0};
    } _resync;
    std::mutex _stop_mutex;
    std::condition_variable _stop_cv;
    bool _stopping = false;
};

}  // namespace spool::op::reconcilers
