#include "operator/kube/work_queue.h"

#include "operator/kube/backoff.h"

namespace spool::op::kube {

void work_queue::add_locked(const std::string& key) {
    if (_shut_down || _dirty.count(key)) {
        return;
    }
    _dirty.insert(key);
    if (_processing.count(key)) {
        return;  // done() re-queues it
    }
    _queue.push_back(key);
    _ready.notify_one();
}

void work_queue::add(const std::string& key) {
    std::lock_guard lock(_mutex);
    add_locked(key);
}

void work_queue::add_after(const std::string& key, std::chrono::milliseconds delay) {
    if (delay.count() <= 0) {
        add(key);
        return;
    }
    std::lock_guard lock(_mutex);
    if (_shut_down) {
        return;
    }
    // Keep only the earliest pending delay per key.
    auto due = clock::now() + delay;
    for (auto it = _waiting.begin(); it != _waiting.end(); ++it) {
        if (it->second == key) {
            if (it->first <= due) {
                return;
            }
            _waiting.erase(it);
            break;
        }
    }
    _waiting.emplace(due, key);
    _ready.notify_one();
}

void work_queue::add_rate_limited(const std::string& key) {
    std::chrono::milliseconds delay;
    {
        std::lock_guard lock(_mutex);
        int n = _failures[key]++;
        delay = backoff::ceiling(_base_delay, _max_delay, n);
    }
    add_after(key, delay);
}

void work_queue::forget(const std::string& key) {
    std::lock_guard lock(_mutex);
    _failures.erase(key);
}

int work_queue::failures(const std::string& key) const {
    std::lock_guard lock(_mutex);
    auto it = _failures.find(key);
    return it == _failures.end() ? 0 : it->second;
}

void work_queue::promote_due_locked(clock::time_point now) {
    while (!_waiting.empty() && _waiting.begin()->first <= now) {
        std::string key = _waiting.begin()->second;
        _waiting.erase(_waiting.begin());
        add_locked(key);
    }
}

std::optional<std::string> work_queue::get() {
    std::unique_lock lock(_mutex);
    for (;;) {
        if (_shut_down) {
            return std::nullopt;
        }
        promote_due_locked(clock::now());
        if (!_queue.empty()) {
            std::string key = std::move(_queue.front());
            _queue.pop_front();
            _dirty.erase(key);
            _processing.insert(key);
            return key;
        }
        if (_waiting.empty()) {
            _ready.wait(lock);
        } else {
            _ready.wait_until(lock, _waiting.begin()->first);
        }
    }
}

void work_queue::done(const std::string& key) {
    std::lock_guard lock(_mutex);
    _processing.erase(key);
    if (_dirty.count(key)) {
        _queue.push_back(key);
        _ready.notify_one();
    }
}

void work_queue::shut_down() {
    std::lock_guard lock(_mutex);
    _shut_down = true;
    _ready.notify_all();
}

size_t work_queue::depth() const {
    std::lock_guard lock(_mutex);
    return _queue.size();
}

size_t work_queue::delayed() const {
    std::lock_guard lock(_mutex);
    return _waiting.size();
}

}  // namespace spool::op::kube
