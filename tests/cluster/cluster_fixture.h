#pragma once

// The fixture of the cluster tests that need the default cluster (a real etcd and three brokers)
// up before each test: a start failure fails the test with what went wrong.

#include "tests/cluster/cluster_harness.h"

#include <gtest/gtest.h>

namespace spool::tests::cluster {

class started_cluster : public ::testing::Test {
protected:
    void SetUp() override {
        auto err = cluster.start();
        ASSERT_TRUE(err.empty()) << err;
    }
    cluster_harness cluster;
};

}  // namespace spool::tests::cluster
