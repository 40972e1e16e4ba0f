// ShareGroupHeartbeat / ShareGroupDescribe on the coordinator: the availability and group-type
// checks; the membership rules are share_groups' (share_group.h).

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
    return _share_groups.heartbeat(std::move(req), _clock.now(), _config.share);
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

}  // namespace spool::broker::coordinator
