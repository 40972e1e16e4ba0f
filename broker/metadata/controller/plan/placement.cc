#include "broker/metadata/controller/plan/placement.h"

#include "broker/metadata/errc.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace spool::broker::metadata {

placement_load::placement_load(std::vector<placement_broker> brokers) {
    std::sort(brokers.begin(), brokers.end(),
              [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
    std::map<std::optional<std::string>, int32_t> racks;
    _brokers.reserve(brokers.size());
    for (auto& b : brokers) {
        auto [it, fresh] = racks.try_emplace(b.rack, static_cast<int32_t>(racks.size()));
        _brokers.push_back({std::move(b), it->second, 0, 0});
    }
    _rack_count = static_cast<int32_t>(racks.size());
}

placement_load placement_load::of(const cluster_state& state) {
    std::vector<placement_broker> live;
    live.reserve(state.brokers.size());
    for (const auto& [id, reg] : state.brokers) {
        // A broker on its way out (controlled shutdown, decommission) takes no new replicas.
        if (state.eligible(id) && !state.decommissioning.contains(id)) {
            live.push_back({id, reg.rack});
        }
    }
    placement_load load(std::move(live));
    for (const auto& [name, topic] : state.topics) {
        for (const auto& p : topic.partitions) {
            load.add(p.replicas);
        }
    }
    return load;
}

placement_load::slot* placement_load::find(int32_t node_id) {
    auto it = std::lower_bound(_brokers.begin(), _brokers.end(), node_id,
                               [](const slot& s, int32_t id) { return s.broker.node_id < id; });
    return it != _brokers.end() && it->broker.node_id == node_id ? &*it : nullptr;
}

const placement_load::slot* placement_load::find(int32_t node_id) const {
    return const_cast<placement_load*>(this)->find(node_id);
}

int32_t placement_load::leaders(int32_t node_id) const {
    const auto* s = find(node_id);
    return s ? s->leaders : 0;
}

int32_t placement_load::replicas(int32_t node_id) const {
    const auto* s = find(node_id);
    return s ? s->replicas : 0;
}

void placement_load::add(const std::vector<int32_t>& replicas) {
    // Replicas on brokers that are not live carry no load here: they are not candidates.
    for (size_t i = 0; i < replicas.size(); ++i) {
        if (auto* s = find(replicas[i])) {
            ++s->replicas;
            if (i == 0) {
                ++s->leaders;
            }
        }
    }
}

result<std::vector<int32_t>> placement_load::place_one(int16_t rf) {
    if (rf < 1 || static_cast<size_t>(rf) > _brokers.size()) {
        return errc::invalid_replication_factor;
    }
    std::vector<bool> used_broker(_brokers.size(), false);
    std::vector<bool> used_rack(static_cast<size_t>(_rack_count), false);
    std::vector<int32_t> out;
    out.reserve(static_cast<size_t>(rf));

    auto take = [&](size_t i) {
        used_broker[i] = true;
        used_rack[static_cast<size_t>(_brokers[i].rack_index)] = true;
        ++_brokers[i].replicas;
        out.push_back(_brokers[i].broker.node_id);
    };

    // The leader: fewest leaders, then fewest replicas; _brokers is in node id order, so the
    // first minimum found is the lowest id.
    size_t leader = 0;
    for (size_t i = 1; i < _brokers.size(); ++i) {
        const auto& a = _brokers[i];
        const auto& b = _brokers[leader];
        if (std::tie(a.leaders, a.replicas) < std::tie(b.leaders, b.replicas)) {
            leader = i;
        }
    }
    ++_brokers[leader].leaders;
    take(leader);

    for (int16_t r = 1; r < rf; ++r) {
        bool fresh_rack_left = false;
        for (size_t i = 0; i < _brokers.size(); ++i) {
            if (!used_broker[i] && !used_rack[static_cast<size_t>(_brokers[i].rack_index)]) {
                fresh_rack_left = true;
                break;
            }
        }
        std::optional<size_t> best;
        for (size_t i = 0; i < _brokers.size(); ++i) {
            if (used_broker[i] ||
                (fresh_rack_left && used_rack[static_cast<size_t>(_brokers[i].rack_index)])) {
                continue;
            }
            if (!best || _brokers[i].replicas < _brokers[*best].replicas) {
                best = i;
            }
        }
        take(*best);  // rf <= broker count, so an unused broker is always left
    }
    return out;
}

std::optional<int32_t> placement_load::replacement(const std::vector<int32_t>& keep) {
    std::vector<bool> used_rack(static_cast<size_t>(_rack_count), false);
    for (int32_t r : keep) {
        if (const auto* s = find(r)) {
            used_rack[static_cast<size_t>(s->rack_index)] = true;
        }
    }
    auto candidate = [&keep](const slot& s) {
        return std::find(keep.begin(), keep.end(), s.broker.node_id) == keep.end();
    };
    const bool fresh_rack_left = std::any_of(_brokers.begin(), _brokers.end(), [&](const slot& s) {
        return candidate(s) && !used_rack[static_cast<size_t>(s.rack_index)];
    });
    slot* best = nullptr;
    for (auto& s : _brokers) {
        if (!candidate(s) || (fresh_rack_left && used_rack[static_cast<size_t>(s.rack_index)])) {
            continue;
        }
        if (best == nullptr || s.replicas < best->replicas) {
            best = &s;
        }
    }
    if (best == nullptr) {
        return std::nullopt;
    }
    ++best->replicas;
    return best->broker.node_id;
}

result<std::vector<std::vector<int32_t>>> placement_load::place(int32_t count, int16_t rf) {
    if (rf < 1 || static_cast<size_t>(rf) > _brokers.size()) {
        return errc::invalid_replication_factor;
    }
    std::vector<std::vector<int32_t>> out;
    out.reserve(static_cast<size_t>(std::max(count, 0)));
    for (int32_t p = 0; p < count; ++p) {
        SPOOL_TRY(replicas, place_one(rf));
        out.push_back(std::move(replicas));
    }
    return out;
}

}  // namespace spool::broker::metadata
