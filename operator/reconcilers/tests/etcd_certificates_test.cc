// etcd over TLS (api::etcd_tls_spec, reconcilers/etcd_certificates.h) against the in-memory API
// server: a Cluster on the chart's TLS etcd gets a client certificate signed by the etcd CA, the
// etcd.tls.* broker keys and the mounted files; it is kept while valid and re-issued when it
// nears expiry or the etcd CA changes; a missing etcd CA holds the Cluster back (retried); an
// https endpoint without a CA is an InvalidSpec condition (the brokers would crash-loop); an
// external etcd's Secrets are mounted as named.

#include "operator/builders/security.h"
#include "operator/kube/config.h"
#include "operator/kube/testing/fake_client.h"
#include "operator/reconcilers/cluster_reconciler.h"
#include "operator/reconcilers/pki.h"
#include "operator/reconcilers/tests/fakes.h"
#include "operator/status/conditions.h"

#include <gtest/gtest.h>

namespace spool::op::reconcilers {
namespace {

using kube::testing::fake_client;
using testing::cluster_object;
using testing::fixed_admins;
using testing::fixed_health;

constexpr int64_t day = 86400;

// A plaintext-listener Cluster naming no etcd: it takes the operator's default (the chart's).
json default_etcd_cluster() {
    json c = cluster_object(3);
    c["spec"]["metadataStore"] = json::object();
    return c;
}

struct etcd_tls_test : ::testing::Test {
    fake_client api;
    event_recorder events{api};
    fixed_health health;
    fixed_admins admins;
    cluster_reconciler reconciler{api, events, health, admins};
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    pki::key_and_certificate etcd_ca;

    void SetUp() override {
        reconciler.set_clock([this] { return now; });
        reconciler.set_operator_defaults(
            {{"https://etcd-0.etcd.spool.svc:2379", "https://etcd-1.etcd.spool.svc:2379"},
             "spool",
             "spool/etcd-tls"});
        put_etcd_ca(pki::make_ca("etcd-ca", 3650, now).value());
    }
    void put_etcd_ca(pki::key_and_certificate ca) {
        etcd_ca = std::move(ca);
        (void)api.put(
            kube::kinds::secret,
            obj({{"apiVersion", str("v1")},
                 {"kind", str("Secret")},
                 {"metadata", obj({{"name", str("etcd-tls")}, {"namespace", str("spool")}})},
                 {"data", obj({{"ca.crt", str(kube::base64_encode(etcd_ca.cert_pem))},
                               {"ca.key", str(kube::base64_encode(etcd_ca.key_pem))}})}}));
    }
    std::string secret(const std::string& name, const std::string& key) {
        return testing::secret_value(api, "ns", name, key);
    }
    std::string broker_config() {
        auto cm = api.object(kube::kinds::config_map, "ns", "demo-config").value();
        return get_string(cm.at("data"), "broker.yaml");
    }
    json pod_spec() {
        return api.object(kube::kinds::statefulset, "ns", "demo")
            .value()
            .at("spec")
            .at("template")
            .at("spec");
    }
    // The Degraded condition, where a pass that stopped says why.
    api::condition degraded() {
        auto parsed =
            api::parse_cluster(api.object(kube::kinds::cluster, "ns", "demo").value()).value();
        const auto* c = status::find_condition(parsed.status.conditions, "Degraded");
        return c ? *c : api::condition{};
    }
};

TEST_F(etcd_tls_test, a_cluster_on_the_chart_etcd_gets_a_client_certificate_and_the_tls_keys) {
    (void)api.put(kube::kinds::cluster, default_etcd_cluster());
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_FALSE(r.failure) << r.failure->message;
    std::string cert = secret("demo-etcd-client", "tls.crt");
    ASSERT_FALSE(cert.empty());
    EXPECT_TRUE(pki::signed_by(cert, etcd_ca.cert_pem));
    EXPECT_EQ(pki::common_name(cert), "ns.demo-broker");
    EXPECT_TRUE(pki::subject_alt_names(cert).empty());  // nothing for etcd to check the address against
    EXPECT_EQ(secret("demo-etcd-client", "ca.crt"), etcd_ca.cert_pem);
    EXPECT_FALSE(secret("demo-etcd-client", "tls.key").empty());

    std::string config = broker_config();
    for (const auto* line :
         {"etcd.endpoints: \"https://etcd-0.etcd.spool.svc:2379,https://etcd-1.etcd.spool.svc:2379\"",
          "etcd.tls.ca.location: \"/etc/spool-etcd-tls/ca.crt\"",
          "etcd.tls.certificate.location: \"/etc/spool-etcd-tls/client.crt\"",
          "etcd.tls.key.location: \"/etc/spool-etcd-tls/client.key\"",
          "etcd.tls.required: \"true\""}) {
        EXPECT_NE(config.find(line), std::string::npos) << line << " not in\n" << config;
    }
    json spec = pod_spec();
    bool volume = false;
    for (const auto& v : spec.at("volumes").as_array()) {
        if (get_string(v, "name") == "etcd-tls") {
            volume = true;
            const auto& sources = v.at("projected").at("sources").as_array();
            ASSERT_EQ(sources.size(), 2u);
            EXPECT_EQ(get_string(sources.at(0).at("secret"), "name"), "demo-etcd-client");
            EXPECT_EQ(get_string(sources.at(1).at("secret"), "name"), "demo-etcd-client");
        }
    }
    EXPECT_TRUE(volume);
    bool mounted = false;
    for (const auto& m : spec.at("containers").at(0).at("volumeMounts").as_array()) {
        mounted |= get_string(m, "name") == "etcd-tls" &&
                   get_string(m, "mountPath") == "/etc/spool-etcd-tls";
    }
    EXPECT_TRUE(mounted);

    // Kept while valid; re-issued near expiry (validityDays 365, renewBeforeDays 30 by default).
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(secret("demo-etcd-client", "tls.crt"), cert);
    now += 336 * day;
    (void)reconciler.reconcile("ns/demo");
    std::string renewed = secret("demo-etcd-client", "tls.crt");
    EXPECT_NE(renewed, cert);
    EXPECT_TRUE(pki::signed_by(renewed, etcd_ca.cert_pem));
}

TEST_F(etcd_tls_test, a_new_etcd_ca_reissues_the_client_certificate_and_the_trusted_ca) {
    (void)api.put(kube::kinds::cluster, default_etcd_cluster());
    ASSERT_FALSE(reconciler.reconcile("ns/demo").failure);
    std::string cert = secret("demo-etcd-client", "tls.crt");
    put_etcd_ca(pki::make_ca("etcd-ca-2", 3650, now).value());
    ASSERT_FALSE(reconciler.reconcile("ns/demo").failure);
    EXPECT_NE(secret("demo-etcd-client", "tls.crt"), cert);
    EXPECT_TRUE(pki::signed_by(secret("demo-etcd-client", "tls.crt"), etcd_ca.cert_pem));
    EXPECT_EQ(secret("demo-etcd-client", "ca.crt"), etcd_ca.cert_pem);
}

TEST_F(etcd_tls_test, a_missing_etcd_ca_secret_holds_the_cluster_back_and_is_retried) {
    ASSERT_TRUE(api.erase(kube::kinds::secret, "spool", "etcd-tls"));
    (void)api.put(kube::kinds::cluster, default_etcd_cluster());
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_TRUE(r.failure);
    EXPECT_TRUE(r.failure->transient);
    EXPECT_FALSE(api.object(kube::kinds::statefulset, "ns", "demo"));  // no pods to crash-loop
    EXPECT_EQ(degraded().status, "True");
    EXPECT_NE(degraded().message.find("etcd CA Secret spool/etcd-tls"), std::string::npos)
        << degraded().message;
}

TEST_F(etcd_tls_test, an_https_endpoint_without_a_ca_is_an_invalid_spec_not_a_crash_loop) {
    json c = cluster_object(3);
    c["spec"]["metadataStore"]["etcd"]["endpoints"] = arr({str("https://etcd.example:2379")});
    (void)api.put(kube::kinds::cluster, c);
    auto r = reconciler.reconcile("ns/demo");
    EXPECT_FALSE(r.failure);  // terminal until the spec changes: no retries
    EXPECT_FALSE(api.object(kube::kinds::statefulset, "ns", "demo"));
    EXPECT_EQ(degraded().reason, "InvalidSpec");
    EXPECT_NE(degraded().message.find("tls.caSecret"), std::string::npos) << degraded().message;

    // tls with an http endpoint is refused too.
    c["spec"]["metadataStore"]["etcd"]["endpoints"] = arr({str("http://etcd.example:2379")});
    c["spec"]["metadataStore"]["etcd"]["tls"] = obj({{"caSecret", str("etcd-ca")}});
    (void)api.put(kube::kinds::cluster, c);
    (void)reconciler.reconcile("ns/demo");
    EXPECT_EQ(degraded().reason, "InvalidSpec");
    EXPECT_NE(degraded().message.find("not every etcd endpoint is https"), std::string::npos);
}

TEST_F(etcd_tls_test, an_external_https_etcd_mounts_the_named_secrets_and_issues_nothing) {
    json c = cluster_object(3);
    c["spec"]["metadataStore"]["etcd"]["endpoints"] = arr({str("https://etcd.example:2379")});
    c["spec"]["metadataStore"]["etcd"]["tls"] = obj({{"caSecret", str("etcd-ca")}});
    (void)api.put(kube::kinds::cluster, c);
    auto r = reconciler.reconcile("ns/demo");
    ASSERT_FALSE(r.failure) << r.failure->message;
    EXPECT_FALSE(api.object(kube::kinds::secret, "ns", "demo-etcd-client"));
    std::string config = broker_config();
    EXPECT_NE(config.find("etcd.tls.ca.location: \"/etc/spool-etcd-tls/ca.crt\""),
              std::string::npos);
    EXPECT_EQ(config.find("etcd.tls.certificate.location"), std::string::npos);  // no client cert

    c["spec"]["metadataStore"]["etcd"]["tls"]["clientSecret"] = str("etcd-client");
    (void)api.put(kube::kinds::cluster, c);
    ASSERT_FALSE(reconciler.reconcile("ns/demo").failure);
    EXPECT_NE(broker_config().find("etcd.tls.key.location: \"/etc/spool-etcd-tls/client.key\""),
              std::string::npos);
    json spec = pod_spec();
    for (const auto& v : spec.at("volumes").as_array()) {
        if (get_string(v, "name") == "etcd-tls") {
            const auto& sources = v.at("projected").at("sources").as_array();
            ASSERT_EQ(sources.size(), 2u);
            EXPECT_EQ(get_string(sources.at(0).at("secret"), "name"), "etcd-ca");
            EXPECT_EQ(get_string(sources.at(1).at("secret"), "name"), "etcd-client");
        }
    }
}

}  // namespace
}  // namespace spool::op::reconcilers
