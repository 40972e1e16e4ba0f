#include "broker/metadata/controller_plan.h"

#include "broker/metadata/controller_elections.h"
#include "broker/metadata/controller_reassign.h"
#include "broker/metadata/placement.h"

#include <strings.h>

#include <algorithm>
#include <optional>

namespace spool::broker::metadata {

namespace {

constexpr std::string_view unclean_key = "unclean.leader.election.enable";

bool is_true(std::string_view v) {
    return v.size() == 4 && ::strncasecmp(v.data(), "true", 4) == 0;
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

// The first replica (replica order is Kafka's preference) that is in the ISR and eligible.
std::optional<int32_t> eligible_isr_member(const cluster_state& state, const partition_state& p) {
    for (int32_t r : p.replicas) {
        if (state.eligible(r) && contains(p.isr, r)) {
            return r;
        }
    }
    return std::nullopt;
}

// The ISR without its ineligible members, or the ISR as it is when none would remain: every
// member holds every committed record, so whichever comes back first may lead (KIP-966).
std::vector<int32_t> isr_without_ineligible(const cluster_state& state,
                                            const std::vector<int32_t>& isr) {
    std::vector<int32_t> out;
    out.reserve(isr.size());
    std::copy_if(isr.begin(), isr.end(), std::back_inserter(out),
                 [&state](int32_t r) { return state.eligible(r); });
    return out.empty() ? isr : out;
}

// What the partition's record must become, or nullopt when it is right as it is.
std::optional<partition_write> change_of(const cluster_state& state, const std::string& topic,
                                         const partition_state& p, bool unclean) {
    using reason = partition_write::reason;
    int32_t leader = p.leader;
    std::vector<int32_t> isr = p.isr;
    reason why = reason::isr_shrink;
    if (leader < 0 || !state.eligible(leader)) {
        const bool leader_live = leader >= 0 && state.is_live(leader);
        if (auto next = eligible_isr_member(state, p)) {
            why = leader < 0 ? reason::leader_elected
                             : (leader_live ? reason::controlled_shutdown : reason::leader_offline);
            leader = *next;
        } else if (leader_live) {
            // In controlled shutdown with no one in sync to take over: it leads on until it
            // leaves (then the partition waits for an ISR member, or an unclean election).
        } else {
            std::optional<int32_t> out_of_sync;
            if (unclean) {
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
            } else {
                why = p.leader < 0 ? reason::leader_elected : reason::leader_offline;
                leader = -1;
            }
        }
    }
    if (why != reason::unclean_election) {
        isr = isr_without_ineligible(state, isr);
    }
    if (leader == p.leader && isr == p.isr) {
        return std::nullopt;
    }
    partition_write w{topic, p, 0, leader == p.leader ? reason::isr_shrink : why, p.leader};
    w.state.leader = leader;
    w.state.isr = std::move(isr);
    if (leader != p.leader) {
        ++w.state.leader_epoch;
    }
    ++w.state.partition_epoch;
    return w;
}

}  // namespace

plan_result plan(const cluster_state& state, const plan_options& options) {
    plan_result out;
    // Built lazily: a steady cluster (the common pass) has nothing to place.
    std::optional<placement_load> load;

    for (const auto& [name, topic] : state.topics) {
        bool unplaceable = false;
        std::optional<bool> unclean;  // resolved once per topic, and only when needed
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
            // The steady case, checked without building anything: an eligible leader and an
            // ISR of eligible members.
            if (p.leader >= 0 && state.eligible(p.leader) &&
                std::all_of(p.isr.begin(), p.isr.end(),
                            [&state](int32_t r) { return state.eligible(r); })) {
                if (auto w = reassignment_step(state, name, p)) {
                    out.writes.push_back(std::move(*w));
                }
                continue;
            }
            if (!unclean) {
                unclean = unclean_allowed(state, topic, options);
            }
            if (auto w = change_of(state, name, p, *unclean)) {
                out.writes.push_back(std::move(*w));
            } else if (auto r = reassignment_step(state, name, p)) {
                out.writes.push_back(std::move(*r));
            }
        }
    }
    plan_elections(state, options, out);
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
