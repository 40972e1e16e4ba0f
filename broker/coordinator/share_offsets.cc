// The share-group admin APIs' part on the coordinator (KIP-932): which partitions a request
// covers and whether the group may be changed. The partitions' state itself lives with their
// leaders (replication/share_partition.h); the handlers reach them.

#include "broker/coordinator/errc.h"
#include "broker/coordinator/share_group.h"

namespace spool::broker::coordinator {

namespace {

share_offsets_scope failed(std::error_code ec, std::string message) {
    share_offsets_scope s;
    s.error = ec;
    s.error_message = std::move(message);
    return s;
}

share_offsets_scope not_found(const std::string& group_id) {
    return failed(errc::group_id_not_found, "Group " + group_id + " not found.");
}

share_offsets_scope not_empty(const std::string& group_id) {
    return failed(errc::non_empty_group, "Share group " + group_id + " is not empty.");
}

}  // namespace

share_offsets_scope share_groups::initialized(const std::string& group_id) const {
    auto it = _groups.find(group_id);
    if (it == _groups.end()) {
        return not_found(group_id);
    }
    share_offsets_scope s;
    s.share_group = true;
    s.partitions = it->second.initialized;
    return s;
}

share_offsets_scope share_groups::alter(const share_alter_request& req) {
    // Kafka 4.4 creates the (empty) group when it does not exist yet: offsets can be set before
    // any consumer joins.
    auto& g = _groups[req.group_id];
    if (!g.members.empty()) {
        return not_empty(req.group_id);
    }
    for (const auto& [topic, partitions] : req.partitions) {
        g.initialized[topic].insert(partitions.begin(), partitions.end());
    }
    share_offsets_scope s;
    s.share_group = true;
    s.partitions = req.partitions;
    return s;
}

share_offsets_scope share_groups::offsets_of(const share_topics_request& req) const {
    auto it = _groups.find(req.group_id);
    if (it == _groups.end()) {
        return not_found(req.group_id);
    }
    const auto& g = it->second;
    if (!g.members.empty()) {
        return not_empty(req.group_id);
    }
    share_offsets_scope s;
    s.share_group = true;
    for (const auto& topic : req.topics) {
        if (auto known = g.initialized.find(topic); known != g.initialized.end()) {
            s.partitions.emplace(topic, known->second);
        }
    }
    return s;
}

void share_groups::forget(const share_topics_request& req) {
    auto it = _groups.find(req.group_id);
    if (it == _groups.end()) {
        return;
    }
    for (const auto& topic : req.topics) {
        it->second.initialized.erase(topic);
    }
}

share_offsets_scope share_groups::prepare_delete(const std::string& group_id) const {
    auto it = _groups.find(group_id);
    if (it == _groups.end()) {
        return {};  // not a share group: the classic/consumer deletion answers
    }
    if (!it->second.members.empty()) {
        auto s = not_empty(group_id);
        s.share_group = true;
        return s;
    }
    share_offsets_scope s;
    s.share_group = true;
    s.partitions = it->second.initialized;
    return s;
}

std::error_code share_groups::remove(const std::string& group_id) {
    auto it = _groups.find(group_id);
    if (it == _groups.end()) {
        return errc::group_id_not_found;
    }
    if (!it->second.members.empty()) {
        return errc::non_empty_group;
    }
    _groups.erase(it);
    return {};
}

}  // namespace spool::broker::coordinator
