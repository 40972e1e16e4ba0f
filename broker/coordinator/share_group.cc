#include "broker/coordinator/share_group.h"

#include "broker/coordinator/errc.h"

#include <algorithm>

namespace spool::broker::coordinator {

namespace {

share_heartbeat_result fail(std::error_code ec, std::string message = {}) {
    share_heartbeat_result r;
    r.error = ec;
    r.error_message = std::move(message);
    return r;
}

int32_t next_epoch(int32_t e) { return e == INT32_MAX ? 1 : e + 1; }

// The subscribed topics that exist, with their partition counts.
std::map<std::string, int32_t, std::less<>> subscribed_metadata(const share_group_data& g,
                                                                const topic_image& topics) {
    std::map<std::string, int32_t, std::less<>> out;
    for (const auto& [id, m] : g.members) {
        for (const auto& name : m.subscribed_topic_names) {
            auto it = topics.by_name.find(name);
            if (it != topics.by_name.end() && !it->second.internal) {
                out[name] = it->second.partitions;
            }
        }
    }
    return out;
}

}  // namespace

void share_groups::reassign(share_group_data& g, const topic_image& topics) {
    for (auto& [id, m] : g.members) {
        m.assigned.clear();
    }
    // Per topic, the members subscribed to it (by id order, the map's) share its partitions.
    for (const auto& [name, count] : g.subscribed_metadata) {
        const auto& topic_id = topics.by_name.find(name)->second.id;
        std::vector<share_member*> subscribers;
        for (auto& [id, m] : g.members) {
            if (std::binary_search(m.subscribed_topic_names.begin(),
                                   m.subscribed_topic_names.end(), name)) {
                subscribers.push_back(&m);
            }
        }
        if (subscribers.empty() || count <= 0) {
            continue;
        }
        const auto n = static_cast<int32_t>(subscribers.size());
        if (n <= count) {
            for (int32_t p = 0; p < count; ++p) {
                subscribers[static_cast<size_t>(p % n)]->assigned[topic_id].insert(p);
            }
        } else {
            for (int32_t i = 0; i < n; ++i) {
                subscribers[static_cast<size_t>(i)]->assigned[topic_id].insert(i % count);
            }
        }
        // Either way every partition of the topic has a member now.
        auto& known = g.initialized[topic_id];
        for (int32_t p = 0; p < count; ++p) {
            known.insert(p);
        }
    }
    g.assignment_epoch = g.group_epoch;
}

share_heartbeat_result share_groups::heartbeat(share_heartbeat_request req, time_ms now,
                                               const share_config& cfg) {
    // Kafka's throwIfShareGroupHeartbeatRequestIsInvalid.
    if (req.group_id.empty()) {
        return fail(errc::invalid_request, "GroupId can't be empty.");
    }
    if (req.member_id.empty()) {
        return fail(errc::invalid_request, "MemberId can't be empty.");
    }
    if (req.rack_id && req.rack_id->empty()) {
        return fail(errc::invalid_request, "RackId can't be empty.");
    }
    if (req.member_epoch < leave_epoch) {
        return fail(errc::invalid_request, "MemberEpoch is invalid.");
    }
    if (req.member_epoch == join_epoch &&
        (!req.subscribed_topic_names || req.subscribed_topic_names->empty())) {
        return fail(errc::invalid_request, "SubscribedTopicNames must be set in first request.");
    }
    if (req.topics) {
        _last_topics = req.topics;
    }
    const topic_image empty_image;
    const topic_image& topics = _last_topics ? *_last_topics : empty_image;
    expire(now);

    if (req.member_epoch == leave_epoch) {
        auto git = _groups.find(req.group_id);
        if (git == _groups.end() || !git->second.members.contains(req.member_id)) {
            return fail(errc::unknown_member_id);
        }
        auto& g = git->second;
        g.members.erase(req.member_id);
        g.group_epoch = next_epoch(g.group_epoch);
        g.subscribed_metadata = subscribed_metadata(g, topics);
        reassign(g, topics);
        share_heartbeat_result r;
        r.member_id = req.member_id;
        r.member_epoch = leave_epoch;
        r.heartbeat_interval_ms = cfg.heartbeat_interval_ms;
        return r;
    }

    share_group_data* group = nullptr;
    if (req.member_epoch == join_epoch) {
        group = &_groups[req.group_id];
    } else {
        auto git = _groups.find(req.group_id);
        if (git == _groups.end()) {
            return fail(errc::unknown_member_id);
        }
        group = &git->second;
    }
    auto& g = *group;
    auto mit = g.members.find(req.member_id);
    bool changed = false;
    if (mit == g.members.end()) {
        if (req.member_epoch != join_epoch) {
            return fail(errc::unknown_member_id);
        }
        if (static_cast<int32_t>(g.members.size()) >= cfg.max_size) {
            return fail(errc::group_max_size_reached,
                        "The share group has reached its maximum capacity of " +
                            std::to_string(cfg.max_size) + " members.");
        }
        mit = g.members.emplace(req.member_id, share_member{}).first;
        mit->second.id = req.member_id;
        changed = true;
    } else if (req.member_epoch != join_epoch && req.member_epoch != mit->second.member_epoch) {
        return fail(errc::fenced_member_epoch,
                    "The share group member has a smaller member epoch (" +
                        std::to_string(req.member_epoch) + ") than the one known by the group "
                        "coordinator (" + std::to_string(mit->second.member_epoch) + ").");
    }
    auto& m = mit->second;
    if (req.rack_id) {
        m.rack_id = req.rack_id;
    }
    m.client_id = std::move(req.client_id);
    m.client_host = std::move(req.client_host);
    if (req.subscribed_topic_names) {
        auto names = std::move(*req.subscribed_topic_names);
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        if (names != m.subscribed_topic_names) {
            m.subscribed_topic_names = std::move(names);
            changed = true;
        }
    }
    m.session_deadline = now + std::chrono::milliseconds(cfg.session_timeout_ms);
    auto metadata = subscribed_metadata(g, topics);
    if (metadata != g.subscribed_metadata) {
        g.subscribed_metadata = std::move(metadata);
        changed = true;
    }
    if (changed) {
        g.group_epoch = next_epoch(g.group_epoch);
    }
    if (g.assignment_epoch != g.group_epoch) {
        reassign(g, topics);
    }
    // A member learns of the new assignment (and epoch) at its own next heartbeat; until then
    // it keeps the epoch it was last told, which its heartbeats carry.
    const int32_t told = m.member_epoch;
    m.member_epoch = g.assignment_epoch;
    share_heartbeat_result r;
    r.member_id = m.id;
    r.member_epoch = m.member_epoch;
    r.heartbeat_interval_ms = cfg.heartbeat_interval_ms;
    // The assignment travels on a join and whenever the member's epoch moved.
    if (told != m.member_epoch || req.member_epoch == join_epoch || req.subscribed_topic_names) {
        r.assignment = m.assigned;
    }
    return r;
}

void share_groups::expire(time_ms now) {
    const topic_image empty_image;
    const topic_image& topics = _last_topics ? *_last_topics : empty_image;
    for (auto& [id, g] : _groups) {
        bool removed = false;
        for (auto it = g.members.begin(); it != g.members.end();) {
            if (it->second.session_deadline <= now) {
                it = g.members.erase(it);
                removed = true;
            } else {
                ++it;
            }
        }
        if (removed) {
            g.group_epoch = next_epoch(g.group_epoch);
            g.subscribed_metadata = subscribed_metadata(g, topics);
            reassign(g, topics);
        }
    }
}

std::optional<time_ms> share_groups::next_deadline() const {
    std::optional<time_ms> best;
    for (const auto& [id, g] : _groups) {
        for (const auto& [mid, m] : g.members) {
            if (!best || m.session_deadline < *best) {
                best = m.session_deadline;
            }
        }
    }
    return best;
}

bool share_groups::contains(std::string_view group_id) const {
    return _groups.find(group_id) != _groups.end();
}

std::vector<std::pair<std::string, std::string>> share_groups::list() const {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [id, g] : _groups) {
        out.emplace_back(id, g.members.empty() ? "Empty" : "Stable");
    }
    return out;
}

share_group_description share_groups::describe(const std::string& group_id) const {
    share_group_description d;
    d.group_id = group_id;
    auto it = _groups.find(group_id);
    if (it == _groups.end()) {
        d.error = errc::group_id_not_found;
        d.error_message = "Group " + group_id + " not found.";
        d.state = "Dead";
        return d;
    }
    const auto& g = it->second;
    d.state = g.members.empty() ? "Empty" : "Stable";
    d.group_epoch = g.group_epoch;
    d.assignment_epoch = g.assignment_epoch;
    for (const auto& [mid, m] : g.members) {
        d.members.push_back(m);
    }
    return d;
}

}  // namespace spool::broker::coordinator
