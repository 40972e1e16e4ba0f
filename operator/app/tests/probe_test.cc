#include "operator/app/probe.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

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

}  // namespace
}  // namespace spool::op::app
