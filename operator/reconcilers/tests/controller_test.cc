#include "operator/reconcilers/controller.h"

#include "operator/kube/http_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace spool::op::reconcilers {
namespace {

using namespace std::chrono_literals;

// The controller needs a client for its watchers; these tests add none, so a client pointing
// at a closed port is enough and no request is ever made.
kube::http_client unused_client() {
    kube::config cfg;
    cfg.server = "https://127.0.0.1:1";
    return kube::http_client(cfg);
}

TEST(controller, test_a_failing_object_is_retried_with_growing_delays_not_hot_looped) {
    auto api = unused_client();
    std::atomic<int> calls{0};
    controller c("test", api, [&](const std::string&) {
        ++calls;
        return reconcile_result::failed(make_error("ApiError", "always fails"));
    });
    c.start();
    c.queue().add("ns/a");
    std::this_thread::sleep_for(2s);
    c.stop();
    // Delays 0.5 s, 1 s, 2 s...: at most 3 calls in 2 s. A hot loop would make thousands.
    EXPECT_GE(calls.load(), 2);
    EXPECT_LE(calls.load(), 3);
}

TEST(controller, test_requeue_after_brings_the_key_back_and_success_resets_backoff) {
    auto api = unused_client();
    std::atomic<int> calls{0};
    controller c("test", api, [&](const std::string&) {
        return ++calls < 3 ? reconcile_result::after(100ms) : reconcile_result::done();
    });
    c.start();
    c.queue().add("ns/a");
    std::this_thread::sleep_for(600ms);
    c.stop();
    EXPECT_EQ(calls.load(), 3);
    EXPECT_EQ(c.queue().failures("ns/a"), 0);
}

TEST(controller, test_an_exception_in_a_reconciler_does_not_stop_the_worker) {
    auto api = unused_client();
    std::atomic<int> calls{0};
    controller c("test", api, [&](const std::string& key) -> reconcile_result {
        ++calls;
        if (key == "ns/bad") {
            throw std::runtime_error("bug");
        }
        return reconcile_result::done();
    });
    c.start();
    c.queue().add("ns/bad");
    c.queue().add("ns/good");
    std::this_thread::sleep_for(200ms);
    c.stop();
    EXPECT_GE(calls.load(), 2);
}

TEST(controller, test_key_of_is_namespace_slash_name) {
    EXPECT_EQ(controller::key_of(
                  obj({{"metadata", obj({{"namespace", str("ns")}, {"name", str("a")}})}})),
              "ns/a");
}

}  // namespace
}  // namespace spool::op::reconcilers
