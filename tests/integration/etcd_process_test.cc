// etcd_process itself: the fixture every etcd test stands on must really start, freeze, thaw,
// stop and restart etcd on the same endpoint.
#include "tests/integration/etcd_process.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace spool::tests {
namespace {

using std::chrono::milliseconds;

TEST(etcd_process, test_starts_pauses_resumes_and_restarts_on_the_same_endpoint) {
    etcd_process etcd;
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    EXPECT_GT(etcd.pid(), 0);
    EXPECT_EQ(etcd.endpoint(), "http://127.0.0.1:" + std::to_string(etcd.client_port()));
    EXPECT_TRUE(etcd_healthy(etcd.client_port(), milliseconds(2000)));

    etcd.pause();
    EXPECT_FALSE(etcd_healthy(etcd.client_port(), milliseconds(300)));
    etcd.resume();
    EXPECT_TRUE(etcd_healthy(etcd.client_port(), milliseconds(2000)));

    std::string endpoint = etcd.endpoint();
    EXPECT_TRUE(etcd.stop());
    EXPECT_EQ(etcd.pid(), -1);
    EXPECT_FALSE(etcd_healthy(etcd.client_port(), milliseconds(300)));

    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    EXPECT_EQ(etcd.endpoint(), endpoint);
    pid_t pid = etcd.pid();
    etcd.kill9();
    EXPECT_EQ(etcd.pid(), -1);
    EXPECT_NE(::kill(pid, 0), 0);  // reaped, not a zombie we still own
}

TEST(etcd_process, test_destructor_kills_a_paused_etcd) {
    pid_t pid = -1;
    {
        etcd_process etcd;
        ASSERT_TRUE(etcd.start()) << etcd.log_text();
        pid = etcd.pid();
        etcd.pause();
    }
    EXPECT_NE(::kill(pid, 0), 0);
}

}  // namespace
}  // namespace spool::tests
