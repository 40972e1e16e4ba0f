#include "broker/metrics/cluster_metrics.h"

#include "broker/metrics/registry.h"
#include "broker/metrics/tests/scrape.h"

#include <gtest/gtest.h>

#include <atomic>

namespace spool::broker::metrics {
namespace {

using namespace std::chrono_literals;
using testing::sample;

TEST(etcd_request_probe, test_requests_count_by_operation_and_outcome_with_latency) {
    registry reg;
    etcd_request_probe probe(reg);
    probe.request_done("txn", "ok", 2ms);
    probe.request_done("txn", "ok", 4ms);
    probe.request_done("txn", "unavailable", 3s);
    probe.request_done("lease_keep_alive", "lease_not_found", 1ms);
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, R"(spool_etcd_requests_total{operation="txn",outcome="ok"})"), 2.0);
    EXPECT_EQ(sample(text, R"(spool_etcd_requests_total{operation="txn",outcome="unavailable"})"),
              1.0);
    EXPECT_EQ(sample(text, R"(spool_etcd_requests_total{operation="lease_keep_alive",)"
                           R"(outcome="lease_not_found"})"),
              1.0);
    EXPECT_EQ(sample(text, R"(spool_etcd_requests_total{operation="put",outcome="ok"})"),
              std::nullopt);
    EXPECT_EQ(sample(text, R"(spool_etcd_request_duration_seconds_count{operation="txn"})"), 3.0);
    EXPECT_NEAR(*sample(text, R"(spool_etcd_request_duration_seconds_sum{operation="txn"})"), 3.006,
                1e-9);
    // 2 ms and 4 ms are under 5 ms; the 3 s failover is not under 2.5 s.
    EXPECT_EQ(
        sample(text, R"(spool_etcd_request_duration_seconds_bucket{operation="txn",le="0.005"})"),
        2.0);
    EXPECT_EQ(
        sample(text, R"(spool_etcd_request_duration_seconds_bucket{operation="txn",le="2.5"})"),
        2.0);
    EXPECT_EQ(
        sample(text, R"(spool_etcd_request_duration_seconds_bucket{operation="txn",le="+Inf"})"),
        3.0);
    EXPECT_NE(text.find("# TYPE spool_etcd_requests_total counter"), std::string::npos);
    EXPECT_NE(text.find("# TYPE spool_etcd_request_duration_seconds histogram"), std::string::npos);
}

TEST(cluster_metrics, test_readers_are_exported_with_their_names_and_types_at_scrape_time) {
    registry reg;
    std::atomic<int> events{3};
    std::atomic<session_state> state{session_state::registered};
    export_cluster_metrics(reg,
                           {.last_response_age_seconds = [] { return 1.5; },
                            .watch_events_applied = [&events] { return double(events.load()); },
                            .applied_revision = [] { return 42.0; },
                            .reloads = [] { return 1.0; },
                            .session = [&state] { return state.load(); },
                            .may_lead = [] { return 1.0; },
                            .reregistrations = [] { return 2.0; },
                            .elections_won = [] { return 1.0; },
                            .controller_txns = [] { return 7.0; },
                            .controller_compare_failures = [] { return 3.0; },
                            .preferred_elections = [] { return 4.0; }});
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, "spool_etcd_last_response_age_seconds"), 1.5);
    EXPECT_EQ(sample(text, "spool_metadata_watch_events_total"), 3.0);
    EXPECT_EQ(sample(text, "spool_metadata_applied_revision"), 42.0);
    EXPECT_EQ(sample(text, "spool_metadata_reloads_total"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="registered"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="expired"})"), 0.0);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="unregistered"})"), 0.0);
    EXPECT_EQ(sample(text, "spool_broker_session_may_lead"), 1.0);
    EXPECT_EQ(sample(text, "spool_broker_session_reregistrations_total"), 2.0);
    EXPECT_EQ(sample(text, "spool_controller_elections_won_total"), 1.0);
    EXPECT_EQ(sample(text, "spool_controller_txns_total"), 7.0);
    EXPECT_EQ(sample(text, "spool_controller_txn_compare_failures_total"), 3.0);
    EXPECT_EQ(sample(text, "spool_controller_preferred_elections_total"), 4.0);
    for (const char* counter :
         {"spool_metadata_watch_events_total", "spool_metadata_reloads_total",
          "spool_broker_session_reregistrations_total", "spool_controller_elections_won_total",
          "spool_controller_txns_total", "spool_controller_txn_compare_failures_total",
          "spool_controller_preferred_elections_total"}) {
        EXPECT_NE(text.find(std::string("# TYPE ") + counter + " counter"), std::string::npos)
            << counter;
    }
    EXPECT_NE(text.find("# TYPE spool_broker_session_state gauge"), std::string::npos);

    // Read again at the next scrape, not copied at export.
    events = 9;
    state = session_state::expired;
    text = to_text(reg.collect());
    EXPECT_EQ(sample(text, "spool_metadata_watch_events_total"), 9.0);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="expired"})"), 1.0);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="registered"})"), 0.0);
}

TEST(cluster_metrics, test_an_unset_reader_exports_nothing) {
    registry reg;
    cluster_metrics_source only_revision;
    only_revision.applied_revision = [] { return 5.0; };
    export_cluster_metrics(reg, std::move(only_revision));
    auto text = to_text(reg.collect());
    EXPECT_EQ(sample(text, "spool_metadata_applied_revision"), 5.0);
    EXPECT_EQ(text.find("spool_broker_session_state"), std::string::npos);
    EXPECT_EQ(text.find("spool_controller_txns_total"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::metrics
