#pragma once

// A work queue of object keys ("namespace/name") that coalesces events, like client-go's:
//   - a key is queued at most once however many events arrive for it;
//   - a key is never handed to two workers at once: an add() while it is being processed marks it
//     dirty, and done() queues it again;
//   - add_after() delays a key (requeue after N seconds), add_rate_limited() delays it by a
//     per-key capped exponential backoff that forget() resets after a success.
//
// Threading: all methods are thread-safe; get() blocks until a key is ready or shut_down().

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace spool::op::kube {

class work_queue {
public:
    using clock = std::chrono::steady_clock;

    explicit work_queue(std::chrono::milliseconds base_delay = std::chrono::milliseconds(500),
                        std::chrono::milliseconds max_delay = std::chrono::seconds(60))
        : _base_delay(base_delay), _max_delay(max_delay) {}

    void add(const std::string& key);
    void add_after(const std::string& key, std::chrono::milliseconds delay);
    // Delay grows 500 ms, 1 s, 2 s ... up to the cap with each failure of the same key.
    void add_rate_limited(const std::string& key);
    void forget(const std::string& key);
    int failures(const std::string& key) const;

    // The next key to process, or nullopt once shut down. Call done(key) after processing.
    std::optional<std::string> get();
    void done(const std::string& key);
    void shut_down();

    // Keys waiting now (not delayed, not in process): the queue-depth metric.
    size_t depth() const;
    size_t delayed() const;

private:
    void add_locked(const std::string& key);
    void promote_due_locked(clock::time_point now);

    const std::chrono::milliseconds _base_delay;
    const std::chrono::milliseconds _max_delay;
    mutable std::mutex _mutex;
    std::condition_variable _ready;
    std::deque<std::string> _queue;
    std::set<std::string> _dirty;       // queued or to be re-queued
    std::set<std::string> _processing;  // handed out by get(), not yet done()
    std::multimap<clock::time_point, std::string> _waiting;
    std::map<std::string, int> _failures;
    bool _shut_down = false;
};

}  // namespace spool::op::kube
