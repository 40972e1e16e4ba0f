#include "operator/reconcilers/rebalance_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace spool::op::reconcilers {

namespace {

using replica_list = std::vector<int32_t>;

bool has(const replica_list& r, int32_t b) {
    return std::find(r.begin(), r.end(), b) != r.end();
}

struct topic_view {
    std::vector<size_t> partitions;  // indexes into the working placement
};

class planner {
public:
    planner(std::vector<int32_t> brokers, std::vector<partition_placement> partitions)
        : _brokers(std::move(brokers)), _work(std::move(partitions)) {
        std::sort(_brokers.begin(), _brokers.end());
        _brokers.erase(std::unique(_brokers.begin(), _brokers.end()), _brokers.end());
        std::sort(_work.begin(), _work.end(), [](const auto& a, const auto& b) {
            return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
        });
        for (size_t i = 0; i < _work.size(); ++i) {
            // Too few brokers for distinct replicas: nothing to plan for this partition.
            if (_work[i].replicas.size() > _brokers.size()) {
                continue;
            }
            _topics[_work[i].topic].partitions.push_back(i);
            for (auto b : _work[i].replicas) {
                ++_global[b];
            }
        }
    }

    rebalance_plan run(const std::vector<partition_placement>& before) {
        if (!_brokers.empty()) {
            for (auto& [name, t] : _topics) {
                balance_topic(t);
            }
            balance_globally();
            for (auto& [name, t] : _topics) {
                balance_leaders(t.partitions, _topic_leaders[name]);
            }
            balance_leaders_globally();
        }
        rebalance_plan plan;
        std::map<std::pair<std::string, int32_t>, const partition_placement*> old;
        for (const auto& p : before) {
            old[{p.topic, p.partition}] = &p;
        }
        for (const auto& p : _work) {
            const auto& was = old.at({p.topic, p.partition})->replicas;
            if (was == p.replicas) {
                continue;
            }
            int32_t added = 0;
            for (auto b : p.replicas) {
                added += has(was, b) ? 0 : 1;
            }
            plan.replica_moves += added;
            plan.leader_swaps += added == 0 ? 1 : 0;
            plan.moves.push_back({p.topic, p.partition, p.replicas});
        }
        return plan;
    }

private:
    int32_t global(int32_t b) const {
        auto it = _global.find(b);
        return it == _global.end() ? 0 : it->second;
    }

    bool member(int32_t b) const { return std::binary_search(_brokers.begin(), _brokers.end(), b); }

    void replace(partition_placement& p, size_t pos, int32_t to, std::map<int32_t, int>& counts) {
        int32_t from = p.replicas[pos];
        --counts[from];
        ++counts[to];
        --_global[from];
        ++_global[to];
        p.replicas[pos] = to;
    }

    void balance_topic(topic_view& t) {
        std::map<int32_t, int> counts;
        size_t total = 0;
        for (auto i : t.partitions) {
            for (auto b : _work[i].replicas) {
                ++counts[b];
                ++total;
            }
        }
        // Shares: floor for every broker, ceil for the first `extra` in this order.
        std::vector<int32_t> order = _brokers;
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
            if (counts[a] != counts[b])
                return counts[a] > counts[b];
            return global(a) < global(b);
        });
        std::map<int32_t, int> share;
        size_t base = total / _brokers.size(), extra = total % _brokers.size();
        for (size_t k = 0; k < order.size(); ++k) {
            share[order[k]] = static_cast<int>(base + (k < extra ? 1 : 0));
        }
        auto over = [&](int32_t b) { return !member(b) || counts[b] > share[b]; };
        bool changed = true;
        while (changed) {
            changed = false;
            for (auto i : t.partitions) {
                auto& p = _work[i];
                for (size_t pos = 0; pos < p.replicas.size(); ++pos) {
                    if (!over(p.replicas[pos])) {
                        continue;
                    }
                    // The emptiest broker under its share that is not a replica yet.
                    int32_t best = -1;
                    for (auto b : _brokers) {
                        if (counts[b] < share[b] && !has(p.replicas, b) &&
                            (best < 0 || global(b) < global(best))) {
                            best = b;
                        }
                    }
                    if (best < 0 && !member(p.replicas[pos])) {
                        // Every broker under its share is a replica already: a replica outside
                        // the set must still go, to the least loaded other broker (which then
                        // passes one of its own on, if it ends up over its share).
                        for (auto b : _brokers) {
                            if (!has(p.replicas, b) && (best < 0 || counts[b] < counts[best])) {
                                best = b;
                            }
                        }
                    }
                    if (best >= 0) {
                        replace(p, pos, best, counts);
                        changed = true;
                    }
                }
            }
        }
        _topic_counts[_work[t.partitions.front()].topic] = counts;
    }

    // Moves one replica at a time from the fullest to the emptiest broker overall, in a topic
    // the fuller one holds more of (so the per-topic shares stay within one).
    void balance_globally() {
        for (size_t guard = 0; guard < _work.size() * 4 + 16; ++guard) {
            auto [lo, hi] =
                std::minmax_element(_brokers.begin(), _brokers.end(),
                                    [&](int32_t a, int32_t b) { return global(a) < global(b); });
            if (global(*hi) - global(*lo) <= 1) {
                return;
            }
            if (!move_one(*hi, *lo)) {
                return;
            }
        }
    }

    bool move_one(int32_t from, int32_t to) {
        for (auto& [name, t] : _topics) {
            auto& counts = _topic_counts[name];
            if (counts[from] <= counts[to]) {
                continue;
            }
            for (auto i : t.partitions) {
                auto& p = _work[i];
                auto it = std::find(p.replicas.begin(), p.replicas.end(), from);
                if (it != p.replicas.end() && !has(p.replicas, to)) {
                    replace(p, static_cast<size_t>(it - p.replicas.begin()), to, counts);
                    return true;
                }
            }
        }
        return false;
    }

    // Swaps a preferred leader with another replica of its partition while one broker leads 2+
    // more of these partitions than another.
    void balance_leaders(const std::vector<size_t>& partitions, std::map<int32_t, int>& leads) {
        for (auto i : partitions) {
            ++leads[_work[i].replicas.front()];
        }
        for (size_t guard = 0; guard < partitions.size() * _brokers.size() + 1; ++guard) {
            if (!swap_one(partitions, leads, nullptr)) {
                return;
            }
        }
    }

    void balance_leaders_globally() {
        std::map<int32_t, int> leads;
        std::vector<size_t> all;
        for (auto& [name, t] : _topics) {
            all.insert(all.end(), t.partitions.begin(), t.partitions.end());
        }
        for (auto i : all) {
            ++leads[_work[i].replicas.front()];
        }
        for (size_t guard = 0; guard < all.size() * _brokers.size() + 1; ++guard) {
            if (!swap_one(all, leads, &_topic_leaders)) {
                return;
            }
        }
    }

    int spread(std::map<int32_t, int>& counts) const {
        auto [lo, hi] =
            std::minmax_element(_brokers.begin(), _brokers.end(),
                                [&](int32_t a, int32_t b) { return counts[a] < counts[b]; });
        return counts[*hi] - counts[*lo];
    }

    // One swap lowering the spread of `leads`; with `per_topic`, only one that keeps each
    // topic's leader counts within one.
    bool swap_one(const std::vector<size_t>& partitions, std::map<int32_t, int>& leads,
                  std::map<std::string, std::map<int32_t, int>>* per_topic) {
        std::vector<int32_t> by_leads = _brokers;
        std::stable_sort(by_leads.begin(), by_leads.end(),
                         [&](int32_t a, int32_t b) { return leads[a] > leads[b]; });
        for (auto hi : by_leads) {
            for (auto it = by_leads.rbegin(); it != by_leads.rend(); ++it) {
                int32_t lo = *it;
                if (leads[hi] - leads[lo] <= 1) {
                    break;
                }
                for (auto i : partitions) {
                    auto& p = _work[i];
                    if (p.replicas.front() != hi || !has(p.replicas, lo)) {
                        continue;
                    }
                    if (per_topic) {
                        auto& tl = (*per_topic)[p.topic];
                        --tl[hi];
                        ++tl[lo];
                        if (spread(tl) > 1) {
                            ++tl[hi];  // would unbalance the topic
                            --tl[lo];
                            continue;
                        }
                    }
                    std::iter_swap(p.replicas.begin(),
                                   std::find(p.replicas.begin(), p.replicas.end(), lo));
                    --leads[hi];
                    ++leads[lo];
                    return true;
                }
            }
        }
        return false;
    }

    std::vector<int32_t> _brokers;
    std::vector<partition_placement> _work;
    std::map<std::string, topic_view> _topics;
    std::map<int32_t, int> _global;
    std::map<std::string, std::map<int32_t, int>> _topic_counts;
    std::map<std::string, std::map<int32_t, int>> _topic_leaders;
};

}  // namespace

rebalance_plan plan_rebalance(const std::vector<int32_t>& brokers,
                              const std::vector<partition_placement>& partitions) {
    return planner(brokers, partitions).run(partitions);
}

}  // namespace spool::op::reconcilers
