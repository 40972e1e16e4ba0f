#pragma once

// Gauges computed from the read-only views at scrape time, so nothing on the produce, fetch or
// commit path pays for them:
//
//   spool_broker_info{version}                         1 (identifies the build)
//   spool_broker_start_time_seconds                    Unix time the broker started
//   spool_broker_ready                                 1 ready, 0 not (same as /readyz)
//   spool_cluster_brokers                              live brokers
//   spool_cluster_topics / spool_cluster_partitions    totals
//   spool_cluster_leaderless_partitions                no leader (unplaced ones included)
//   spool_broker_partitions                            replicas hosted on this broker
//   spool_controller_active                            1 when this broker is the controller
//   spool_log_size_bytes{topic,partition}              per local partition log
//   spool_log_start_offset{topic,partition}
//   spool_log_end_offset{topic,partition}
//   spool_log_segments{topic,partition}
//   spool_consumer_groups                              groups coordinated here
//   spool_consumer_group_members{group}
//   spool_consumer_group_lag{group,topic,partition}    high watermark - committed offset
//
// No high watermark series: on a leader it trails the end offset only while followers catch up
// (spool_replica_fetcher_max_lag shows that on the followers), consumers see it through
// spool_consumer_group_lag and GET /v1/topics/{name} reports it per partition; a sixth series per
// partition would be 57 bytes each, 0.6 MB of a scrape at 10,000 partitions.
//
// Replication health (under-replicated, under min ISR, offline, ISR changes, elections) is
// broker/metadata/partition_health_metrics.h's, computed from the metadata store itself.
//
// Lag is only computed for partitions whose log is on this broker (all of them on a single
// broker); a cluster-wide lag needs remote high watermarks and will come with replication.
//
// Threading: Collect() runs on the HTTP thread; the views promise snapshot semantics.
// Lifecycle: holds raw pointers to the views; any may be null (its gauges are omitted).

#include "broker/http/readiness.h"
#include "broker/http/views.h"

#include <prometheus/collectable.h>

namespace spool::broker::http {

struct metric_views {
    const cluster_view* cluster = nullptr;
    const log_view* logs = nullptr;
    const group_view* groups = nullptr;
    const readiness_provider* readiness = nullptr;
};

class view_metrics : public prometheus::Collectable {
public:
    view_metrics(broker_identity self, metric_views views)
        : _self(std::move(self)), _views(views) {}

    std::vector<prometheus::MetricFamily> Collect() const override;

private:
    broker_identity _self;
    metric_views _views;
};

}  // namespace spool::broker::http
