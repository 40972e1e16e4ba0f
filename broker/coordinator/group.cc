#include "broker/coordinator/group.h"

#include "broker/coordinator/consumer_protocol.h"

#include <algorithm>
#include <cctype>

namespace spool::broker::coordinator {

std::string_view to_string(group_state s) noexcept {
    switch (s) {
        case group_state::empty:
            return "Empty";
        case group_state::preparing_rebalance:
            return "PreparingRebalance";
        case group_state::completing_rebalance:
            return "CompletingRebalance";
        case group_state::stable:
            return "Stable";
        case group_state::dead:
            return "Dead";
    }
    return "Unknown";
}

std::optional<group_state> parse_group_state(std::string_view s) noexcept {
    for (auto st : {group_state::empty, group_state::preparing_rebalance,
                    group_state::completing_rebalance, group_state::stable, group_state::dead}) {
        auto name = to_string(st);
        if (name.size() == s.size() &&
            std::equal(name.begin(), name.end(), s.begin(), [](char a, char b) {
                return std::tolower(static_cast<unsigned char>(a)) ==
                       std::tolower(static_cast<unsigned char>(b));
            })) {
            return st;
        }
    }
    return std::nullopt;
}

const bytes* group_member::metadata_for(std::string_view protocol) const {
    for (const auto& p : protocols) {
        if (p.name == protocol) {
            return &p.metadata;
        }
    }
    return nullptr;
}

bool group_member::matches(const std::vector<join_protocol>& other) const {
    return std::equal(protocols.begin(), protocols.end(), other.begin(), other.end(),
                      [](const join_protocol& a, const join_protocol& b) {
                          return a.name == b.name && a.metadata == b.metadata;
                      });
}

group::group(std::string id, time_ms now) : _id(std::move(id)), _state_timestamp(now) {}

void group::transition(group_state to, time_ms now) {
    _state = to;
    _state_timestamp = now;
}

group_member* group::find_member(std::string_view id) {
    auto it = _members.find(id);
    return it == _members.end() ? nullptr : &it->second;
}

group_member& group::add_member(group_member m) {
    m.seq = _next_seq++;
    if (!_leader) {
        _leader = m.id;
    }
    if (m.instance_id) {
        _static_members[*m.instance_id] = m.id;
    }
    std::string id = m.id;
    return _members.insert_or_assign(std::move(id), std::move(m)).first->second;
}

group_member group::remove_member(std::string_view id) {
    auto it = _members.find(id);
    group_member m = std::move(it->second);
    _members.erase(it);
    if (m.instance_id) {
        auto s = _static_members.find(*m.instance_id);
        if (s != _static_members.end() && s->second == m.id) {
            _static_members.erase(s);
        }
    }
    if (is_leader(m.id)) {
        _leader.reset();
        const group_member* oldest = nullptr;
        for (const auto& [_, other] : _members) {
            if (!oldest || other.seq < oldest->seq) {
                oldest = &other;
            }
        }
        if (oldest) {
            _leader = oldest->id;
        }
    }
    return m;
}

std::optional<std::string> group::static_member(std::string_view instance_id) const {
    auto it = _static_members.find(instance_id);
    if (it == _static_members.end()) {
        return std::nullopt;
    }
    return it->second;
}

group_member& group::replace_static_member(std::string_view old_id, const std::string& new_id) {
    auto node = _members.extract(_members.find(old_id));
    node.key() = new_id;
    node.mapped().id = new_id;
    if (node.mapped().instance_id) {
        _static_members[*node.mapped().instance_id] = new_id;
    }
    if (is_leader(old_id)) {
        _leader = new_id;
    }
    return _members.insert(std::move(node)).position->second;
}

bool group::supports_protocols(std::string_view protocol_type,
                               const std::vector<join_protocol>& protocols) const {
    if (_members.empty()) {
        return !protocol_type.empty() && !protocols.empty();
    }
    if (!_protocol_type || *_protocol_type != protocol_type) {
        return false;
    }
    return std::any_of(protocols.begin(), protocols.end(), [&](const join_protocol& p) {
        return std::all_of(_members.begin(), _members.end(),
                           [&](const auto& kv) { return kv.second.metadata_for(p.name); });
    });
}

std::string group::select_protocol() const {
    if (_members.empty()) {
        return {};
    }
    // Candidates in the leader's order of preference (the tie-break).
    const group_member* leader = nullptr;
    if (_leader) {
        auto it = _members.find(*_leader);
        leader = it == _members.end() ? nullptr : &it->second;
    }
    if (!leader) {
        leader = &_members.begin()->second;
    }
    std::vector<std::string> candidates;
    for (const auto& p : leader->protocols) {
        if (std::all_of(_members.begin(), _members.end(),
                        [&](const auto& kv) { return kv.second.metadata_for(p.name); })) {
            candidates.push_back(p.name);
        }
    }
    if (candidates.empty()) {
        return {};
    }
    std::vector<size_t> votes(candidates.size(), 0);
    for (const auto& [_, m] : _members) {
        for (const auto& p : m.protocols) {
            auto it = std::find(candidates.begin(), candidates.end(), p.name);
            if (it != candidates.end()) {
                ++votes[static_cast<size_t>(it - candidates.begin())];
                break;
            }
        }
    }
    auto best = std::max_element(votes.begin(), votes.end());  // first of equals: leader order
    return candidates[static_cast<size_t>(best - votes.begin())];
}

size_t group::awaiting_join_count() const {
    return static_cast<size_t>(std::count_if(_members.begin(), _members.end(), [](const auto& kv) {
        return kv.second.is_awaiting_join();
    }));
}

bool group::all_members_joined() const {
    return _pending.empty() && awaiting_join_count() == _members.size();
}

int32_t group::max_rebalance_timeout_ms() const {
    int32_t t = 0;
    for (const auto& [_, m] : _members) {
        t = std::max(t, m.rebalance_timeout_ms);
    }
    return t;
}

std::optional<std::set<std::string>> group::subscribed_topics() const {
    if (!_protocol_type || *_protocol_type != consumer_protocol_type || !_protocol_name) {
        return std::nullopt;
    }
    std::set<std::string> topics;
    for (const auto& [_, m] : _members) {
        const bytes* md = m.metadata_for(*_protocol_name);
        if (!md) {
            return std::nullopt;
        }
        auto parsed = parse_subscription_topics(*md);
        if (!parsed) {
            return std::nullopt;
        }
        topics.insert(parsed->begin(), parsed->end());
    }
    return topics;
}

}  // namespace spool::broker::coordinator
