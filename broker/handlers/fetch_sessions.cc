#include "broker/handlers/fetch_sessions.h"

namespace spool::broker::handlers {

std::shared_ptr<fetch_session> fetch_session_cache::create() {
    std::lock_guard lock(_mutex);
    if (_max == 0) {
        return nullptr;
    }
    if (_sessions.size() >= _max) {
        int32_t victim = _lru.back();
        _lru.pop_back();
        _sessions.erase(victim);
    }
    int32_t id;
    do {
        id = _next_id++;
        if (_next_id <= 0) {
            _next_id = 1;
        }
    } while (_sessions.contains(id));
    auto s = std::make_shared<fetch_session>();
    s->id = id;
    _lru.push_front(id);
    _sessions.emplace(id, std::pair{s, _lru.begin()});
    return s;
}

std::shared_ptr<fetch_session> fetch_session_cache::find(int32_t id) {
    std::lock_guard lock(_mutex);
    auto it = _sessions.find(id);
    if (it == _sessions.end()) {
        return nullptr;
    }
    _lru.splice(_lru.begin(), _lru, it->second.second);
    return it->second.first;
}

void fetch_session_cache::remove(int32_t id) {
    std::lock_guard lock(_mutex);
    auto it = _sessions.find(id);
    if (it != _sessions.end()) {
        _lru.erase(it->second.second);
        _sessions.erase(it);
    }
}

size_t fetch_session_cache::size() const {
    std::lock_guard lock(_mutex);
    return _sessions.size();
}

}  // namespace spool::broker::handlers
