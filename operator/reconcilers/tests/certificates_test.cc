// The certificates step (certificates.h) and the OpenSSL helpers under it (pki.h) against the
// in-memory API server: what a secured Cluster's first pass writes, that an idle pass writes
// nothing, and the three stages of a cluster CA renewal, each waiting for the brokers.

#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/kube/config.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/certificates.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/pki.h"
#include "operator/reconcilers/tests/fakes.h"
#include "operator/status/conditions.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::cluster_object;
using testing::fixed_admins;
using testing::fixed_health;

constexpr int64_t day = 86400;

TEST(pki, a_certificate_issued_by_a_ca_verifies_against_it_and_carries_its_names) {
    const int64_t now = std::time(nullptr);
    auto ca = pki::make_ca("test-ca", 10, now);
    ASSERT_TRUE(ca) << ca.error().message;
    auto other = pki::make_ca("other-ca", 10, now);
    ASSERT_TRUE(other);
    pki::certificate_request req{"broker", "spool.dev", {"a.example", "*.b.example"}, {"10.0.0.5"},
                                 5, now};
    auto cert = pki::issue(ca.value(), req);
    ASSERT_TRUE(cert) << cert.error().message;
    EXPECT_TRUE(pki::signed_by(cert.value().cert_pem, ca.value().cert_pem));
    EXPECT_FALSE(pki::signed_by(cert.value().cert_pem, other.value().cert_pem));
    auto sans = pki::subject_alt_names(cert.value().cert_pem);
    std::sort(sans.begin(), sans.end());
    EXPECT_EQ(sans, (std::vector<std::string>{"DNS:*.b.example", "DNS:a.example", "IP:10.0.0.5"}));
    auto end = pki::not_after(cert.value().cert_pem);
    ASSERT_TRUE(end);
    EXPECT_NEAR(static_cast<double>(*end - std::time(nullptr)), 5.0 * day, 60.0);
    EXPECT_EQ(pki::split_certificates(ca.value().cert_pem + cert.value().cert_pem).size(), 2u);
    EXPECT_FALSE(pki::not_after("not a certificate"));
}

json secured_cluster(int replicas) {
    json c = cluster_object(replicas);  // plaintext: security replaced below
    c["spec"]["security"] = obj({{"certificates", obj({{"validityDays", num(30)},
                                                       {"renewBeforeDays", num(5)}})},
                                 {"authorization", obj({{"superUsers", arr({str("alice")})}})}});
    return c;
}

struct certificates_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    fixed_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};
    int64_t now = static_cast<int64_t>(std::time(nullptr));

    void SetUp() override {
        reconciler.set_clock([this] { return now; });
    }

    std::string secret(const std::string& name, const std::string& key) {
        return testing::secret_value(api, "ns", name, key);
    }
    std::string broker_cert() {
        return pki::split_certificates(secret("demo-broker-certs", "broker.pem")).front();
    }
    std::vector<std::string> bundle() {
        return pki::split_certificates(secret("demo-cluster-ca-cert", "ca.crt"));
    }
    std::string annotation() {
        auto sts = api.object(kube::kinds::statefulset, "ns", "demo").value();
        return get_string(sts.at("spec").at("template").at("metadata").at("annotations"),
                          builders::certificates_annotation);
    }
    // The broker pods as the StatefulSet would run them: ready, with the template's annotation.
    void run_pods(int n) {
        for (int i = 0; i < n; ++i) {
            json pod = obj(
                {{"apiVersion", str("v1")},
                 {"kind", str("Pod")},
                 {"metadata",
                  obj({{"name", str("demo-" + std::to_string(i))},
                       {"namespace", str("ns")},
                       {"labels", obj({{"app.kubernetes.io/name", str("spool")},
                                       {"app.kubernetes.io/instance", str("demo")},
                                       {"app.kubernetes.io/component", str("broker")}})},
                       {"annotations",
                        obj({{builders::certificates_annotation, str(annotation())}})}})},
                 {"status", obj({{"podIP", str("10.244.7." + std::to_string(10 + i))},
                                 {"conditions", arr({obj({{"type", str("Ready")},
                                                          {"status", str("True")}})})}})}});
            (void)api.put(kube::kinds::pod, pod);
        }
    }
    std::vector<std::string> secret_writes() {
        std::vector<std::string> out;
        for (const auto& w : api.writes()) {
            if (w.kind == "Secret") {
                out.push_back(w.verb + " " + w.name);
            }
        }
        return out;
    }
};

TEST_F(certificates_test, a_plaintext_cluster_gets_no_secrets) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    EXPECT_FALSE(reconciler.reconcile("ns/demo").failure);
    EXPECT_TRUE(secret_writes().empty());
}

TEST_F(certificates_test, plaintext_listeners_are_a_warning_condition_a_secured_cluster_lacks) {
    (void)api.put(kube::kinds::cluster, cluster_object(3));
    (void)reconciler.reconcile("ns/demo");
    auto open = api::parse_cluster(api.object(kube::kinds::cluster, "ns", "demo").value()).value();
    const auto* warning = status::find_condition(open.status.conditions, "InsecureListeners");
    ASSERT_NE(warning, nullptr);
    EXPECT_EQ(warning->status, "True");
    EXPECT_EQ(warning->reason, "PlaintextListeners");
    EXPECT_NE(warning->message.find("internal"), std::string::npos);

    (void)api.put(kube::kinds::cluster, secured_cluster(3));
    (void)reconciler.reconcile("ns/demo");
    auto secured = api::parse_cluster(api.object(kube::kinds::cluster, "ns", "demo").value()).value();
    EXPECT_EQ(status::find_condition(secured.status.conditions, "InsecureListeners"), nullptr);
}

TEST_F(certificates_test, first_pass_makes_both_cas_and_a_broker_certificate_with_every_name) {
    (void)api.put(kube::kinds::cluster, secured_cluster(3));
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);
    auto writes = secret_writes();
    std::sort(writes.begin(), writes.end());
    EXPECT_EQ(writes, (std::vector<std::string>{
                          "apply demo-broker-certs", "apply demo-clients-ca",
                          "apply demo-clients-ca-cert", "apply demo-cluster-ca",
                          "apply demo-cluster-ca-cert", "apply demo-operator-cert"}));
    std::string ca = secret("demo-cluster-ca", "ca.crt");
    EXPECT_TRUE(pki::signed_by(broker_cert(), ca));
    EXPECT_FALSE(pki::signed_by(broker_cert(), secret("demo-clients-ca", "ca.crt")));
    EXPECT_TRUE(pki::signed_by(secret("demo-operator-cert", "tls.crt"), ca));
    auto sans = pki::subject_alt_names(broker_cert());
    for (const char* name :
         {"DNS:demo-0.demo-brokers.ns.svc", "DNS:demo-2.demo-brokers.ns.svc.cluster.local",
          "DNS:*.demo-brokers.ns.svc", "DNS:demo-bootstrap.ns.svc",
          "DNS:demo-bootstrap.ns.svc.cluster.local", "DNS:demo-brokers.ns.svc"}) {
        EXPECT_NE(std::find(sans.begin(), sans.end(), name), sans.end()) << name;
    }
    EXPECT_FALSE(annotation().empty());
    // The broker config the same pass rendered: TLS, mTLS between brokers, the super users.
    auto cm = api.object(kube::kinds::config_map, "ns", "demo-config").value();
    std::string broker_yaml = cm.at("data").at("broker.yaml").as_string();
    for (const char* line :
         {"inter.broker.listener.name: \"REPLICATION\"",
          "listener.security.protocol.map: \"INTERNAL:SASL_SSL,REPLICATION:SSL\"",
          "listener.name.replication.ssl.client.auth: \"required\"",
          "http.authentication.enabled: \"true\"",
          "super.users: \"User:CN=demo-broker,O=spool.dev;User:CN=spool-operator,O=spool.dev;"
          "User:alice\""}) {
        EXPECT_NE(broker_yaml.find(line), std::string::npos) << line << "\n" << broker_yaml;
    }
}

TEST_F(certificates_test, an_idle_pass_writes_no_secret) {
    (void)api.put(kube::kinds::cluster, secured_cluster(3));
    (void)reconciler.reconcile("ns/demo");
    run_pods(3);
    (void)reconciler.reconcile("ns/demo");
    api.clear_writes();
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(secret_writes().empty());
}

TEST_F(certificates_test, a_pod_ip_joins_the_certificate_when_the_pod_listener_is_tls) {
    json c = secured_cluster(3);
    c["spec"]["podAddressListener"] = obj({{"enabled", boolean(true)}});
    (void)api.put(kube::kinds::cluster, c);
    (void)reconciler.reconcile("ns/demo");
    run_pods(3);
    (void)reconciler.reconcile("ns/demo");
    auto sans = pki::subject_alt_names(broker_cert());
    EXPECT_NE(std::find(sans.begin(), sans.end(), "IP:10.244.7.11"), sans.end());
}

TEST_F(certificates_test, load_balancer_addresses_join_the_certificate_once_assigned) {
    json c = secured_cluster(2);
    c["spec"]["externalListener"] = obj({{"type", str("LoadBalancer")}});
    (void)api.put(kube::kinds::cluster, c);
    (void)reconciler.reconcile("ns/demo");
    for (int i = 0; i < 2; ++i) {
        json svc = api.object(kube::kinds::service, "ns", "demo-external-" + std::to_string(i)).value();
        json ingress = i == 0 ? obj({{"ip", str("203.0.113.7")}})
                              : obj({{"hostname", str("lb-1.example.com")}});
        svc["status"] = obj({{"loadBalancer", obj({{"ingress", arr({ingress})}})}});
        (void)api.put(kube::kinds::service, svc);
    }
    (void)reconciler.reconcile("ns/demo");
    auto sans = pki::subject_alt_names(broker_cert());
    EXPECT_NE(std::find(sans.begin(), sans.end(), "IP:203.0.113.7"), sans.end());
    EXPECT_NE(std::find(sans.begin(), sans.end(), "DNS:lb-1.example.com"), sans.end());
}

TEST_F(certificates_test, certificates_outside_the_renewal_window_are_kept) {
    (void)api.put(kube::kinds::cluster, secured_cluster(3));
    (void)reconciler.reconcile("ns/demo");
    std::string first = broker_cert();
    std::string ca = secret("demo-cluster-ca", "ca.crt");
    // 20 of 30 days left, the window is 5: nothing is renewed.
    now += 10 * day;
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(broker_cert(), first);
    EXPECT_EQ(secret("demo-cluster-ca", "ca.crt"), ca);
}

TEST_F(certificates_test, a_cluster_ca_renewal_goes_through_a_trust_overlap_one_roll_at_a_time) {
    (void)api.put(kube::kinds::cluster, secured_cluster(3));
    (void)reconciler.reconcile("ns/demo");
    run_pods(3);
    std::string old_ca = secret("demo-cluster-ca", "ca.crt");
    std::string first_annotation = annotation();

    // Inside the renewal window: stage 1, the new CA is trusted beside the old, the brokers
    // keep certificates of the old one, and the pod template changes (a roll).
    now += 26 * day;
    (void)reconciler.reconcile("ns/demo");
    std::string new_ca = secret("demo-cluster-ca", "ca.crt");
    ASSERT_NE(new_ca, old_ca);
    EXPECT_EQ(bundle(), (std::vector<std::string>{new_ca, old_ca}));
    EXPECT_TRUE(pki::signed_by(broker_cert(), old_ca));
    EXPECT_TRUE(pki::signed_by(secret("demo-operator-cert", "tls.crt"), old_ca));
    std::string stage1 = annotation();
    EXPECT_NE(stage1, first_annotation);

    // The brokers still run the old template: nothing moves on.
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(pki::signed_by(broker_cert(), old_ca));

    // Every broker restarted with the overlap bundle: stage 2, certificates of the new CA.
    run_pods(3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_TRUE(pki::signed_by(broker_cert(), new_ca));
    EXPECT_TRUE(pki::signed_by(secret("demo-operator-cert", "tls.crt"), new_ca));
    EXPECT_EQ(bundle().size(), 2u);
    std::string stage2 = annotation();
    EXPECT_NE(stage2, stage1);

    // Every broker runs them: stage 3, the old CA is no longer trusted.
    run_pods(3);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(bundle(), (std::vector<std::string>{new_ca}));
    EXPECT_EQ(pki::split_certificates(secret("demo-broker-certs", "cluster-ca.crt")),
              (std::vector<std::string>{new_ca}));
    EXPECT_NE(annotation(), stage2);
}

TEST_F(certificates_test, the_force_renew_annotation_renews_a_ca_and_is_removed) {
    (void)api.put(kube::kinds::cluster, secured_cluster(1));
    (void)reconciler.reconcile("ns/demo");
    std::string old_ca = secret("demo-cluster-ca", "ca.crt");
    auto s = api.object(kube::kinds::secret, "ns", "demo-cluster-ca").value();
    s["metadata"]["annotations"] = obj({{force_renew_annotation, str("true")}});
    (void)api.put(kube::kinds::secret, s);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_NE(secret("demo-cluster-ca", "ca.crt"), old_ca);
    EXPECT_EQ(bundle().size(), 2u);
    auto after = api::parse_meta(api.object(kube::kinds::secret, "ns", "demo-cluster-ca").value());
    EXPECT_FALSE(after.annotations.contains(force_renew_annotation));
}

TEST_F(certificates_test, a_cluster_without_a_security_section_is_secured) {
    json c = cluster_object(1);
    c["spec"].erase("security");
    (void)api.put(kube::kinds::cluster, c);
    EXPECT_FALSE(reconciler.reconcile("ns/demo").failure);
    EXPECT_FALSE(secret("demo-broker-certs", "broker.pem").empty());
    auto cm = api.object(kube::kinds::config_map, "ns", "demo-config").value();
    EXPECT_NE(cm.at("data").at("broker.yaml").as_string().find("INTERNAL:SASL_SSL"),
              std::string::npos);
}

TEST_F(certificates_test, the_operator_identity_is_read_back_for_topics) {
    (void)api.put(kube::kinds::cluster, secured_cluster(1));
    auto parsed = api::parse_cluster(secured_cluster(1));
    ASSERT_TRUE(parsed);
    EXPECT_FALSE(load_operator_tls(api, parsed.value()));  // no Secret yet: an error
    (void)reconciler.reconcile("ns/demo");
    auto tls = load_operator_tls(api, parsed.value());
    ASSERT_TRUE(tls);
    ASSERT_TRUE(tls.value());
    EXPECT_TRUE(pki::signed_by(tls.value()->cert_pem, tls.value()->ca_pem));
    auto open = api::parse_cluster(cluster_object(1));
    auto none = load_operator_tls(api, open.value());
    ASSERT_TRUE(none);
    EXPECT_FALSE(none.value());
}

TEST_F(certificates_test, tls_authentication_without_tls_is_an_invalid_spec) {
    json c = cluster_object(1);
    c["spec"]["security"] =
        obj({{"listeners", obj({{"internal", obj({{"tls", boolean(false)},
                                                  {"authentication", str("tls")}})}})}});
    (void)api.put(kube::kinds::cluster, c);
    (void)reconciler.reconcile("ns/demo");
    auto stored = api.object(kube::kinds::cluster, "ns", "demo").value();
    EXPECT_NE(stored.at("status").serialize().find(
                  "authentication tls (client certificates) needs tls: true"),
              std::string::npos)
        << stored.at("status").serialize();
    EXPECT_TRUE(secret_writes().empty());
}

}  // namespace
}  // namespace spool::op::reconcilers
