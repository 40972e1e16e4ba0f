#include "broker/metadata/controller/plan/controller_plan.h"

#include "broker/metadata/controller/plan/controller_elections.h"
#include "broker/metadata/controller/plan/controller_reassign.h"
#include "broker/metadata/controller/plan/placement.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

namespace spool::broker::metadata {

namespace {

constexpr std::string_view unclean_key = "unclean.leader.election.enable";
constexpr std::string_view min_isr_key = "min.insync.replicas";

bool is_true(std::string_view v) {
    return v.size() == 4 && ::strncasecmp(v.data(), "true", 4) == 0;
}

// min.insync.replicas as Kafka resolves it: the topic's override, else the cluster-wide dynamic
// default, else the controller's own configuration. A value that does not parse counts as 1.
int32_t min_insync(const cluster_state& state, const topic_metadata& topic,
                   const plan_options& options) {
    auto parse = [](const std::string& v) {
        int32_t n = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        return ec == std::errc{} && end == v.data() + v.size() && n >= 1 ? n : 1;
    };
    if (auto it = topic.configs.find(std::string(min_isr_key)); it != topic.configs.end()) {
        return parse(it->second);
    }
    if (auto d = state.broker_configs.find(""); d != state.broker_configs.end()) {
        if (auto it = d->second.find(std::string(min_isr_key)); it != d->second.end()) {
            return parse(it->second);
        }
    }
    return std::max(options.min_insync_replicas, 1);
}

// unclean.leader.election.enable as Kafka resolves it: the topic's override, else the
// cluster-wide dynamic default, else the controller's own configuration.
bool unclean_allowed(const cluster_state& state, const topic_metadata& topic,
                     const plan_options& options) {
    if (auto it = topic.configs.find(std::string(unclean_key)); it != topic.configs.end()) {
        return is_true(it->second);
    }
    if (auto d = state.broker_configs.find(""); d != state.broker_configs.end()) {
        if (auto it = d->second.find(std::string(unclean_key)); it != d->second.end()) {
            return is_true(it->second);
        }
    }
    return options.unclean_leader_election;
}

bool contains(const std::vector<int32_t>& v, int32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
}

// The first replica (replica order is Kafka's preference) that is in `set` and eligible.
std::optional<int32_t> eligible_member(const cluster_state& state, const partition_state& p,
                                       const std::vector<int32_t>& set) {
    for (int32_t r : p.replicas) {
        if (state.eligible(r) && contains(set, r)) {
            return r;
        }
    }
    return std::nullopt;
}

// A broker that came back (a fenced new incarnation) and may lack what it held: its directory
// is not the one it registered with before (nothing survived), or it started without the
// clean-shutdown marker (unsynced records may be gone).
bool came_back_lossy(const cluster_state& state, int32_t r) {
    auto it = state.brokers.find(r);
    return it != state.brokers.end() && it->second.fenced &&
           (it->second.directory_changed || it->second.unclean_shutdown);
}

bool directory_replaced(const cluster_state& state, int32_t r) {
    auto it = state.brokers.find(r);
    return it != state.brokers.end() && it->second.fenced && it->second.directory_changed;
}

struct partition_rules {
    const cluster_state& state;
    bool unclean;
    int32_t min_isr;
};

// What the partition's record must become, or nullopt when it is right as it is.
std::optional<partition_write> change_of(const partition_rules& rules, const std::string& topic,
                                         const partition_state& p) {
    using reason = partition_write::reason;
    const auto& state = rules.state;
    int32_t leader = p.leader;
    std::vector<int32_t> isr = p.isr;
    std::vector<int32_t> elr = p.elr;
    reason why = reason::isr_shrink;
    bool isr_decided = false;  // an election below already set the ISR
    if (leader < 0 || !state.eligible(leader)) {
        const bool leader_live = leader >= 0 && state.is_live(leader);
        const bool leader_fenced = leader >= 0 && state.is_fenced(leader);
        const auto off_reason = [&] {
            return leader < 0 ? reason::leader_elected
                              : (leader_live && !leader_fenced ? reason::controlled_shutdown
                                                               : reason::leader_offline);
        };
        if (auto next = eligible_member(state, p, p.isr)) {
            why = off_reason();
            leader = *next;
        } else if (auto from_elr = eligible_member(state, p, p.elr)) {
            // KIP-966: no ISR member can lead, but this one left the ISR while it was below
            // min.insync.replicas, so it holds every committed record.
            why = off_reason();
            leader = *from_elr;
            isr = {leader};
            isr_decided = true;
        } else if (leader_live && !leader_fenced) {
            // In controlled shutdown with no one in sync to take over: it leads on until it
            // leaves (then the partition waits for an ISR member, or an unclean election).
        } else {
            std::optional<int32_t> out_of_sync;
            if (rules.unclean) {
                auto it = std::find_if(p.replicas.begin(), p.replicas.end(),
                                       [&state](int32_t r) { return state.eligible(r); });
                if (it != p.replicas.end()) {
                    out_of_sync = *it;
                }
            }
            if (out_of_sync) {
                // May have lost acknowledged records: allowed only by the topic's config.
                why = reason::unclean_election;
                leader = *out_of_sync;
                isr = {leader};
                elr.clear();
                isr_decided = true;
            } else {
                why = p.leader < 0 ? reason::leader_elected : reason::leader_offline;
                leader = -1;
            }
        }
    }
    if (!isr_decided) {
        std::vector<int32_t> kept;
        std::copy_if(isr.begin(), isr.end(), std::back_inserter(kept),
                     [&state](int32_t r) { return state.eligible(r); });
        if (kept.empty()) {
            // Nobody in the ISR may serve now: its members stay, since each holds every
            // committed record and whichever is unfenced first may lead; except one that came
            // back without what it held, while another member or an ELR member still has it
            // (a replaced directory never stays: it holds nothing).
            for (int32_t r : isr) {
                if (directory_replaced(state, r)) {
                    continue;
                }
                if (came_back_lossy(state, r)) {
                    const bool other_copy =
                        std::any_of(
                            isr.begin(), isr.end(),
                            [&](int32_t o) { return o != r && !came_back_lossy(state, o); }) ||
                        std::any_of(elr.begin(), elr.end(),
                                    [&](int32_t o) { return !came_back_lossy(state, o); });
                    if (other_copy) {
                        continue;
                    }
                }
                kept.push_back(r);
            }
        }
        // Members that leave while the ISR is below min.insync.replicas hold every committed
        // record: they become eligible leader replicas, unless they came back without them.
        if (static_cast<int32_t>(kept.size()) < rules.min_isr) {
            for (int32_t r : isr) {
                if (!contains(kept, r) && !contains(elr, r) && !came_back_lossy(state, r)) {
                    elr.push_back(r);
                }
            }
        }
        isr = std::move(kept);
    }
    // The ELR keeps only replicas outside the ISR that still hold what it promises, and is
    // cleared once the ISR has min.insync.replicas members again.
    if (static_cast<int32_t>(isr.size()) >= rules.min_isr) {
        elr.clear();
    } else {
        std::erase_if(elr, [&](int32_t r) {
            return contains(isr, r) || !contains(p.replicas, r) || came_back_lossy(state, r);
        });
    }
    int32_t last_known_leader = leader >= 0 ? -1 : (p.leader >= 0 ? p.leader : p.last_known_leader);
    if (leader == p.leader && isr == p.isr && elr == p.elr &&
        last_known_leader == p.last_known_leader) {
        return std::nullopt;
    }
    partition_write w{topic, p, 0, leader == p.leader ? reason::isr_shrink : why, p.leader};
    w.state.leader = leader;
    w.state.isr = std::move(isr);
    w.state.elr = std::move(elr);
    w.state.last_known_leader = last_known_leader;
    if (leader != p.leader) {
        ++w.state.leader_epoch;
    }
    ++w.state.partition_epoch;
    return w;
}

// The fenced brokers whose logs are recovered and that nothing in this pass or in the records
// still waits on: they lead nothing and no write of this pass touches a partition they are a
// replica of (their ISR and ELR places are settled).
std::vector<broker_registration> to_unfence(const cluster_state& state,
                                            const std::vector<partition_write>& writes) {
    std::set<int32_t> candidates;
    for (const auto& [id, b] : state.brokers) {
        if (b.fenced && b.recovered) {
            candidates.insert(id);
        }
    }
    if (candidates.empty()) {
        return {};
    }
    for (const auto& w : writes) {
        for (int32_t r : w.state.replicas) {
            candidates.erase(r);
        }
        candidates.erase(w.previous_leader);
    }
    for (const auto& [name, topic] : state.topics) {
        if (candidates.empty()) {
            break;
        }
        for (const auto& p : topic.partitions) {
            candidates.erase(p.leader);
        }
    }
    std::vector<broker_registration> out;
    for (int32_t id : candidates) {
        auto b = state.brokers.at(id);
        b.fenced = false;
        out.push_back(std::move(b));
    }
    return out;
}

}  // namespace

plan_result plan(const cluster_state& state, const plan_options& options) {
    plan_result out;
    // Built lazily: a steady cluster (the common pass) has nothing to place.
    std::optional<placement_load> load;

    for (const auto& [name, topic] : state.topics) {
        bool unplaceable = false;
        std::optional<partition_rules> rules;  // resolved once per topic, and only when needed
        for (const auto& p : topic.partitions) {
            if (!p.placed()) {
                if (unplaceable) {
                    continue;
                }
                if (!load) {
                    load.emplace(placement_load::of(state));
                }
                auto replicas = load->place_one(topic.replication_factor);
                if (!replicas) {
                    unplaceable = true;
                    out.unplaceable.push_back(name);
                    continue;
                }
                partition_write w{
                    name, {}, topic.record_revision, partition_write::reason::place, -1};
                w.state.partition = p.partition;
                w.state.replicas = std::move(replicas).value();
                w.state.isr = w.state.replicas;
                w.state.leader = w.state.replicas.front();
                w.state.record_revision = 0;
                out.writes.push_back(std::move(w));
                continue;
            }
            // The steady case, checked without building anything: an eligible leader, an
            // ISR of eligible members and no ELR.
            if (p.leader >= 0 && state.eligible(p.leader) && p.elr.empty() &&
                std::all_of(p.isr.begin(), p.isr.end(),
                            [&state](int32_t r) { return state.eligible(r); })) {
                if (auto w = reassignment_step(state, name, p)) {
                    out.writes.push_back(std::move(*w));
                }
                continue;
            }
            if (!rules) {
                rules.emplace(partition_rules{state, unclean_allowed(state, topic, options),
                                              min_insync(state, topic, options)});
            }
            if (auto w = change_of(*rules, name, p)) {
                out.writes.push_back(std::move(*w));
            } else if (auto r = reassignment_step(state, name, p)) {
                out.writes.push_back(std::move(*r));
            }
        }
    }
    plan_elections(state, options, out);
    out.unfence = to_unfence(state, out.writes);
    return out;
}

void apply(cluster_state& state, const std::vector<partition_write>& writes, int64_t revision) {
    for (const auto& w : writes) {
        auto it = state.topics.find(w.topic);
        if (it == state.topics.end() || !it->second.has_partition(w.state.partition)) {
            continue;
        }
        auto& p = it->second.partitions[static_cast<size_t>(w.state.partition)];
        p = w.state;
        p.record_revision = revision;
    }
    state.version = std::max(state.version, revision);
}

}  // namespace spool::broker::metadata
