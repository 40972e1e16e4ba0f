#include "broker/cluster/partition_wiring.h"

#include "broker/cluster/leader_endpoints.h"

namespace spool::broker::cluster {

std::unique_ptr<replication::replica_fetchers> wire_replica_fetchers(
    runtime::shard_pool& pool, const config::broker_config& config, const metadata::store& store,
    partition_manager& partitions, metrics::replica_fetcher_probe* probe, std::string listener,
    replication::leader_security security, std::function<void(int32_t)> leader_lost) {
    auto options = replication::fetcher_options_from(config);
    options.security = std::move(security);
    options.leader_lost = std::move(leader_lost);
    auto fetchers = std::make_unique<replication::replica_fetchers>(
        pool, std::move(options),
        config.get(config::keys::num_replica_fetchers),
        [partitions = &partitions](const model::topic_partition& tp) {
            return partitions->partition_here(tp);
        },
        leader_endpoints(store, std::move(listener)),
        probe);
    partitions.set_role_listener(
        [fetchers = fetchers.get()](const model::topic_partition& tp,
                                    replication::partition_role role, int32_t leader,
                                    int32_t epoch) { fetchers->on_role(tp, role, leader, epoch); });
    return fetchers;
}

}  // namespace spool::broker::cluster
