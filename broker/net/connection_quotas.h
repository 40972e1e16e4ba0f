#pragma once

// max.connections and max.connections.per.ip, as Kafka's ConnectionQuotas applies them:
//   - broker-wide: at the limit the acceptor stops accepting until a connection closes (new
//     clients wait in the listen backlog instead of being refused);
//   - per address: a connection beyond the limit is accepted and closed at once.
// A connection counts from accept until its socket is closed (not until its last running
// request finishes), so the counts follow the file descriptors.
//
// Threading: add() from the accept loop (shard 0), remove() from any shard; a mutex guards the
// counts (connection open/close is not the hot path). on_slot_freed runs after a remove() that
// brings the total below the broker-wide limit, on the removing thread.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace spool::broker::net {

class connection_quotas {
public:
    connection_quotas(int64_t max_connections, int64_t max_per_ip)
        : _max(max_connections), _max_per_ip(max_per_ip) {}

    void set_on_slot_freed(std::function<void()> fn) { _on_slot_freed = std::move(fn); }

    [[nodiscard]] bool at_limit() const;
    // Counts a new connection from `ip`; false (and nothing counted) when the address is at its
    // limit.
    bool add(const std::string& ip);
    void remove(const std::string& ip);
    [[nodiscard]] int64_t total() const;

private:
    const int64_t _max;
    const int64_t _max_per_ip;
    mutable std::mutex _mutex;
    int64_t _total = 0;
    std::unordered_map<std::string, int64_t> _per_ip;
    std::function<void()> _on_slot_freed;
};

}  // namespace spool::broker::net
