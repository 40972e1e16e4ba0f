#pragma once

// Metrics whose value is read by a callback at scrape time. This lets a module keep its own
// plain-atomic probe with no prometheus-cpp dependency (broker/net's net::probe does) while
// the metric names stay defined here. export_net_counters() is the mapping for broker/net.
//
// Lifecycle: the registry owns the callbacks; whatever they read must stay alive while the
// HTTP endpoint can scrape, i.e. until the HTTP service has stopped. Threading: callbacks
// run on the HTTP thread and must be safe there (relaxed atomic loads are).

#include "broker/metrics/registry.h"

#include <functional>
#include <string>

namespace spool::broker::metrics {

enum class callback_kind : uint8_t { counter, gauge };

// Registers one unlabelled metric read through `read` at each scrape.
void add_callback_metric(registry& reg, std::string name, std::string help, callback_kind kind,
                         std::function<double()> read);

// broker/net's counters, each read by a callback:
//   spool_broker_active_connections              gauge
//   spool_broker_connections_total               counter (accepted)
//   spool_broker_malformed_requests_total        counter (frames refused as malformed)
//   spool_broker_network_received_bytes_total    counter
//   spool_broker_network_sent_bytes_total        counter
struct net_counter_source {
    std::function<double()> connections_active;
    std::function<double()> connections_accepted;
    std::function<double()> malformed_requests;
    std::function<double()> bytes_received;
    std::function<double()> bytes_sent;
};
void export_net_counters(registry& reg, net_counter_source source);

// The incremental fetch session cache's counters (KIP-227; broker/handlers/fetch_sessions.h):
//   spool_broker_fetch_sessions                              gauge (live sessions)
//   spool_broker_fetch_sessions_created_total                counter
//   spool_broker_fetch_session_evictions_total               counter
//   spool_broker_fetch_session_invalid_epoch_total           counter (INVALID_FETCH_SESSION_EPOCH)
//   spool_broker_fetch_session_not_found_total               counter (FETCH_SESSION_ID_NOT_FOUND)
struct fetch_session_counter_source {
    std::function<double()> live;
    std::function<double()> created;
    std::function<double()> evicted;
    std::function<double()> invalid_epoch;
    std::function<double()> not_found;
};
void export_fetch_session_counters(registry& reg, fetch_session_counter_source source);

// Transactions (docs/metrics.md "Broker: transactions"). In the logs this broker leads:
//   spool_transactions_open                        gauge (transactions with records and no marker)
//   spool_transactions_oldest_open_seconds         gauge (since the last write of the open
//                                                  transaction written longest ago; 0: none)
// As transaction coordinator (the __transaction_state partitions it leads):
//   spool_transaction_coordinator_ongoing          gauge (Ongoing, PrepareCommit, PrepareAbort)
//   spool_transactions_committed_total             counter
//   spool_transactions_aborted_total               counter (by the producer or the coordinator)
//   spool_transactions_timed_out_total             counter (aborted past transaction.timeout.ms)
// A source left empty registers nothing.
struct transaction_source {
    std::function<double()> open_in_logs;
    std::function<double()> oldest_open_seconds;
    std::function<double()> coordinator_ongoing;
    std::function<double()> committed;
    std::function<double()> aborted;
    std::function<double()> timed_out;
};
void export_transaction_metrics(registry& reg, transaction_source source);

}  // namespace spool::broker::metrics
