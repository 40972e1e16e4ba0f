#pragma once

// Replication health series (docs/metrics.md "Broker: replication"). broker/metadata/
// partition_health_metrics.h computes them from the broker's metadata snapshot; this file only
// names and serves them:
//
//   spool_partition_under_min_isr{topic,partition}     gauge    0/1: ISR < effective min ISR
//   spool_partition_isr_size{topic,partition}          gauge    in-sync replicas
//   spool_partition_replicas{topic,partition}          gauge    assigned replicas
//   spool_partitions_under_replicated                  gauge    led here and under-replicated
//   spool_partitions_leader                            gauge    partitions led here
//   spool_cluster_offline_partitions                   gauge    placed, leader -1 (controller)
//   spool_cluster_preferred_leader_imbalance           gauge    leader is not the first replica
//                                                               (controller)
//   spool_partition_isr_shrinks_total                  counter  ISR got smaller, led here
//   spool_partition_isr_expands_total                  counter  ISR got larger, led here
//   spool_partition_leader_elections_total             counter  leader changes (controller)
//
// Under-replicated per partition is isr_size < replicas; only its count is a series of its own
// (the alert's), so the scrape of 10,000 led partitions carries three series each, not four.
//
// The per-partition series exist only for partitions this broker leads, so their number is
// bounded by the leaderships and every partition has exactly one set of them in a cluster (sum
// across brokers without double counting). A partition that moves away loses its series at the
// next scrape. The two cluster gauges and the election counter are counted by the active
// controller only and stay 0 on every other broker, as Kafka's controller gauges do: every
// broker serves the same families, so a query never meets a missing series when the controller
// moves.
//
// Lifecycle: the registry keeps the readers; whatever they read must outlive the HTTP endpoint.
// Threading: readers run on the HTTP thread at scrape time.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace spool::broker::metrics {

class registry;

struct led_partition {
    std::string topic;
    int32_t partition = 0;
    int32_t replicas = 0;
    int32_t isr = 0;
    bool under_replicated = false;
    bool under_min_isr = false;
};

struct partition_health_report {
    std::vector<led_partition> led;  // the partitions this broker leads
    // Counted by the active controller, 0 elsewhere.
    int64_t offline = 0;
    int64_t preferred_leader_imbalance = 0;
};

struct partition_health_source {
    std::function<partition_health_report()> report;
    std::function<double()> isr_shrinks;
    std::function<double()> isr_expands;
    std::function<double()> leader_elections;
};

void export_partition_health_metrics(registry& reg, partition_health_source source);

}  // namespace spool::broker::metrics
