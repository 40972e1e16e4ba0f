// The operator's Kubernetes client against a real kube-apiserver: server-side apply, optimistic
// concurrency (409), watch expiry (410) and relist, leader election, RBAC denial.

#include "operator/kube/leader_elector.h"
#include "operator/kube/resource.h"
#include "operator/kube/watcher.h"
#include "tests/e2e/harness.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

json config_map(const std::string& name, const std::string& value) {
    return obj({{"apiVersion", str("v1")},
                {"kind", str("ConfigMap")},
                {"metadata", obj({{"name", str(name)}})},
                {"data", obj({{"k", str(value)}})}});
}

TEST(kube_client, test_server_side_apply_is_idempotent) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto first = api->apply(kinds::config_map, ns.name(), "a", config_map("a", "1"), true);
    ASSERT_TRUE(first) << first.error().message;
    auto second = api->apply(kinds::config_map, ns.name(), "a", config_map("a", "1"), true);
    ASSERT_TRUE(second);
    EXPECT_EQ(first.value().at("metadata").at("resourceVersion").as_string(),
              second.value().at("metadata").at("resourceVersion").as_string())
        << "an unchanged apply must not write";
    auto third = api->apply(kinds::config_map, ns.name(), "a", config_map("a", "2"), true);
    ASSERT_TRUE(third);
    EXPECT_EQ(third.value().at("data").at("k").as_string(), "2");
}

TEST(kube_client, test_write_with_a_stale_resource_version_is_a_409_conflict) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto created = api->create(kinds::config_map, ns.name(), config_map("a", "1"));
    ASSERT_TRUE(created);
    json stale = created.value();
    json fresh = created.value();
    fresh["data"]["k"] = str("2");
    ASSERT_TRUE(api->replace(kinds::config_map, ns.name(), "a", fresh));
    stale["data"]["k"] = str("3");
    auto conflict = api->replace(kinds::config_map, ns.name(), "a", stale);
    ASSERT_FALSE(conflict);
    EXPECT_TRUE(conflict.error().is_conflict()) << conflict.error().message;
    EXPECT_EQ(conflict.error().reason, "Conflict");
    EXPECT_TRUE(conflict.error().transient);
}

TEST(kube_client, test_status_subresource_write_with_a_stale_version_is_a_409_conflict) {
    auto api = admin_client();
    test_namespace ns(*api);
    json c = obj({{"apiVersion", str("spool.dev/v1alpha1")},
                  {"kind", str("Cluster")},
                  {"metadata", obj({{"name", str("demo")}})},
                  {"spec", json::object()}});
    auto created = api->create(kinds::cluster, ns.name(), c);
    ASSERT_TRUE(created);
    json stale = created.value();
    ASSERT_TRUE(api->merge_patch(kinds::cluster, ns.name(), "demo",
                                 obj({{"spec", obj({{"replicas", num(4)}})}})));
    stale["status"] = obj({{"bootstrap", str("x")}});
    auto conflict = api->replace_status(kinds::cluster, ns.name(), "demo", stale);
    ASSERT_FALSE(conflict);
    EXPECT_TRUE(conflict.error().is_conflict()) << conflict.error().message;
}

TEST(kube_client, test_not_found_and_forbidden_carry_status_and_message) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto missing = api->get(kinds::config_map, ns.name(), "nope");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(missing.error().is_not_found());
    auto restricted = client_for_context("restricted");
    auto denied = restricted->list(kinds::config_map, ns.name());
    ASSERT_FALSE(denied);
    EXPECT_EQ(denied.error().http_status, 403);
    EXPECT_NE(denied.error().message.find("cannot list resource \"configmaps\""), std::string::npos)
        << denied.error().message;
}

TEST(kube_client, test_watch_delivers_events_and_resumes_from_the_last_version) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto listed = api->list(kinds::config_map, ns.name());
    ASSERT_TRUE(listed);
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        (void)api->create(kinds::config_map, ns.name(), config_map("w", "1"));
    });
    std::vector<std::string> seen;
    auto last = api->watch(kinds::config_map, ns.name(), {}, listed.value().resource_version, 10,
                           [&](const op::kube::watch_event& e) {
                               if (e.type == op::kube::event_type::added) {
                                   seen.push_back(e.object.at("metadata").at("name").as_string());
                               }
                               return std::find(seen.begin(), seen.end(), "w") == seen.end();
                           });
    writer.join();
    ASSERT_TRUE(last) << last.error().message;
    EXPECT_NE(std::find(seen.begin(), seen.end(), "w"), seen.end());
    EXPECT_NE(last.value(), listed.value().resource_version);
}

TEST(kube_client, test_watch_list_streams_objects_then_a_bookmark_with_the_version) {
    auto api = admin_client();
    test_namespace ns(*api);
    ASSERT_TRUE(api->create(kinds::config_map, ns.name(), config_map("a", "1")));
    // Secrets are served from the watch cache, which sends bookmarks (ConfigMaps are not here).
    json secret = obj({{"apiVersion", str("v1")},
                       {"kind", str("Secret")},
                       {"metadata", obj({{"name", str("s")}})},
                       {"stringData", obj({{"k", str("v")}})}});
    ASSERT_TRUE(api->create(kinds::secret, ns.name(), secret));
    op::kube::list_options options;
    options.send_initial_events = true;
    std::vector<std::string> added;
    std::string bookmark_rv;
    auto last =
        api->watch(kinds::secret, ns.name(), options, "", 10, [&](const op::kube::watch_event& e) {
            if (e.type == op::kube::event_type::added) {
                added.push_back(e.object.at("metadata").at("name").as_string());
            }
            if (e.type == op::kube::event_type::bookmark) {
                bookmark_rv = e.object.at("metadata").at("resourceVersion").as_string();
                return false;  // initial events are complete
            }
            return true;
        });
    ASSERT_TRUE(last) << last.error().message;
    EXPECT_EQ(added, std::vector<std::string>{"s"});
    EXPECT_FALSE(bookmark_rv.empty());
    EXPECT_EQ(last.value(), bookmark_rv) << "a bookmark advances the resume version";
}

TEST(kube_client, test_expired_resource_version_gives_410_and_the_watcher_relists) {
    auto api = admin_client();
    test_namespace ns(*api);
    auto created = api->create(kinds::config_map, ns.name(), config_map("a", "0"));
    ASSERT_TRUE(created);
    std::string old_rv = created.value().at("metadata").at("resourceVersion").as_string();
    // Write until etcd has compacted past old_rv (the test apiserver compacts every 10 s and
    // serves configmap watches without a watch cache, see scripts/k8s/start.sh).
    bool gone = eventually(
        [&] {
            json cm = api->get(kinds::config_map, ns.name(), "a").value();
            cm["data"]["k"] = str(std::to_string(std::rand()));
            (void)api->replace(kinds::config_map, ns.name(), "a", cm);
            auto w = api->watch(kinds::config_map, ns.name(), {}, old_rv, 1,
                                [](const op::kube::watch_event&) { return false; });
            return !w && w.error().is_gone();
        },
        std::chrono::seconds(60), std::chrono::seconds(2));
    ASSERT_TRUE(gone) << "resource version " << old_rv << " never expired";

    std::atomic<int> objects{0};
    op::kube::watcher w(
        *api, kinds::config_map, ns.name(), {},
        [&](op::kube::event_type, const json&) { ++objects; }, 5);
    w.resume_from(old_rv);
    std::thread runner([&] { w.run(); });
    bool relisted = eventually([&] { return w.expirations() >= 1 && w.lists() >= 1; });
    w.stop();
    api->cancel();
    runner.join();
    ASSERT_TRUE(relisted);
    EXPECT_GE(objects.load(), 1) << "the relist delivers the current objects";
}

TEST(kube_client, test_one_leader_at_a_time_and_release_hands_over) {
    auto api_a = admin_client();
    auto api_b = admin_client();
    test_namespace ns(*api_a);
    op::kube::leader_election_config cfg;
    cfg.namespace_ = ns.name();
    cfg.lease_duration = std::chrono::seconds(3);
    cfg.identity = "a";
    op::kube::leader_elector a(*api_a, cfg);
    cfg.identity = "b";
    op::kube::leader_elector b(*api_b, cfg);
    ASSERT_TRUE(a.try_acquire_or_renew());
    EXPECT_FALSE(b.try_acquire_or_renew()) << "b must wait while a renews";
    EXPECT_TRUE(a.try_acquire_or_renew()) << "a renews its own lease";
    EXPECT_FALSE(b.try_acquire_or_renew());

    std::atomic<bool> b_started{false};
    std::thread tb([&] { b.run([&] { b_started = true; }, [] {}); });
    std::atomic<bool> a_stopped{false};
    std::thread ta([&] { a.run([] {}, [&] { a_stopped = true; }); });
    std::this_thread::sleep_for(std::chrono::seconds(1));
    EXPECT_FALSE(b_started.load());
    a.stop();  // releases the lease
    ta.join();
    EXPECT_TRUE(a_stopped.load());
    EXPECT_TRUE(eventually([&] { return b_started.load(); }, std::chrono::seconds(10)));
    b.stop();
    tb.join();
    auto lease = api_a->get(kinds::lease, ns.name(), "spool-operator-leader");
    ASSERT_TRUE(lease);
    EXPECT_EQ(lease.value().at("spec").at("leaseTransitions").as_integer(), 1);
}

TEST(kube_client, test_stale_leader_is_taken_over_after_the_lease_duration) {
    auto api = admin_client();
    test_namespace ns(*api);
    op::kube::leader_election_config cfg;
    cfg.namespace_ = ns.name();
    cfg.lease_duration = std::chrono::seconds(2);
    cfg.identity = "crashed";
    op::kube::leader_elector crashed(*api, cfg);
    ASSERT_TRUE(crashed.try_acquire_or_renew());
    cfg.identity = "successor";
    op::kube::leader_elector successor(*api, cfg);
    EXPECT_FALSE(successor.try_acquire_or_renew());
    auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(eventually([&] { return successor.try_acquire_or_renew(); },
                           std::chrono::seconds(10), std::chrono::milliseconds(250)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace spool::e2e
