#include "operator/app/probe.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace spool::op::app {
namespace {

std::string scrape(const probe& p) {
    prometheus::TextSerializer text;
    return text.Serialize(p.registry()->Collect());
}

TEST(probe, test_reconciles_errors_duration_and_queue_depth_are_exported) {
    probe p;
    p.reconciled("cluster", std::chrono::milliseconds(30), true);
    p.reconciled("cluster", std::chrono::milliseconds(20), false);
    p.queue_depth("topic", 7);
    p.leading(true);
    std::string out = scrape(p);
    EXPECT_NE(
        out.find(R"(spool_operator_reconciles_total{controller="cluster",result="success"} 1)"),
        std::string::npos)
        << out;
    EXPECT_NE(out.find(R"(spool_operator_reconciles_total{controller="cluster",result="error"} 1)"),
              std::string::npos);
    EXPECT_NE(out.find(R"(spool_operator_reconcile_errors_total{controller="cluster"} 1)"),
              std::string::npos);
    EXPECT_NE(
        out.find(R"(spool_operator_reconcile_duration_seconds_count{controller="cluster"} 2)"),
        std::string::npos);
    EXPECT_NE(out.find(R"(spool_operator_queue_depth{controller="topic"} 7)"), std::string::npos);
    EXPECT_NE(out.find("\nspool_operator_leader 1"), std::string::npos);
}

TEST(probe, test_error_series_start_at_zero_with_the_first_successful_pass) {
    probe p;
    p.reconciled("topic", std::chrono::milliseconds(5), true);
    std::string out = scrape(p);
    EXPECT_NE(out.find(R"(spool_operator_reconcile_errors_total{controller="topic"} 0)"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(R"(spool_operator_reconciles_total{controller="topic",result="error"} 0)"),
              std::string::npos)
        << out;
}

TEST(probe, test_cluster_and_topic_state_gauges_follow_passes_and_go_with_the_object) {
    probe p;
    p.cluster_observed("kafka", "main",
                       {.ready = false,
                        .replicas = 3,
                        .ready_replicas = 2,
                        .restart_pending = 1,
                        .scale_down_blocked = true});
    p.topic_observed("kafka", "orders", true);
    std::string out = scrape(p);
    EXPECT_NE(out.find(R"(spool_operator_cluster_ready{cluster="main",namespace="kafka"} 0)"),
              std::string::npos)
        << out;
    EXPECT_NE(
        out.find(R"(spool_operator_cluster_ready_replicas{cluster="main",namespace="kafka"} 2)"),
        std::string::npos);
    EXPECT_NE(
        out.find(R"(spool_operator_cluster_restart_pending{cluster="main",namespace="kafka"} 1)"),
        std::string::npos);
    EXPECT_NE(
        out.find(
            R"(spool_operator_cluster_scale_down_blocked{cluster="main",namespace="kafka"} 1)"),
        std::string::npos);
    EXPECT_NE(out.find(R"(spool_operator_topic_ready{namespace="kafka",topic="orders"} 1)"),
              std::string::npos);
    p.cluster_observed("kafka", "main", {.ready = true, .replicas = 3, .ready_replicas = 3});
    out = scrape(p);
    EXPECT_NE(out.find(R"(spool_operator_cluster_ready{cluster="main",namespace="kafka"} 1)"),
              std::string::npos);
    p.cluster_gone("kafka", "main");
    p.topic_gone("kafka", "orders");
    out = scrape(p);
    EXPECT_EQ(out.find(R"(cluster="main")"), std::string::npos) << out;
    EXPECT_EQ(out.find(R"(topic="orders")"), std::string::npos) << out;
}

TEST(probe, test_last_success_moves_only_on_success) {
    probe p;
    p.reconciled("topic", std::chrono::milliseconds(1), false);
    EXPECT_EQ(scrape(p).find("spool_operator_last_success_timestamp_seconds{"), std::string::npos);
    p.reconciled("topic", std::chrono::milliseconds(1), true);
    std::string out = scrape(p);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        out, m,
        std::regex(R"(spool_operator_last_success_timestamp_seconds\{controller="topic"\} (\S+))")))
        << out;
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    EXPECT_NEAR(std::stod(m[1]), now, 60);
}

// docs/metrics.md lists every operator metric; what the probe serves (every verb exercised)
// must be exactly that list.
TEST(probe, test_docs_metrics_md_lists_exactly_the_served_operator_metrics) {
    probe p;
    p.reconciled("cluster", std::chrono::milliseconds(1), true);
    p.reconciled("cluster", std::chrono::milliseconds(1), false);
    p.queue_depth("cluster", 1);
    p.leading(true);
    p.cluster_observed("ns", "c", {});
    p.topic_observed("ns", "t", true);
    std::set<std::string> served;
    std::istringstream text(scrape(p));
    std::regex type_line(R"(^# TYPE (\S+) \S+$)");
    for (std::string line; std::getline(text, line);) {
        std::smatch m;
        if (std::regex_match(line, m, type_line))
            served.insert(m[1]);
    }
    std::ifstream doc(std::string(SPOOL_SOURCE_DIR) + "/docs/metrics.md");
    ASSERT_TRUE(doc) << "docs/metrics.md missing";
    std::set<std::string> documented;
    std::regex row(R"(^\| `(spool_operator_[a-z_]+)` \|.*)");
    for (std::string line; std::getline(doc, line);) {
        std::smatch m;
        if (std::regex_match(line, m, row))
            documented.insert(m[1]);
    }
    for (const auto& name : served)
        EXPECT_TRUE(documented.contains(name)) << name << " is served but not in docs/metrics.md";
    for (const auto& name : documented)
        EXPECT_TRUE(served.contains(name)) << name << " is in docs/metrics.md but not served";
    EXPECT_GE(served.size(), 12u);
}

}  // namespace
}  // namespace spool::op::app
