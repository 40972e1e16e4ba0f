// ShareGroupHeartbeat / ShareGroupDescribe and the share-group admin APIs on the coordinator:
// the availability and group-type checks; the rules are share_groups' (share_group.h).

#include "broker/coordinator/errc.h"
#include "broker/coordinator/group_coordinator.h"

namespace spool::broker::coordinator {

share_heartbeat_result group_coordinator::share_heartbeat(share_heartbeat_request req) {
    share_heartbeat_result r;
    if (auto ec = availability()) {
        r.error = ec;
        return r;
    }
    // Kafka: a classic or consumer group of this id is not a share group.
    if (find_group(req.group_id) != nullptr) {
        r.error = errc::group_id_not_found;
        r.error_message = "Group " + req.group_id + " is not a share group.";
        return r;
    }
    auto cfg = _config.share;
    const auto settings = settings_of(req.group_id);
    cfg.session_timeout_ms = settings.share_session_timeout_ms;
    cfg.heartbeat_interval_ms = settings.share_heartbeat_interval_ms;
    return _share_groups.heartbeat(std::move(req), _clock.now(), cfg);
}

share_group_description group_coordinator::describe_share_group(const std::string& group_id) {
    share_group_description d;
    d.group_id = group_id;
    if (auto ec = availability()) {
        d.error = ec;
        return d;
    }
    _share_groups.expire(_clock.now());
    if (find_group(group_id) != nullptr) {
        d.error = errc::group_id_not_found;
        d.error_message = "Group " + group_id + " is not a share group.";
        d.state = "Dead";
        return d;
    }
    return _share_groups.describe(group_id);
}

namespace {

// Kafka's shareGroup(groupId) lookup: a classic or consumer group of the id is not a share group.
template <class Fn>
share_offsets_scope share_checked(std::error_code unavailable, bool other_kind,
                                  const std::string& group_id, Fn fn) {
    share_offsets_scope s;
    if (unavailable) {
        s.error = unavailable;
        return s;
    }
    if (other_kind) {
        s.error = errc::group_id_not_found;
        s.error_message = "Group " + group_id + " is not a share group.";
        return s;
    }
    return fn();
}

}  // namespace

share_offsets_scope group_coordinator::share_initialized_partitions(std::string group_id) {
    return share_checked(availability(), find_group(group_id) != nullptr, group_id,
                         [&] { return _share_groups.initialized(group_id); });
}

share_offsets_scope group_coordinator::share_alter_offsets(share_alter_request req) {
    _share_groups.expire(_clock.now());
    return share_checked(availability(), find_group(req.group_id) != nullptr, req.group_id,
                         [&] { return _share_groups.alter(req); });
}

share_offsets_scope group_coordinator::share_offsets_to_delete(share_topics_request req) {
    _share_groups.expire(_clock.now());
    return share_checked(availability(), find_group(req.group_id) != nullptr, req.group_id,
                         [&] { return _share_groups.offsets_of(req); });
}

share_offsets_scope group_coordinator::share_forget_offsets(share_topics_request req) {
    return share_checked(availability(), false, req.group_id, [&] {
        _share_groups.forget(req);
        return share_offsets_scope{};
    });
}

share_offsets_scope group_coordinator::share_prepare_delete(std::string group_id) {
    _share_groups.expire(_clock.now());
    // A classic or consumer group of the id: not ours to answer (share_group stays false).
    return share_checked(availability(), false, group_id,
                         [&] { return _share_groups.prepare_delete(group_id); });
}

share_offsets_scope group_coordinator::share_remove_group(std::string group_id) {
    _share_groups.expire(_clock.now());
    return share_checked(availability(), false, group_id, [&] {
        share_offsets_scope s;
        s.share_group = true;
        s.error = _share_groups.remove(group_id);
        return s;
    });
}

}  // namespace spool::broker::coordinator
