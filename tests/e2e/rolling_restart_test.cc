// Rolling restarts and RBAC denial against a real kube-apiserver and kube-controller-manager.
//
// No kubelet runs here, so the test plays the kubelet's part: it marks the StatefulSet's pods
// Running and Ready with podIP 127.0.0.1 (status subresource), and serves the brokers'
// /v1/brokers/{id}/restart-safe endpoint itself on the Cluster's HTTP port. That endpoint is the
// only stand-in; the operator, API server and StatefulSet controller are the real ones.

#include "operator/api/cluster.h"
#include "operator/kube/leader_elector.h"
#include "operator/kube/resource.h"
#include "tests/e2e/harness.h"

#include <cpprest/http_listener.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace spool::e2e {
namespace {

namespace kinds = op::kube::kinds;
using op::num;
using op::obj;
using op::str;

// Answers restart-safe like broker/http/admin_api.cc does, recording which broker ids were asked.
class fake_restart_safe_endpoint {
public:
    explicit fake_restart_safe_endpoint(int port)
        : _listener("http://127.0.0.1:" + std::to_string(port)) {
        _listener.support(web::http::methods::GET, [this](web::http::http_request req) {
            std::string path = req.relative_uri().path();
            {
                std::lock_guard lock(_mutex);
                _asked.insert(path);
            }
            req.reply(web::http::status_codes::OK,
                      obj({{"restart_safe", op::boolean(_safe.load())},
                           {"summary", str(_safe ? "safe" : "not safe: see risks")}}));
        });
        _listener.open().wait();
    }
    ~fake_restart_safe_endpoint() { _listener.close().wait(); }
    void set_safe(bool s) { _safe = s; }
    bool asked(const std::string& path) {
        std::lock_guard lock(_mutex);
        return _asked.count(path) > 0;
    }

private:
    web::http::experimental::listener::http_listener _listener;
    std::atomic<bool> _safe{false};
    std::mutex _mutex;
    std::set<std::string> _asked;
};

// The kubelet's part: Running, Ready, podIP 127.0.0.1.
bool mark_ready(op::kube::client& api, const std::string& ns, const json& pod) {
    json p = pod;
    std::string now = op::kube::time_now();
    p["status"] = obj({{"phase", str("Running")},
                       {"podIP", str("127.0.0.1")},
                       {"conditions", op::arr({obj({{"type", str("Ready")},
                                                    {"status", str("True")},
                                                    {"lastTransitionTime", str(now)}})})}});
    return static_cast<bool>(
        api.replace_status(kinds::pod, ns, pod.at("metadata").at("name").as_string(), p));
}

// Marks every not-yet-ready pod of the cluster ready; returns the pods' names -> uid.
std::map<std::string, std::string> ready_all(op::kube::client& api, const std::string& ns) {
    std::map<std::string, std::string> uids;
    auto pods = api.list(kinds::pod, ns, {"app.kubernetes.io/instance=demo", ""});
    if (!pods) {
        return uids;
    }
    for (const auto& pod : pods.value().items) {
        auto meta = op::api::parse_meta(pod);
        if (meta.deleting) {
            continue;
        }
        const json* status = op::find(pod, "status");
        if (!status || op::get_string(*status, "podIP").empty()) {
            mark_ready(api, ns, pod);
        }
        uids[meta.name] = meta.uid;
    }
    return uids;
}

std::string progressing_reason(op::kube::client& api, const std::string& ns) {
    auto c = api.get(kinds::cluster, ns, "demo");
    if (!c) {
        return {};
    }
    auto parsed = op::api::parse_cluster(c.value());
    for (const auto& cond : parsed.value().status.conditions) {
        if (cond.type == "Progressing") {
            return cond.reason;
        }
    }
    return {};
}

TEST(rolling_restart, test_config_change_restarts_one_pod_at_a_time_only_when_safe) {
    auto api = admin_client();
    test_namespace ns(*api);
    int http_port = free_port();
    fake_restart_safe_endpoint endpoint(http_port);
    json c = obj({{"apiVersion", str("spool.dev/v1alpha1")},
                  {"kind", str("Cluster")},
                  {"metadata", obj({{"name", str("demo")}})},
                  {"spec", obj({{"replicas", num(2)},
                                {"security", plaintext_security()},
                                {"ports", obj({{"http", num(http_port)}})},
                                {"config", obj({{"num.partitions", str("4")}})}})}});
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), c));
    operator_process op({"--namespace", ns.name()});

    std::map<std::string, std::string> before;
    ASSERT_TRUE(eventually(
        [&] {
            before = ready_all(*api, ns.name());
            return before.size() == 2;
        },
        std::chrono::seconds(60)))
        << "the StatefulSet controller never created 2 pods\n"
        << op.log();
    ASSERT_TRUE(eventually(
        [&] {
            auto got = api->get(kinds::cluster, ns.name(), "demo");
            return got && op::get_int(got.value().at("status"), "readyReplicas") == 2;
        },
        std::chrono::seconds(60)))
        << op.log();

    // A config change: new template, pods outdated, but the broker says "not safe".
    ASSERT_TRUE(
        api->merge_patch(kinds::cluster, ns.name(), "demo",
                         obj({{"spec", obj({{"config", obj({{"num.partitions", str("8")}})}})}})));
    ASSERT_TRUE(
        eventually([&] { return progressing_reason(*api, ns.name()) == "WaitingForRestartSafe"; },
                   std::chrono::seconds(60)))
        << op.log();
    EXPECT_TRUE(endpoint.asked("/v1/brokers/1/restart-safe")) << "highest ordinal first";
    auto unchanged = ready_all(*api, ns.name());
    EXPECT_EQ(unchanged, before) << "no pod may restart while the broker says no";

    // Safe now: demo-1 restarts first, demo-0 only after demo-1 is back and ready.
    endpoint.set_safe(true);
    ASSERT_TRUE(eventually(
        [&] {
            auto now = ready_all(*api, ns.name());
            return now.count("demo-1") && now["demo-1"] != before["demo-1"];
        },
        std::chrono::seconds(60)))
        << op.log();
    ASSERT_TRUE(eventually(
        [&] {
            auto now = ready_all(*api, ns.name());
            return now.count("demo-0") && now["demo-0"] != before["demo-0"];
        },
        std::chrono::seconds(60)))
        << op.log();
    ASSERT_TRUE(eventually(
        [&] {
            ready_all(*api, ns.name());
            return progressing_reason(*api, ns.name()) == "Reconciled";
        },
        std::chrono::seconds(60)))
        << op.log();
}

// spool.dev/manual-rolling-update on the Cluster: handed to the pods, removed from the Cluster,
// every pod restarted through the same gate as a config roll (nothing while the broker says no).
TEST(rolling_restart, test_a_manual_roll_restarts_every_pod_only_when_safe_and_clears_itself) {
    auto api = admin_client();
    test_namespace ns(*api);
    int http_port = free_port();
    fake_restart_safe_endpoint endpoint(http_port);
    json c =
        obj({{"apiVersion", str("spool.dev/v1alpha1")},
             {"kind", str("Cluster")},
             {"metadata", obj({{"name", str("demo")}})},
             {"spec", obj({{"replicas", num(2)},
                           {"security", plaintext_security()},
                           {"ports", obj({{"http", num(http_port)}})}})}});
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), c));
    operator_process op({"--namespace", ns.name()});
    std::map<std::string, std::string> before;
    ASSERT_TRUE(eventually(
        [&] {
            before = ready_all(*api, ns.name());
            auto got = api->get(kinds::cluster, ns.name(), "demo");
            return before.size() == 2 && got &&
                   op::get_int(got.value().at("status"), "readyReplicas") == 2;
        },
        std::chrono::seconds(60)))
        << op.log();

    const char* annotation = "spool.dev/manual-rolling-update";
    ASSERT_TRUE(api->merge_patch(
        kinds::cluster, ns.name(), "demo",
        obj({{"metadata", obj({{"annotations", obj({{annotation, str("true")}})}})}})));
    ASSERT_TRUE(eventually(
        [&] {
            auto got = api->get(kinds::cluster, ns.name(), "demo");
            if (!got) {
                return false;
            }
            auto parsed = op::api::parse_cluster(got.value()).value();
            return !parsed.meta.annotations.count(annotation) &&
                   parsed.status.restart_pending == std::vector<std::string>{"demo-1", "demo-0"};
        },
        std::chrono::seconds(30)))
        << op.log();
    EXPECT_EQ(ready_all(*api, ns.name()), before) << "no restart while the broker says no";

    endpoint.set_safe(true);
    ASSERT_TRUE(eventually(
        [&] {
            auto now = ready_all(*api, ns.name());
            return now.size() == 2 && now["demo-0"] != before["demo-0"] &&
                   now["demo-1"] != before["demo-1"];
        },
        std::chrono::seconds(60)))
        << op.log();
    ASSERT_TRUE(eventually(
        [&] {
            ready_all(*api, ns.name());
            auto got = api->get(kinds::cluster, ns.name(), "demo");
            return got &&
                   op::api::parse_cluster(got.value()).value().status.restart_pending.empty();
        },
        std::chrono::seconds(30)))
        << op.log();
    auto after = ready_all(*api, ns.name());
    std::this_thread::sleep_for(std::chrono::seconds(3));
    EXPECT_EQ(ready_all(*api, ns.name()), after) << "restarted once each, not again";
}

TEST(rbac, test_denied_access_becomes_a_forbidden_condition_with_the_real_error) {
    auto api = admin_client();
    test_namespace ns(*api);
    // "restricted" may read Clusters and write their status and Events, nothing else.
    json role =
        obj({{"apiVersion", str("rbac.authorization.k8s.io/v1")},
             {"kind", str("Role")},
             {"metadata", obj({{"name", str("partial")}})},
             {"rules", op::arr({obj({{"apiGroups", op::arr({str("spool.dev")})},
                                     {"resources", op::arr({str("clusters"), str("topics")})},
                                     {"verbs", op::arr({str("get"), str("list"), str("watch")})}}),
                                obj({{"apiGroups", op::arr({str("spool.dev")})},
                                     {"resources", op::arr({str("clusters/status")})},
                                     {"verbs", op::arr({str("update")})}}),
                                obj({{"apiGroups", op::arr({str("")})},
                                     {"resources", op::arr({str("events")})},
                                     {"verbs", op::arr({str("create")})}})})}});
    op::kube::resource_kind roles{"rbac.authorization.k8s.io", "v1", "Role", "roles", true};
    op::kube::resource_kind bindings{"rbac.authorization.k8s.io", "v1", "RoleBinding",
                                     "rolebindings", true};
    ASSERT_TRUE(api->create(roles, ns.name(), role));
    json binding = obj({{"apiVersion", str("rbac.authorization.k8s.io/v1")},
                        {"kind", str("RoleBinding")},
                        {"metadata", obj({{"name", str("partial")}})},
                        {"roleRef", obj({{"apiGroup", str("rbac.authorization.k8s.io")},
                                         {"kind", str("Role")},
                                         {"name", str("partial")}})},
                        {"subjects", op::arr({obj({{"apiGroup", str("rbac.authorization.k8s.io")},
                                                   {"kind", str("User")},
                                                   {"name", str("restricted")}})})}});
    ASSERT_TRUE(api->create(bindings, ns.name(), binding));
    json c = obj({{"apiVersion", str("spool.dev/v1alpha1")},
                  {"kind", str("Cluster")},
                  {"metadata", obj({{"name", str("demo")}})},
                  {"spec", obj({{"replicas", num(1)}, {"security", plaintext_security()}})}});
    ASSERT_TRUE(api->create(kinds::cluster, ns.name(), c));
    operator_process op({"--namespace", ns.name(), "--context", "restricted"});
    op::api::condition degraded;
    ASSERT_TRUE(eventually([&] {
        auto got = api->get(kinds::cluster, ns.name(), "demo");
        if (!got) {
            return false;
        }
        auto parsed = op::api::parse_cluster(got.value());
        if (!parsed) {
            return false;
        }
        for (const auto& cond : parsed.value().status.conditions) {
            if (cond.type == "Degraded" && cond.status == "True") {
                degraded = cond;
                return true;
            }
        }
        return false;
    })) << op.log();
    EXPECT_EQ(degraded.reason, "Forbidden");
    EXPECT_NE(degraded.message.find("configmaps \"demo-config\" is forbidden"), std::string::npos)
        << degraded.message;
    EXPECT_TRUE(op.running()) << "a denied call must not crash the operator";
    // Backoff, not a hot loop: over 5 s only a handful of passes.
    std::string before = http_get(op.metrics_url());
    std::this_thread::sleep_for(std::chrono::seconds(5));
    auto count = [](const std::string& metrics) {
        auto pos = metrics.find("spool_operator_reconcile_errors_total{controller=\"cluster\"} ");
        return pos == std::string::npos
                   ? 0.0
                   : std::stod(metrics.substr(
                         pos + std::string(
                                   "spool_operator_reconcile_errors_total{controller=\"cluster\"} ")
                                   .size()));
    };
    double delta = count(http_get(op.metrics_url())) - count(before);
    EXPECT_LE(delta, 5.0) << "errors must be retried with backoff";
}

}  // namespace
}  // namespace spool::e2e
