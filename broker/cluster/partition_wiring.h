#pragma once

// The role-to-fetcher wiring of this broker's partitions: followers pull from their leaders, so
// the replica fetchers are the partition manager's role listener and hear of every role change
// from open_all() on. A fetcher finds a partition through partition_manager::partition_here()
// and reaches its leader at the endpoint leader_endpoints() reads from the store's snapshot.
//
// Lifecycle: after the partition manager is built, before its open_all(). The caller stops the
// fetchers before partition_manager::close_all() (replication/replica_fetchers.h).
// Threading: from the thread that builds the broker (broker_app::start()).

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/metadata/store.h"
#include "broker/metrics/replica_fetcher_probe.h"
#include "broker/replication/replica_fetchers.h"
#include "broker/runtime/shard_pool.h"

#include <memory>
#include <string>

namespace spool::broker::cluster {

// Builds the replica fetchers over `partitions` (num.replica.fetchers, the fetcher options of
// `config`, the leaders' endpoints of `listener`, the inter-broker listener, connected to with
// `security`) and sets them as its role listener. probe may be nullptr (no metrics);
// leader_lost hears of every lost or refused connection to a leader (dead_broker_probe.h),
// empty: nobody.
std::unique_ptr<replication::replica_fetchers> wire_replica_fetchers(
    runtime::shard_pool& pool, const config::broker_config& config, const metadata::store& store,
    partition_manager& partitions, metrics::replica_fetcher_probe* probe, std::string listener,
    replication::leader_security security, std::function<void(int32_t)> leader_lost = {});

}  // namespace spool::broker::cluster
