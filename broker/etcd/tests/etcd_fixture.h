#pragma once

// A real etcd (tests/integration/etcd_process.h) and a client of it on a test-owned io_context:
// the fixture of the client tests that need one etcd, nothing more.

#include "broker/etcd/client.h"
#include "broker/etcd/tests/test_util.h"
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>

#include <memory>

namespace spool::broker::etcd::testing {

class etcd_fixture : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(_etcd.start()) << _etcd.log_text();
        _client = client::make(_io.get_executor(), options_for({_etcd.endpoint()}));
    }

    spool::tests::etcd_process _etcd;
    net::io_context _io;
    std::unique_ptr<client> _client;
};

}  // namespace spool::broker::etcd::testing
