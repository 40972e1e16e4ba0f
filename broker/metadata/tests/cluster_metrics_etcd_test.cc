// The cluster metadata's metrics (cluster_metrics.h) of in-process brokers on a real etcd
// (controller_cluster.h): what each series says after real elections, writes, an expired
// session, an etcd outage and a compaction, and that docs/metrics.md lists exactly these.

#include "broker/metadata/controller/cluster_metrics.h"
#include "broker/metadata/tests/controller_cluster.h"
#include "broker/metrics/registry.h"
#include "broker/metrics/tests/scrape.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace spool::broker::metadata {
namespace {

using namespace std::chrono_literals;
using metrics::testing::sample;
using testing::eventually;
using testing::member;

class cluster_metrics_etcd_test : public testing::controller_cluster_test {};

std::string scrape(const metrics::registry& reg) {
    return metrics::to_text(reg.collect());
}

double value(const metrics::registry& reg, const std::string& series) {
    return sample(scrape(reg), series).value_or(-1);
}

TEST_F(cluster_metrics_etcd_test, test_controller_session_and_etcd_series_follow_a_real_cluster) {
    metrics::registry reg_a, reg_b;  // outlive the stores, whose clients report into them
    auto members = start_with_controller_first(2);
    ASSERT_EQ(members.size(), 2u);
    auto& a = members[0];
    auto& b = members[1];
    export_cluster_metrics(reg_a, *a->store, a->ctl.get());
    export_cluster_metrics(reg_b, *b->store, b->ctl.get());
    ASSERT_TRUE(create(*b, "metered", 4));

    // Heartbeats every 200 ms: keep-alives are counted as ok etcd requests with latencies.
    const std::string keep_alive_ok =
        R"(spool_etcd_requests_total{operation="lease_keep_alive",outcome="ok"})";
    ASSERT_TRUE(eventually([&] { return value(reg_a, keep_alive_ok) >= 2; }));
    auto text = scrape(reg_a);
    EXPECT_GE(sample(text, R"(spool_etcd_request_duration_seconds_count{operation=)"
                           R"("lease_keep_alive"})")
                  .value_or(0),
              2.0);
    // A is the controller: it won one election and committed the placement of "metered".
    EXPECT_EQ(sample(text, "spool_controller_elections_won_total"), 1.0);
    EXPECT_GE(sample(text, "spool_controller_txns_total").value_or(0), 1.0);
    EXPECT_GE(
        sample(text, R"(spool_etcd_requests_total{operation="txn",outcome="ok"})").value_or(0),
        1.0);  // the placement; the campaign ran before the export
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="registered"})"), 1.0);
    EXPECT_EQ(sample(text, "spool_broker_session_may_lead"), 1.0);
    EXPECT_EQ(sample(text, "spool_broker_session_reregistrations_total"), 0.0);
    EXPECT_LT(sample(text, "spool_etcd_last_response_age_seconds").value_or(99), 1.0);
    // Both brokers applied the same changes through their watches.
    ASSERT_TRUE(eventually([&] {
        return value(reg_a, "spool_metadata_applied_revision") ==
                   static_cast<double>(a->snapshot()->version) &&
               value(reg_b, "spool_metadata_applied_revision") ==
                   static_cast<double>(b->snapshot()->version) &&
               a->snapshot()->version == b->snapshot()->version;
    }));
    EXPECT_GE(value(reg_b, "spool_metadata_watch_events_total"), 5.0);  // topic + 4 partitions
    EXPECT_EQ(value(reg_b, "spool_controller_elections_won_total"), 0.0);
    EXPECT_EQ(value(reg_b, "spool_controller_txns_total"), 0.0);

    // etcd expires B's session (revoked behind its back): B sees lease_not_found, registers
    // again, and says so.
    ASSERT_TRUE(raw->run(raw->client().revoke_lease(b->store->lease_id())));
    ASSERT_TRUE(eventually(
        [&] { return value(reg_b, "spool_broker_session_reregistrations_total") == 1.0; }));
    text = scrape(reg_b);
    EXPECT_EQ(sample(text, R"(spool_broker_session_state{state="registered"})"), 1.0);
    EXPECT_GE(sample(text, R"(spool_etcd_requests_total{operation="lease_keep_alive",)"
                           R"(outcome="lease_not_found"})")
                  .value_or(0),
              1.0);

    // etcd goes away: requests fail as unavailable and the last answer ages.
    ASSERT_TRUE(etcd.stop());
    ASSERT_TRUE(eventually(
        [&] { return value(reg_a, "spool_etcd_last_response_age_seconds") > 1.5; }, 10s));
    text = scrape(reg_a);
    const double failed = sample(text, R"(spool_etcd_requests_total{operation="lease_keep_alive",)"
                                       R"(outcome="unavailable"})")
                              .value_or(0) +
                          sample(text, R"(spool_etcd_requests_total{operation="lease_keep_alive",)"
                                       R"(outcome="timed_out"})")
                              .value_or(0);
    EXPECT_GE(failed, 1.0);
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    EXPECT_TRUE(eventually(
        [&] { return value(reg_a, "spool_etcd_last_response_age_seconds") < 1.0; }, 10s));

    // A resigns at stop; its counters stay readable after the controller object is gone.
    a->ctl->stop_blocking();
    a->ctl.reset();
    EXPECT_EQ(value(reg_a, "spool_controller_elections_won_total"), 1.0);
}

TEST_F(cluster_metrics_etcd_test, test_a_compacted_watch_counts_one_reload) {
    metrics::registry reg;
    testing::tcp_proxy proxy(etcd.client_port());
    auto opened = etcd_store::open(options(proxy.endpoint()));
    ASSERT_TRUE(opened) << opened.error().message();
    auto store = std::move(opened).value();
    export_cluster_metrics(reg, *store, nullptr);
    EXPECT_EQ(value(reg, "spool_metadata_reloads_total"), 0.0);
    EXPECT_EQ(scrape(reg).find("spool_broker_session_state"), std::string::npos);  // no session

    proxy.cut();
    auto key = store->keys().broker_configs("");
    ASSERT_TRUE(raw->run(raw->client().put(key, R"({"x":"1"})")));
    auto put = raw->run(raw->client().put(key, R"({"x":"2"})"));
    ASSERT_TRUE(put);
    ASSERT_TRUE(raw->run(raw->client().compact(put.value())));
    proxy.restore();
    ASSERT_TRUE(eventually([&] { return value(reg, "spool_metadata_reloads_total") == 1.0; }, 10s));
    EXPECT_TRUE(eventually([&] {
        return value(reg, "spool_metadata_applied_revision") >= static_cast<double>(put.value());
    }));
    store->stop();
}

// docs/metrics.md's "Broker: cluster metadata" table lists exactly the families exported here,
// with their types (the monitoring_metrics_doc check covers the rest against a live broker).
TEST_F(cluster_metrics_etcd_test, test_docs_metrics_md_lists_exactly_the_cluster_metadata_series) {
    std::ifstream in(std::string(SPOOL_SOURCE_DIR) + "/docs/metrics.md");
    ASSERT_TRUE(in) << "docs/metrics.md not found under " << SPOOL_SOURCE_DIR;
    std::stringstream doc;
    doc << in.rdbuf();
    auto section_start = doc.str().find("## Broker: cluster metadata");
    ASSERT_NE(section_start, std::string::npos);
    auto section = doc.str().substr(section_start);
    section = section.substr(0, section.find("\n## ", 3));
    std::set<std::pair<std::string, std::string>> documented;
    std::regex row(R"(\| `(spool_[a-z_]+)` \| (counter|gauge|histogram) \|)");
    for (std::sregex_iterator it(section.begin(), section.end(), row), end; it != end; ++it) {
        documented.insert({(*it)[1], (*it)[2]});
    }

    metrics::registry reg;
    auto members = start_with_controller_first(1);
    ASSERT_EQ(members.size(), 1u);
    export_cluster_metrics(reg, *members[0]->store, members[0]->ctl.get());
    ASSERT_TRUE(eventually(
        [&] { return scrape(reg).find("spool_etcd_requests_total{") != std::string::npos; }));
    std::set<std::pair<std::string, std::string>> served;
    std::regex type_line(R"(# TYPE (\S+) (\S+))");
    auto text = scrape(reg);
    for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it) {
        served.insert({(*it)[1], (*it)[2]});
    }
    EXPECT_EQ(documented, served);
    EXPECT_GE(served.size(), 12u);
}

}  // namespace
}  // namespace spool::broker::metadata
