#pragma once

// Gauges computed from the read-only views at scrape time, so nothing on the produce, fetch or
// commit path pays for them:
//
//   spool_broker_info{version}                         1 (identifies the build)
//   spool_broker_start_time_seconds                    Unix time the broker started
//   spool_broker_ready                                 1 ready, 0 not (same as /readyz)
//   spool_cluster_brokers                              live brokers
//   spool_cluster_topics / spool_cluster_partitions    totals
//   spool_cluster_leaderless_partitions                no leader
//   spool_cluster_offline_partitions                   no leader and no live ISR member
//   spool_cluster_under_min_isr_partitions             ISR smaller than min.insync.replicas
//   spool_broker_partitions                            replicas hosted on this broker
//   spool_broker_partition_leaders                     partitions this broker leads
//   spool_broker_under_replicated_partitions           led here, ISR smaller than replicas
//   spool_cluster_under_replicated_partitions          ISR smaller than replicas
//   spool_controller_active                            1 when this broker is the controller
//   spool_partition_under_replicated{topic,partition}  1, only for partitions in that state
//   spool_partition_under_min_isr{topic,partition}     1, only for partitions in that state
//   spool_partition_offline{topic,partition}           1, only for partitions in that state
//   spool_broker_leader_elections_total                counters from partition_changes.h
//   spool_broker_isr_shrinks_total / _expands_total
//   spool_log_size_bytes{topic,partition}              per local partition log
//   spool_log_start_offset{topic,partition}
//   spool_log_end_offset{topic,partition}
//   spool_log_high_watermark{topic,partition}
//   spool_log_segments{topic,partition}
//   spool_consumer_groups                              groups coordinated here
//   spool_consumer_group_members{group}
//   spool_consumer_group_lag{group,topic,partition}    high watermark - committed offset
//
// Lag is only computed for partitions whose log is on this broker (all of them on a single
// broker); a cluster-wide lag needs remote high watermarks and will come with replication.
//
// Threading: Collect() runs on the HTTP thread; the views promise snapshot semantics.
// Lifecycle: holds raw pointers to the views; any may be null (its gauges are omitted).

#include "broker/http/partition_changes.h"
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
    // Scrape-to-scrape state behind the election and ISR counters.
    mutable partition_changes _changes;
};

}  // namespace spool::broker::http
