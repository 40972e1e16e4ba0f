#pragma once

// List-then-watch loop for one resource kind (an informer without a cache: reconcilers read
// fresh objects from the API server, so this only tells them which keys to look at).
//
//   list -> every item to on_object -> watch from the list's resourceVersion, with bookmarks
//   -> the server ends the watch -> watch again from the last version seen
//   -> 410 Gone (version compacted) -> list again
//   -> any other error -> back off (capped exponential) and retry
//
// Lifecycle: run() blocks until stop(); call it on a dedicated thread.

#include "operator/kube/client.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

namespace spool::op::kube {

class watcher {
public:
    using handler = std::function<void(event_type, const json& object)>;

    watcher(client& api, resource_kind kind, std::string ns, list_options options,
            handler on_object, int watch_timeout_seconds = 60)
        : _api(api),
          _kind(std::move(kind)),
          _ns(std::move(ns)),
          _options(std::move(options)),
          _on_object(std::move(on_object)),
          _timeout(watch_timeout_seconds) {}

    // Starts watching from `resource_version` instead of listing first (tests use this to
    // resume from a stale version).
    void resume_from(std::string resource_version) { _resume = std::move(resource_version); }

    void run();
    void stop();

    int lists() const { return _lists; }
    int expirations() const { return _expirations; }
    std::string resource_version() const;

private:
    bool sleep_for(std::chrono::milliseconds d);

    client& _api;
    const resource_kind _kind;
    const std::string _ns;
    const list_options _options;
    const handler _on_object;
    const int _timeout;
    std::string _resume;
    std::atomic<bool> _stopping{false};
    std::atomic<int> _lists{0};
    std::atomic<int> _expirations{0};
    mutable std::mutex _mutex;
    std::condition_variable _wake;
    std::string _rv;
};

}  // namespace spool::op::kube
