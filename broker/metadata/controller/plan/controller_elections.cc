#include "broker/metadata/controller/plan/controller_elections.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace spool::broker::metadata {

namespace {

// Owned names: the writes' topics move when the vector grows.
using partition_key = std::pair<std::string, int32_t>;

bool contains(const std::vector<int32_t>& v, int32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

election_check check_preferred(const cluster_state& state, const partition_state& p) {
    const int32_t preferred = p.replicas.front();
    if (p.leader == preferred) {
        return {election_outcome::not_needed, -1, false};
    }
    if (state.eligible(preferred) && contains(p.isr, preferred)) {
        return {election_outcome::elect, preferred, false};
    }
    return {election_outcome::not_available, -1, false};
}

election_check check_unclean(const cluster_state& state, const partition_state& p) {
    if (p.leader >= 0) {
        return {election_outcome::not_needed, -1, false};
    }
    for (int32_t r : p.replicas) {
        if (state.eligible(r) && contains(p.isr, r)) {
            return {election_outcome::elect, r, false};
        }
    }
    for (int32_t r : p.replicas) {
        if (state.eligible(r)) {
            return {election_outcome::elect, r, true};
        }
    }
    return {election_outcome::not_available, -1, false};
}

partition_write election_write(const std::string& topic, const partition_state& p,
                               const election_check& c, partition_write::reason why) {
    partition_write w{topic, p, 0, why, p.leader};
    w.state.leader = c.leader;
    if (c.unclean) {
        w.state.isr = {c.leader};
    }
    ++w.state.leader_epoch;
    ++w.state.partition_epoch;
    return w;
}

// What this pass writes already, so no partition gets two writes (two puts of one key in a txn,
// or a second txn whose compare must fail).
class pass_partitions {
public:
    explicit pass_partitions(const std::vector<partition_write>& writes) {
        for (const auto& w : writes) {
            _written.emplace(w.topic, w.state.partition);
        }
    }
    // Takes the partition for a new write; false if the pass writes it already.
    bool take(std::string_view topic, int32_t partition) {
        return _written.emplace(std::string(topic), partition).second;
    }

private:
    std::set<partition_key, std::less<>> _written;
};

// Appends the writes of one request; true when it needs none (then it is done).
bool plan_request(const cluster_state& state, const election_request& request,
                  pass_partitions& pass, std::vector<partition_write>& writes) {
    const auto why = request.type == election_type::unclean
                         ? partition_write::reason::unclean_election
                         : partition_write::reason::preferred_election;
    bool done = true;
    for (const auto& [topic, partitions] : request.partitions) {
        const topic_metadata* t = state.find(std::string_view(topic));
        for (int32_t partition : partitions) {
            auto c = check_election(state, topic, partition, request.type);
            if (c.outcome != election_outcome::elect) {
                continue;
            }
            done = false;  // written now, or (another rule changes it first) in a later pass
            if (pass.take(topic, partition)) {
                writes.push_back(
                    election_write(t->name, t->partitions[static_cast<size_t>(partition)], c, why));
            }
        }
    }
    return done;
}

// Kafka's checkAndTriggerAutoLeaderRebalance over the snapshot.
void plan_rebalance(const cluster_state& state, int32_t percentage, pass_partitions& pass,
                    std::vector<partition_write>& writes) {
    struct broker_share {
        size_t preferred = 0;  // partitions whose first replica it is
        std::vector<std::pair<const topic_metadata*, int32_t>> not_leading;  // of those
    };
    std::map<int32_t, broker_share> shares;
    for (const auto& [name, t] : state.topics) {
        for (const auto& p : t.partitions) {
            if (!p.placed()) {
                continue;
            }
            auto& share = shares[p.replicas.front()];
            ++share.preferred;
            if (p.leader != p.replicas.front()) {
                share.not_leading.emplace_back(&t, p.partition);
            }
        }
    }
    for (const auto& [broker, share] : shares) {
        // Integer form of not_leading / preferred > percentage / 100.
        if (share.not_leading.size() * 100 <= share.preferred * static_cast<size_t>(percentage)) {
            continue;
        }
        for (const auto& [t, partition] : share.not_leading) {
            const auto& p = t->partitions[static_cast<size_t>(partition)];
            auto c = check_preferred(state, p);
            if (c.outcome == election_outcome::elect && pass.take(t->name, partition)) {
                writes.push_back(
                    election_write(t->name, p, c, partition_write::reason::preferred_election));
            }
        }
    }
}

}  // namespace

election_check check_election(const cluster_state& state, std::string_view topic, int32_t partition,
                              election_type type) {
    const topic_metadata* t = state.find(topic);
    if (t == nullptr || !t->has_partition(partition)) {
        return {election_outcome::unknown_partition, -1, false};
    }
    const auto& p = t->partitions[static_cast<size_t>(partition)];
    if (!p.placed()) {
        return {election_outcome::not_available, -1, false};
    }
    return type == election_type::unclean ? check_unclean(state, p) : check_preferred(state, p);
}

void plan_elections(const cluster_state& state, const plan_options& options, plan_result& out) {
    if (state.elections.empty() && !options.rebalance_leaders) {
        return;  // the steady pass: nothing built
    }
    pass_partitions pass(out.writes);
    for (const auto& [id, request] : state.elections) {
        if (plan_request(state, request, pass, out.writes)) {
            out.elections_done.push_back(id);
        }
    }
    if (options.rebalance_leaders) {
        plan_rebalance(state, options.leader_imbalance_percentage, pass, out.writes);
    }
}

}  // namespace spool::broker::metadata
