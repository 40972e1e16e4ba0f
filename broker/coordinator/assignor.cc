#include "broker/coordinator/assignor.h"

#include <algorithm>

namespace spool::broker::coordinator {

namespace {

struct tp {
    protocol::uuid topic;
    int32_t partition;
    auto operator<=>(const tp&) const = default;
};

}  // namespace

target_assignment assign_uniform(const std::vector<assignor_member>& members,
                                 const std::map<protocol::uuid, int32_t>& topics) {
    target_assignment out;
    std::map<std::string, size_t, std::less<>> load;
    for (const auto& m : members) {
        out[m.id];
        load[m.id] = 0;
    }
    // Subscribers of each topic, in member id order (members arrive sorted by the caller).
    std::map<protocol::uuid, std::vector<const assignor_member*>> subscribers;
    for (const auto& m : members) {
        for (const auto& t : m.topics) {
            if (topics.contains(t)) {
                subscribers[t].push_back(&m);
            }
        }
    }
    size_t total = 0;
    for (const auto& [t, subs] : subscribers) {
        total += static_cast<size_t>(topics.at(t));
    }
    // A member keeps what it had while it stays subscribed, up to the balanced share of the
    // homogeneous case (ceil(total / members)); the balancing pass below fixes the rest.
    const size_t share = members.empty() ? 0 : (total + members.size() - 1) / members.size();
    std::map<tp, std::string> holder;
    for (const auto& m : members) {
        for (const auto& [t, ps] : m.current) {
            auto it = topics.find(t);
            if (it == topics.end() || !m.topics.contains(t)) {
                continue;
            }
            for (int32_t p : ps) {
                if (p >= it->second || holder.contains({t, p}) || load[m.id] >= share) {
                    continue;
                }
                holder[{t, p}] = m.id;
                out[m.id][t].insert(p);
                ++load[m.id];
            }
        }
    }
    // The rest go to their least loaded subscriber (ties: lowest member id).
    for (const auto& [t, subs] : subscribers) {
        for (int32_t p = 0; p < topics.at(t); ++p) {
            if (holder.contains({t, p})) {
                continue;
            }
            const assignor_member* best = nullptr;
            for (const auto* s : subs) {
                if (!best || load[s->id] < load[best->id]) {
                    best = s;
                }
            }
            holder[{t, p}] = best->id;
            out[best->id][t].insert(p);
            ++load[best->id];
        }
    }
    // Balance: move a partition from its holder to a subscriber holding at least two fewer,
    // until no such move exists. Each move lowers the sum of squared loads, so this ends.
    for (bool moved = true; moved;) {
        moved = false;
        for (auto& [key, who] : holder) {
            const assignor_member* best = nullptr;
            for (const auto* s : subscribers[key.topic]) {
                if (load[s->id] + 2 <= load[who] && (!best || load[s->id] < load[best->id])) {
                    best = s;
                }
            }
            if (!best) {
                continue;
            }
            auto& from = out[who][key.topic];
            from.erase(key.partition);
            if (from.empty()) {
                out[who].erase(key.topic);
            }
            --load[who];
            out[best->id][key.topic].insert(key.partition);
            ++load[best->id];
            who = best->id;
            moved = true;
        }
    }
    return out;
}

target_assignment assign_range(const std::vector<assignor_member>& members,
                               const std::map<protocol::uuid, int32_t>& topics) {
    target_assignment out;
    for (const auto& m : members) {
        out[m.id];
    }
    for (const auto& [t, partitions] : topics) {
        std::vector<const assignor_member*> subs;
        for (const auto& m : members) {
            if (m.topics.contains(t)) {
                subs.push_back(&m);
            }
        }
        if (subs.empty()) {
            continue;
        }
        std::sort(subs.begin(), subs.end(),
                  [](const auto* a, const auto* b) { return a->id < b->id; });
        const int32_t n = static_cast<int32_t>(subs.size());
        const int32_t base = partitions / n;
        const int32_t extra = partitions % n;
        int32_t next = 0;
        for (int32_t i = 0; i < n; ++i) {
            const int32_t len = base + (i < extra ? 1 : 0);
            for (int32_t p = next; p < next + len; ++p) {
                out[subs[static_cast<size_t>(i)]->id][t].insert(p);
            }
            next += len;
        }
    }
    return out;
}

bool known_assignor(std::string_view name) {
    return name == "uniform" || name == "range";
}

target_assignment run_assignor(std::string_view name, const std::vector<assignor_member>& members,
                               const std::map<protocol::uuid, int32_t>& topics) {
    return name == "range" ? assign_range(members, topics) : assign_uniform(members, topics);
}

}  // namespace spool::broker::coordinator
