#include "broker/handlers/share_partitions.h"

#include "broker/config/group_config.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/partition_call.h"
#include "broker/handlers/services.h"
#include "common/log.h"
#include "broker/handlers/share_persist.h"
#include "broker/handlers/share_state_errors.h"

namespace spool::broker::handlers {

replication::share_limits share_limits_of(const services& svc, const std::string& group) {
    auto snap = svc.store.snapshot();
    auto it = snap->group_configs.find(group);
    auto s = config::broker_group_settings(svc.config);
    if (it != snap->group_configs.end()) {
        s = config::resolve_group(std::move(s), it->second);
    }
    replication::share_limits l;
    l.lock_duration_ms = s.share_record_lock_duration_ms;
    l.delivery_count_limit = s.share_delivery_count_limit;
    l.max_record_locks = s.share_partition_max_record_locks;
    // by_duration:<d> is not applied yet: such a group starts at the latest offset.
    l.reset_earliest = s.share_auto_offset_reset == "earliest";
    return l;
}

protocol::error_code share_request_error(const services& svc, const request_authz& authz,
                                         const std::optional<std::string>& group,
                                         const std::optional<std::string>& member) {
    if (!group || group->empty() || !member || member->empty()) {
        return protocol::error_code::invalid_request;
    }
    if (svc.share_sessions == nullptr) {
        return protocol::error_code::coordinator_not_available;
    }
    if (!authz.group(security::acl_operation::read, *group)) {
        return protocol::error_code::group_authorization_failed;
    }
    return protocol::error_code::none;
}

share_target resolve_share_target(const metadata::cluster_state& snap, const share_tip& tip) {
    share_target t;
    t.tip = tip;
    const auto* topic = snap.find(tip.first);
    if (topic == nullptr || !topic->has_partition(tip.second)) {
        return t;
    }
    t.known = true;
    t.tp = model::topic_partition{topic->name, model::partition_id(tip.second)};
    const auto& p = topic->partitions[static_cast<size_t>(tip.second)];
    t.leader = p.leader;
    t.leader_epoch = p.leader_epoch;
    return t;
}

boost::asio::awaitable<protocol::error_code> share_acknowledge_on(
    services& svc, share_target target, std::string group, std::string member,
    std::vector<replication::share_ack_batch> batches) {
    if (!target.known) {
        co_return protocol::error_code::unknown_topic_id;
    }
    const auto limits = share_limits_of(svc, group);
    uint64_t version = 0;
    std::function<protocol::error_code(replication::partition*)> fn =
        [&](replication::partition* p) {
            if (p == nullptr) {
                return protocol::error_code::not_leader_or_follower;
            }
            auto r = p->share_acknowledge(group, member, batches, limits);
            if (!r) {
                return to_kafka_error(r.error());
            }
            version = r.value();
            return protocol::error_code::none;
        };
    auto e = co_await on_partition<protocol::error_code>(svc.partitions, target.tp, fn);
    if (e != protocol::error_code::none) {
        co_return e;
    }
    // Answered once the acknowledgements are durable at the share coordinator; when the write
    // carrying them fails they are rolled back to acquired (as on Kafka), so the member may
    // acknowledge them again and their lock's expiry redelivers them.
    share_state_key key{target.tp, target.tip.first};
    auto persisted = co_await share_persist(svc, key, group, version);
    if (persisted != protocol::error_code::none) {
        log::get("share")->warn(
            "acknowledgements of {} in {} not persisted, rolled back: {} (answered {})", group,
            target.tp.dir_name(), protocol::name(persisted),
            protocol::name(share_ack_error(persisted)));
    }
    co_return share_ack_error(persisted);
}

boost::asio::awaitable<void> share_release_on(services& svc, const metadata::cluster_state& snap,
                                              std::vector<share_tip> tips, std::string group,
                                              std::string member) {
    const auto limits = share_limits_of(svc, group);
    for (const auto& tip : tips) {
        auto target = resolve_share_target(snap, tip);
        if (!target.known) {
            continue;
        }
        std::function<int(replication::partition*)> fn = [&](replication::partition* p) {
            if (p != nullptr) {
                p->share_release(group, member, limits);
            }
            return 0;
        };
        co_await on_partition<int>(svc.partitions, target.tp, fn);
        share_state_key key{target.tp, target.tip.first};
        auto persisted = co_await share_persist(svc, std::move(key), group);
        if (persisted != protocol::error_code::none) {
            log::get("share")->debug("released records of {} in {} not persisted: {}", group,
                                     target.tp.dir_name(), protocol::name(persisted));
        }
    }
}

}  // namespace spool::broker::handlers
