#pragma once

// In-memory implementations of the HTTP views, for tests. They stand in for the
// broker/metadata, broker/storage and broker/coordinator adapters the composition root will
// provide: those modules cannot run inside this unit test. The real HTTP server, router,
// registry and probes are used unchanged. Each view hands out a copy under a mutex, exactly
// the snapshot contract views.h asks of real adapters.

#include "broker/http/views.h"

#include <map>
#include <mutex>
#include <set>

namespace spool::broker::http::testing {

template <class T>
class guarded {
public:
    void set(T v) {
        std::lock_guard lock(_mutex);
        _value = std::move(v);
    }
    T get() const {
        std::lock_guard lock(_mutex);
        return _value;
    }

private:
    mutable std::mutex _mutex;
    T _value{};
};

class memory_cluster_view : public cluster_view {
public:
    guarded<cluster_snapshot> state;
    guarded<std::optional<std::string>> unready;
    cluster_snapshot snapshot() const override { return state.get(); }
    std::optional<std::string> unready_reason() const override { return unready.get(); }
};

class memory_log_view : public log_view {
public:
    guarded<std::vector<log_info>> state;
    std::vector<log_info> logs() const override { return state.get(); }
};

class memory_group_view : public group_view {
public:
    guarded<std::vector<group_info>> group_state;
    guarded<std::vector<committed_offset>> offset_state;
    std::vector<group_info> groups() const override { return group_state.get(); }
    std::vector<committed_offset> committed_offsets() const override { return offset_state.get(); }
};

inline model::node_id node(int32_t id) {
    return model::node_id{id};
}

// A partition with replicas/ISR given as plain ints; leader -1 means none.
inline partition_info partition(int32_t id, int32_t leader, std::vector<int32_t> replicas,
                                std::vector<int32_t> isr) {
    partition_info p;
    p.id = model::partition_id{id};
    if (leader >= 0)
        p.leader = node(leader);
    for (int32_t r : replicas)
        p.replicas.push_back(node(r));
    for (int32_t r : isr)
        p.isr.push_back(node(r));
    return p;
}

inline std::vector<broker_info> brokers(std::vector<int32_t> ids) {
    std::vector<broker_info> out;
    for (int32_t id : ids)
        out.push_back({node(id), "broker-" + std::to_string(id), 9092, {}, true});
    return out;
}

// Decommission as the metadata store would answer it: brokers in `known` may be decommissioned
// unless `no_replacement`; a started one shows fixed progress until cancelled.
class memory_decommission : public decommission_control {
public:
    std::set<int32_t> known;
    bool no_replacement = false;
    std::map<int32_t, decommission_status> marked;

    answer start(model::node_id b) override {
        if (!known.contains(b.value()) && !marked.contains(b.value()))
            return {outcome::unknown_broker, "no such broker"};
        if (no_replacement)
            return {outcome::no_replacement, "cannot decommission broker: nowhere to move"};
        marked[b.value()] = decommission_status{true, 1, 2, 3};
        return {};
    }
    answer cancel(model::node_id b) override {
        if (marked.erase(b.value()) == 0)
            return {outcome::unknown_broker, "not being decommissioned"};
        return {};
    }
    std::optional<decommission_status> status(model::node_id b) const override {
        if (auto it = marked.find(b.value()); it != marked.end())
            return it->second;
        if (known.contains(b.value()))
            return decommission_status{};
        return std::nullopt;
    }
};

// One broker (id 1) with topic "orders" (2 partitions, RF 1) and __consumer_offsets.
inline cluster_snapshot single_broker_cluster() {
    cluster_snapshot s;
    s.cluster_id = "spool-test";
    s.controller = node(1);
    s.brokers = brokers({1});
    s.topics.push_back({"__consumer_offsets", true, 1, {partition(0, 1, {1}, {1})}});
    s.topics.push_back(
        {"orders", false, 1, {partition(0, 1, {1}, {1}), partition(1, 1, {1}, {1})}});
    return s;
}

}  // namespace spool::broker::http::testing
