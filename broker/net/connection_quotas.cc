#include "broker/net/connection_quotas.h"

namespace spool::broker::net {

bool connection_quotas::at_limit() const {
    std::lock_guard lock(_mutex);
    return _total >= _max;
}

int64_t connection_quotas::total() const {
    std::lock_guard lock(_mutex);
    return _total;
}

bool connection_quotas::add(const std::string& ip) {
    std::lock_guard lock(_mutex);
    auto& n = _per_ip[ip];
    if (n >= _max_per_ip) {
        if (n == 0) {
            _per_ip.erase(ip);
        }
        return false;
    }
    ++n;
    ++_total;
    return true;
}

void connection_quotas::remove(const std::string& ip) {
    bool freed = false;
    {
        std::lock_guard lock(_mutex);
        auto it = _per_ip.find(ip);
        if (it == _per_ip.end()) {
            return;
        }
        if (--it->second == 0) {
            _per_ip.erase(it);
        }
        freed = _total-- >= _max;
    }
    if (freed && _on_slot_freed) {
        _on_slot_freed();
    }
}

}  // namespace spool::broker::net
