// ConsumerGroupHeartbeat and ConsumerGroupDescribe (KIP-848), following Kafka's
// GroupMetadataManager.consumerGroupHeartbeat: validate, find or create the member, update its
// subscription (bumping the group epoch when what the assignor sees changed), compute a new
// target assignment when the group epoch is ahead of it, then move the member one step towards
// its target (reconciliation.h).

#include "broker/coordinator/assignor.h"
#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"
#include "broker/coordinator/reconciliation.h"
#include "common/log.h"

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <algorithm>
#include <regex>

namespace spool::broker::coordinator {

namespace {

consumer_heartbeat_result fail(std::error_code ec, std::string message = {}) {
    consumer_heartbeat_result r;
    r.error = ec;
    r.error_message = std::move(message);
    return r;
}

// Kafka resolves SubscribedTopicRegex with RE2/J; std::regex ECMAScript is the closest engine
// here. Both take the common syntax (classes, alternation, repetition, anchors); RE2 has no
// backreferences or lookaround, ECMAScript has them, and ECMAScript lacks RE2's (?i) flags and
// \\p{..} classes (such a regex answers INVALID_REGULAR_EXPRESSION here).
std::optional<std::regex> compile(const std::string& pattern) {
    try {
        return std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
        return std::nullopt;
    }
}

bool is_subset(const assignment_map& a, const assignment_map& b) {
    for (const auto& [t, ps] : a) {
        auto it = b.find(t);
        for (int32_t p : ps) {
            if (it == b.end() || !it->second.contains(p)) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

std::string_view to_string(consumer_group_state s) noexcept {
    switch (s) {
        case consumer_group_state::empty:
            return "Empty";
        case consumer_group_state::assigning:
            return "Assigning";
        case consumer_group_state::reconciling:
            return "Reconciling";
        case consumer_group_state::stable:
            return "Stable";
    }
    return "Unknown";
}

consumer_group_state consumer_group_data::state() const {
    if (members.empty()) {
        return consumer_group_state::empty;
    }
    if (group_epoch > assignment_epoch) {
        return consumer_group_state::assigning;
    }
    for (const auto& [_, m] : members) {
        if (m.state != member_state::stable || m.member_epoch != assignment_epoch) {
            return consumer_group_state::reconciling;
        }
    }
    return consumer_group_state::stable;
}

const consumer_member* consumer_group_data::owner(const protocol::uuid& topic,
                                                  int32_t partition) const {
    for (const auto& [_, m] : members) {
        for (const auto* a : {&m.assigned, &m.pending_revocation}) {
            auto it = a->find(topic);
            if (it != a->end() && it->second.contains(partition)) {
                return &m;
            }
        }
    }
    return nullptr;
}

void group_coordinator::arm_consumer_timer(const group& g, consumer_member& m) {
    time_ms at = m.session_deadline;
    if (m.revocation_deadline.count() > 0 && m.revocation_deadline < at) {
        at = m.revocation_deadline;
    }
    if (m.timer_at.count() == 0 || at < m.timer_at) {
        m.timer_at = at;
        schedule({at, timer_kind::consumer_member, g.id(), m.id});
    }
}

void group_coordinator::remove_consumer_member(group& g, const std::string& member_id) {
    auto& cg = *g.consumer();
    auto it = cg.members.find(member_id);
    if (it == cg.members.end()) {
        return;
    }
    if (it->second.instance_id) {
        auto s = cg.static_members.find(*it->second.instance_id);
        if (s != cg.static_members.end() && s->second == member_id) {
            cg.static_members.erase(s);
        }
    }
    cg.members.erase(it);
    cg.target.erase(member_id);
    ++cg.group_epoch;
    if (cg.members.empty()) {
        g.transition(group_state::empty, _clock.now());
    }
    store_consumer_group(g, {}, {member_id});
    mark_snapshot_dirty();
}

void group_coordinator::on_consumer_timer(const std::string& group_id,
                                          const std::string& member_id) {
    group* g = find(group_id);
    consumer_group_data* cg = g ? g->consumer() : nullptr;
    if (!cg) {
        return;
    }
    auto it = cg->members.find(member_id);
    if (it == cg->members.end()) {
        return;
    }
    consumer_member& m = it->second;
    m.timer_at = time_ms(0);
    const time_ms now = _clock.now();
    if (m.session_deadline <= now) {
        log::get("coordinator")
            ->info("consumer group {}: member {} session expired", group_id, member_id);
        remove_consumer_member(*g, member_id);
        return;
    }
    if (m.revocation_deadline.count() > 0 && m.revocation_deadline <= now) {
        // Kafka fences a member that does not revoke within its rebalance timeout.
        log::get("coordinator")
            ->info("consumer group {}: member {} did not revoke in time, fenced", group_id,
                   member_id);
        remove_consumer_member(*g, member_id);
        return;
    }
    arm_consumer_timer(*g, m);
}

void group_coordinator::update_target_assignment(group& g, const topic_image& topics) {
    auto& cg = *g.consumer();
    // The assignor the members ask for most (ties: the first configured), else the default.
    std::map<std::string, int> votes;
    for (const auto& [_, m] : cg.members) {
        if (m.server_assignor) {
            ++votes[*m.server_assignor];
        }
    }
    std::string assignor = _config.consumer_assignors.empty() ? "uniform"
                                                              : _config.consumer_assignors.front();
    int best = 0;
    for (const auto& name : _config.consumer_assignors) {
        if (votes[name] > best) {
            best = votes[name];
            assignor = name;
        }
    }
    std::vector<assignor_member> members;
    std::map<protocol::uuid, int32_t> subscribed;
    for (const auto& [id, m] : cg.members) {
        assignor_member am{id, {}, {}};
        auto add = [&](const std::string& name) {
            auto t = topics.by_name.find(name);
            if (t != topics.by_name.end()) {
                am.topics.insert(t->second.id);
                subscribed[t->second.id] = t->second.partitions;
            }
        };
        for (const auto& name : m.subscribed_topic_names) {
            add(name);
        }
        if (m.subscribed_regex) {
            for (const auto& name : cg.resolved_regex[*m.subscribed_regex]) {
                add(name);
            }
        }
        if (auto t = cg.target.find(id); t != cg.target.end()) {
            am.current = t->second;
        }
        members.push_back(std::move(am));
    }
    auto target = run_assignor(assignor, members, subscribed);
    cg.target.clear();
    for (auto& [id, a] : target) {
        cg.target[id] = std::move(a);
    }
    cg.assignor = assignor;
    cg.assignment_epoch = cg.group_epoch;
    cg.target_stored = false;
}

consumer_heartbeat_result group_coordinator::consumer_heartbeat(consumer_heartbeat_request req) {
    if (auto ec = availability()) {
        return fail(ec);
    }
    // ---- validation (Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid) ----
    if (req.group_id.empty()) {
        return fail(errc::invalid_request, "GroupId can't be empty.");
    }
    if (req.instance_id && req.instance_id->empty()) {
        return fail(errc::invalid_request, "InstanceId can't be empty.");
    }
    if (req.rack_id && req.rack_id->empty()) {
        return fail(errc::invalid_request, "RackId can't be empty.");
    }
    if (req.member_epoch < static_leave_epoch) {
        return fail(errc::invalid_request, "MemberEpoch is invalid.");
    }
    if (req.member_epoch != join_epoch && req.member_id.empty()) {
        return fail(errc::invalid_request, "MemberId can't be empty.");
    }
    if (req.member_epoch == join_epoch) {
        if (req.rebalance_timeout_ms == -1) {
            return fail(errc::invalid_request,
                        "RebalanceTimeoutMs must be provided in first request.");
        }
        if (req.owned && !req.owned->empty()) {
            return fail(errc::invalid_request, "TopicPartitions must be empty when (re-)joining.");
        }
        if (!req.subscribed_topic_names && !req.subscribed_regex) {
            return fail(errc::invalid_request,
                        "SubscribedTopicNames or SubscribedTopicRegex must be set in first "
                        "request.");
        }
    }
    if (req.subscribed_regex && !req.subscribed_regex->empty() &&
        !compile(*req.subscribed_regex)) {
        return fail(errc::invalid_regular_expression,
                    "SubscribedTopicRegex `" + *req.subscribed_regex + "` is not a valid regular "
                    "expression.");
    }
    if (req.server_assignor &&
        std::find(_config.consumer_assignors.begin(), _config.consumer_assignors.end(),
                  *req.server_assignor) == _config.consumer_assignors.end()) {
        return fail(errc::unsupported_assignor,
                    "ServerAssignor " + *req.server_assignor + " is not supported.");
    }

    // ---- the group ----
    group* g = find(req.group_id);
    if (g && g->state() == group_state::dead) {
        return fail(errc::coordinator_not_available);
    }
    if (g && !g->consumer()) {
        // A classic group: an empty one (offsets only) becomes a consumer group, as Kafka
        // converts it; a classic group with members is not upgraded online here.
        if (!g->empty() || !g->pending_members().empty()) {
            return fail(errc::group_id_not_found,
                        "Group " + req.group_id + " is not a consumer group.");
        }
        if (req.member_epoch != join_epoch) {
            return fail(errc::unknown_member_id);
        }
        std::vector<log_record> tombstone;
        append_group_tombstones(*g, tombstone);
        _log.append(std::move(tombstone), [](std::error_code) {});
        g->make_consumer();
    }
    if (!g) {
        if (req.member_epoch != join_epoch) {
            return fail(errc::unknown_member_id,
                        "Group " + req.group_id + " not found; rejoin with epoch 0.");
        }
        g = &get_or_create(req.group_id);
        g->make_consumer();
    }
    auto& cg = *g->consumer();
    const time_ms now = _clock.now();
    const auto settings = settings_of(req.group_id);

    // ---- leaving ----
    if (req.member_epoch == leave_epoch || req.member_epoch == static_leave_epoch) {
        std::string id = req.member_id;
        if (req.instance_id) {
            auto s = cg.static_members.find(*req.instance_id);
            if (s == cg.static_members.end()) {
                return fail(errc::unknown_member_id);
            }
            if (s->second != id) {
                return fail(errc::fenced_instance_id);
            }
        }
        auto it = cg.members.find(id);
        if (it == cg.members.end()) {
            return fail(errc::unknown_member_id);
        }
        consumer_heartbeat_result r;
        r.member_id = id;
        r.member_epoch = req.member_epoch;
        if (req.member_epoch == static_leave_epoch && req.instance_id) {
            // A static member that leaves temporarily keeps its assignment until its session
            // expires; the instance coming back takes it over (KIP-345 semantics).
            it->second.member_epoch = static_leave_epoch;
            it->second.session_deadline = now + time_ms(settings.consumer_session_timeout_ms);
            arm_consumer_timer(*g, it->second);
            store_consumer_group(*g, {id}, {});
        } else {
            remove_consumer_member(*g, id);
        }
        mark_snapshot_dirty();
        return r;
    }

    // ---- joining or heartbeating ----
    consumer_member* m = nullptr;
    bool bump = false;
    bool full_request = req.member_epoch == join_epoch ||
                        (req.rebalance_timeout_ms != -1 && req.owned &&
                         (req.subscribed_topic_names || req.subscribed_regex));
    if (req.member_epoch == join_epoch) {
        if (req.member_id.empty()) {
            thread_local boost::uuids::random_generator gen;
            req.member_id = boost::uuids::to_string(gen());
        }
        std::optional<std::string> replaced;
        if (req.instance_id) {
            auto s = cg.static_members.find(*req.instance_id);
            if (s != cg.static_members.end() && s->second != req.member_id) {
                auto old = cg.members.find(s->second);
                if (old != cg.members.end() && old->second.member_epoch != static_leave_epoch) {
                    return fail(errc::unreleased_instance_id,
                                "Static member " + *req.instance_id + " is still active.");
                }
                replaced = s->second;
            }
        }
        auto existing = cg.members.find(req.member_id);
        if (replaced) {
            // The instance is back under a new member id: it takes over the departed member's
            // assignment and epoch, and its target moves with it (no rebalance).
            auto node = cg.members.extract(*replaced);
            consumer_member taken = std::move(node.mapped());
            taken.id = req.member_id;
            taken.timer_at = time_ms(0);
            // As Kafka: a new member at epoch 0 that still owns the old one's partitions, so
            // reconciliation brings it to the assignment epoch with the same partitions.
            taken.member_epoch = join_epoch;
            taken.previous_member_epoch = -1;
            taken.state = member_state::stable;
            taken.pending_revocation.clear();
            if (auto t = cg.target.find(*replaced); t != cg.target.end()) {
                auto moved = std::move(t->second);
                cg.target.erase(t);
                cg.target[req.member_id] = std::move(moved);
            }
            cg.static_members[*req.instance_id] = req.member_id;
            m = &cg.members.emplace(req.member_id, std::move(taken)).first->second;
            store_consumer_group(*g, {}, {*replaced});
        } else if (existing != cg.members.end()) {
            // A known member rejoining from scratch: it starts over with nothing owned.
            m = &existing->second;
            m->assigned.clear();
            m->pending_revocation.clear();
            m->member_epoch = join_epoch;
            m->state = member_state::stable;
        } else {
            if (cg.members.size() >= static_cast<size_t>(_config.consumer_max_size)) {
                return fail(errc::group_max_size_reached,
                            "The consumer group has reached its maximum capacity of " +
                                std::to_string(_config.consumer_max_size) + " members.");
            }
            consumer_member fresh;
            fresh.id = req.member_id;
            fresh.instance_id = req.instance_id;
            m = &cg.members.emplace(req.member_id, std::move(fresh)).first->second;
            if (req.instance_id) {
                cg.static_members[*req.instance_id] = req.member_id;
            }
            bump = true;
        }
        if (g->state() != group_state::stable) {
            g->transition(group_state::stable, now);
        }
    } else {
        auto it = cg.members.find(req.member_id);
        if (it == cg.members.end()) {
            return fail(errc::unknown_member_id,
                        "Member " + req.member_id + " is not a member of group " + req.group_id +
                            ".");
        }
        m = &it->second;
        if (req.instance_id) {
            auto s = cg.static_members.find(*req.instance_id);
            if (s == cg.static_members.end() || s->second != req.member_id) {
                return fail(errc::fenced_instance_id);
            }
        }
        if (req.member_epoch > m->member_epoch) {
            return fail(errc::fenced_member_epoch,
                        "The consumer group member has a greater member epoch (" +
                            std::to_string(req.member_epoch) + ") than the one known by the "
                            "group coordinator (" + std::to_string(m->member_epoch) + ").");
        }
        if (req.member_epoch < m->member_epoch &&
            (req.member_epoch != m->previous_member_epoch || !req.owned ||
             !is_subset(*req.owned, m->assigned))) {
            return fail(errc::fenced_member_epoch,
                        "The consumer group member has a smaller member epoch (" +
                            std::to_string(req.member_epoch) + ") than the one known by the "
                            "group coordinator (" + std::to_string(m->member_epoch) + ").");
        }
    }

    // ---- the member's metadata and subscription (names and regex add up, as in Kafka's
    // ConsumerGroupMember; the Java client sends one of them) ----
    m->client_id = req.client_id;
    m->client_host = req.client_host;
    if (req.rack_id) {
        m->rack_id = req.rack_id;
    }
    if (req.rebalance_timeout_ms != -1) {
        m->rebalance_timeout_ms = req.rebalance_timeout_ms;
    }
    if (req.server_assignor && m->server_assignor != req.server_assignor) {
        m->server_assignor = req.server_assignor;
        bump = true;
    }
    if (req.subscribed_topic_names) {
        auto names = std::move(*req.subscribed_topic_names);
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        if (names != m->subscribed_topic_names) {
            m->subscribed_topic_names = std::move(names);
            bump = true;
        }
    }
    if (req.subscribed_regex) {
        std::optional<std::string> regex;
        if (!req.subscribed_regex->empty()) {
            regex = std::move(*req.subscribed_regex);
        }
        if (regex != m->subscribed_regex) {
            m->subscribed_regex = std::move(regex);
            bump = true;
        }
    }
    m->session_deadline = now + time_ms(settings.consumer_session_timeout_ms);

    // ---- what the subscriptions resolve to now ----
    static const topic_image no_topics;
    const topic_image& topics = req.topics ? *req.topics : no_topics;
    std::set<std::string, std::less<>> regexes;
    for (const auto& [_, member] : cg.members) {
        if (member.subscribed_regex) {
            regexes.insert(*member.subscribed_regex);
        }
    }
    const bool regexes_changed =
        regexes.size() != cg.resolved_regex.size() ||
        !std::equal(regexes.begin(), regexes.end(), cg.resolved_regex.begin(),
                    [](const std::string& a, const auto& b) { return a == b.first; });
    if (regexes_changed || cg.resolved_image_version != topics.version) {
        std::map<std::string, std::set<std::string>, std::less<>> resolved;
        for (const auto& pattern : regexes) {
            auto& matched = resolved[pattern];
            if (auto re = compile(pattern)) {
                for (const auto& [name, t] : topics.by_name) {
                    if (!t.internal && std::regex_match(name, *re)) {
                        matched.insert(name);
                    }
                }
            }
        }
        cg.resolved_regex = std::move(resolved);
        cg.resolved_image_version = topics.version;
    }
    std::map<std::string, int32_t, std::less<>> metadata;
    for (const auto& [_, member] : cg.members) {
        auto add = [&](const std::string& name) {
            auto t = topics.by_name.find(name);
            if (t != topics.by_name.end()) {
                metadata[name] = t->second.partitions;
            }
        };
        for (const auto& name : member.subscribed_topic_names) {
            add(name);
        }
        if (member.subscribed_regex) {
            for (const auto& name : cg.resolved_regex[*member.subscribed_regex]) {
                add(name);
            }
        }
    }
    if (metadata != cg.subscribed_metadata) {
        bump = bump || cg.subscribed_metadata_known;
        cg.subscribed_metadata = std::move(metadata);
    }
    cg.subscribed_metadata_known = true;
    if (bump) {
        ++cg.group_epoch;
    }
    if (cg.group_epoch > cg.assignment_epoch) {
        update_target_assignment(*g, topics);
    }

    // ---- reconcile the member towards its target ----
    const auto before = m->assigned;
    const auto before_epoch = m->member_epoch;
    const auto before_state = m->state;
    const std::string self = m->id;
    held_elsewhere_fn held = [&cg, &self](const protocol::uuid& t, int32_t p) {
        const consumer_member* o = cg.owner(t, p);
        return o && o->id != self;
    };
    reconcile(*m, cg.assignment_epoch, cg.target[m->id], req.owned, held);
    if (m->state == member_state::unrevoked_partitions) {
        if (before_state != member_state::unrevoked_partitions) {
            m->revocation_deadline = now + time_ms(std::max(m->rebalance_timeout_ms, 0));
        }
    } else {
        m->revocation_deadline = time_ms(0);
    }
    arm_consumer_timer(*g, *m);

    consumer_heartbeat_result r;
    r.member_id = m->id;
    r.member_epoch = m->member_epoch;
    r.heartbeat_interval_ms = settings.consumer_heartbeat_interval_ms;
    if (full_request || m->assigned != before) {
        r.assignment = m->assigned;
    }
    if (bump || m->assigned != before || m->member_epoch != before_epoch ||
        m->state != before_state || req.member_epoch == join_epoch) {
        store_consumer_group(*g, {m->id}, {});
        mark_snapshot_dirty();
    }
    return r;
}

consumer_group_description group_coordinator::describe_consumer_group(
    const std::string& group_id) const {
    consumer_group_description d;
    d.group_id = group_id;
    if (auto ec = availability()) {
        d.error = ec;
        return d;
    }
    const group* g = find_group(group_id);
    if (!g || g->state() == group_state::dead) {
        d.error = errc::group_id_not_found;
        d.error_message = "Group " + group_id + " not found.";
        return d;
    }
    const consumer_group_data* cg = g->consumer();
    if (!cg) {
        d.error = errc::group_id_not_found;
        d.error_message = "Group " + group_id + " is not a consumer group.";
        return d;
    }
    d.state = std::string(to_string(cg->state()));
    d.group_epoch = cg->group_epoch;
    d.assignment_epoch = cg->assignment_epoch;
    d.assignor = cg->assignor.empty() && !_config.consumer_assignors.empty()
                     ? _config.consumer_assignors.front()
                     : cg->assignor;
    for (const auto& [id, m] : cg->members) {
        d.members.push_back(m);
    }
    for (const auto& [id, t] : cg->target) {
        d.targets[id] = t;
    }
    return d;
}

}  // namespace spool::broker::coordinator
