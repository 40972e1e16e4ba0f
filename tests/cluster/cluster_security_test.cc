// Security inside a real cluster (docs/security.md, "Between brokers"): etcd and three
// spool-broker processes whose replica fetchers reach leaders over the inter-broker listener.
//
// - REPL is SSL with mTLS (ssl.client.auth=required): the followers present the brokers'
//   certificate and check the leader's against the CA and the advertised host; clients produce
//   with kcat over SASL_SSL/PLAIN (acks=all) and every replica holds the same batches.
// - REPL is SASL_SSL with SCRAM-SHA-512 and ACLs are on: the brokers' SCRAM credential is made
//   through the PLAINTEXT listener the harness observes through (User:ANONYMOUS is the super user
//   there, a test-only bootstrap listener); without ClusterAction on the cluster a follower's
//   fetch is refused with TOPIC_AUTHORIZATION_FAILED (logged), with it replication catches up.
// - etcd over TLS with client certificates (etcd --client-cert-auth): the cluster forms,
//   creates a topic and replicates; etcd.tls.required refuses an http endpoint at start; a
//   broker trusting another CA logs the failed handshake.
//
// Certificates come from tests/integration/test_pki.h (the openssl CLI). A missing tool (openssl,
// kcat, java) fails the test; nothing is skipped. Waits are bounded, nothing asserts a duration.

#include "broker/security/scram.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "tests/cluster/cluster_clients.h"
#include "tests/cluster/cluster_harness.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_pki.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

namespace spool::tests::cluster {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string at(uint16_t port) {
    return "127.0.0.1:" + std::to_string(port);
}

// A directory with the test PKI (broker certificate CN=broker), removed at the end.
struct pki_dir {
    pki_dir() : path(fs::temp_directory_path() / ("spool-cluster-pki-" + std::to_string(::getpid()) +
                                                  "-" + std::to_string(counter++))) {
        fs::create_directories(path);
        error = make_pki(path, "broker");
    }
    ~pki_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const char* name) const { return (path / name).string(); }
    fs::path path;
    std::string error;
    static inline int counter = 0;
};

// Listeners of broker i: the harness's PLAINTEXT one, REPL (inter-broker) and CLIENT, each on
// ports of its own.
struct listener_ports {
    std::vector<uint16_t> repl, client;
    explicit listener_ports(size_t n) {
        for (size_t i = 0; i < n; ++i) {
            repl.push_back(free_port());
            client.push_back(free_port());
        }
    }
};

cluster_options secured(const pki_dir& pki, const listener_ports& ports,
                        const std::string& repl_protocol) {
    cluster_options o;
    o.overrides = {
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,REPL:" + repl_protocol +
            ",CLIENT:SASL_SSL",
        "inter.broker.listener.name=REPL",
        "ssl.keystore.type=PEM",
        "ssl.keystore.location=" + pki.file("broker.pem"),
        "ssl.truststore.type=PEM",
        "ssl.truststore.location=" + pki.file("ca.pem"),
        "listener.name.client.sasl.enabled.mechanisms=PLAIN",
        "listener.name.client.plain.sasl.jaas.config=org.apache.kafka.common.security.plain."
        "PlainLoginModule required user_alice=\"alice-secret\";",
    };
    o.overrides_for = [&ports](size_t i, uint16_t port) {
        return std::vector<std::string>{"listeners=PLAINTEXT://" + at(port) + ",REPL://" +
                                        at(ports.repl[i]) + ",CLIENT://" + at(ports.client[i])};
    };
    return o;
}

// secured() with SASL_SSL between brokers as User:broker by SCRAM-SHA-512, the StandardAuthorizer
// on, and `extra` keys.
cluster_options scram_inter_broker(const pki_dir& pki, const listener_ports& ports,
                                   std::initializer_list<std::string> extra) {
    auto options = secured(pki, ports, "SASL_SSL");
    options.overrides.insert(
        options.overrides.end(),
        {"sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512",
         "listener.name.repl.sasl.enabled.mechanisms=SCRAM-SHA-512",
         "listener.name.repl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security."
         "scram.ScramLoginModule required username=\"broker\" password=\"broker-secret\";",
         "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"});
    options.overrides.insert(options.overrides.end(), extra);
    return options;
}

std::string missing_tools() {
    std::string out;
    for (const char* tool : {"openssl", "kcat"}) {
        if (!succeeded(sh(std::string("command -v ") + tool))) {
            out += std::string(tool) + " is not installed (scripts/setup.sh --with-tests); ";
        }
    }
    return out;
}

// Polls until every replica of topic-0 holds the leader's (non-empty) batches and the ISR is
// all three brokers, at most 60 s; "" or what it saw last.
std::string wait_until_replicated(cluster_harness& cluster, const std::string& topic) {
    std::string last;
    auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
        auto m = cluster.metadata(0, {topic});
        const auto* t = m ? m->topic(topic) : nullptr;
        if (t != nullptr && t->error == 0 && t->partitions.size() == 1 &&
            t->partitions[0].leader >= 0) {
            const auto& p = t->partitions[0];
            auto leader = cluster.replica_batches(static_cast<size_t>(p.leader), topic, 0);
            bool same = !leader.empty();
            for (size_t i = 0; i < cluster.size(); ++i) {
                same = same && cluster.replica_batches(i, topic, 0) == leader;
            }
            last = describe(p) + (same ? " replicas equal" : " replicas differ");
            if (same && p.isr.size() == 3) {
                return {};
            }
        }
        std::this_thread::sleep_for(200ms);
    }
    return last;
}

// Until some broker's log holds `text`, at most `timeout`.
bool wait_for_log(cluster_harness& cluster, const std::string& text,
                  std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        for (size_t i = 0; i < cluster.size(); ++i) {
            if (cluster.broker(i).log_text().find(text) != std::string::npos) {
                return true;
            }
        }
        std::this_thread::sleep_for(200ms);
    }
    return false;
}

TEST(cluster_security, test_mtls_inter_broker_replicates_what_sasl_ssl_clients_produce) {
    auto missing = missing_tools();
    ASSERT_TRUE(missing.empty()) << missing;
    pki_dir pki;
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    listener_ports ports(3);
    auto options = secured(pki, ports, "SSL");
    options.overrides.push_back("listener.name.repl.ssl.client.auth=required");
    options.overrides.push_back(
        "listener.name.repl.ssl.principal.mapping.rules=RULE:^CN=([^,]+)$/$1/,DEFAULT");
    cluster_harness cluster(options);
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;

    const std::string topic = "mtls-replicated";
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, nullptr, 3), 0);
    std::vector<std::string> values;
    for (int i = 0; i < 50; ++i) {
        values.push_back("value-" + std::to_string(i));
    }
    std::string out;
    const std::string sasl_ssl =
        "-X security.protocol=sasl_ssl -X ssl.ca.location=" + pki.file("ca.pem") +
        " -X sasl.mechanisms=PLAIN -X sasl.username=alice -X sasl.password=alice-secret";
    ASSERT_TRUE(kcat_produce(at(ports.client[1]), topic, 0, values, sasl_ssl, &out, 60))
        << out << cluster.log_tails();
    auto why = wait_until_replicated(cluster, topic);
    EXPECT_TRUE(why.empty()) << why << "\n" << cluster.log_tails();
    // The followers reached the leader on REPL (TLS), not on the PLAINTEXT listener.
    bool over_repl = false;
    for (size_t i = 0; i < cluster.size(); ++i) {
        auto log = cluster.broker(i).log_text();
        for (size_t j = 0; j < cluster.size(); ++j) {
            over_repl = over_repl ||
                        log.find("connected to leader " + std::to_string(j) + " at " +
                                 at(ports.repl[j])) != std::string::npos;
        }
        EXPECT_EQ(log.find("TLS handshake with leader"), std::string::npos) << log;
    }
    EXPECT_TRUE(over_repl) << cluster.log_tails();
}

// AlterUserScramCredentials v0 through `port`: the error code of the one user (-999: no answer).
int16_t add_scram_credential(uint16_t port, const std::string& user, const std::string& password) {
    try {
        kafka_client c(port);
        c.set_read_timeout(10s);
        protocol::alter_user_scram_credentials_request req;
        auto& u = req.upsertions.emplace_back();
        u.name = user;
        u.mechanism = static_cast<int8_t>(broker::security::scram_mechanism::sha512);
        u.iterations = 4096;
        u.salt = broker::security::random_bytes(16);
        u.salted_password = broker::security::scram_salted_password(broker::security::scram_mechanism::sha512,
                                                            password, u.salt, u.iterations);
        auto resp = c.call<protocol::alter_user_scram_credentials_request,
                           protocol::alter_user_scram_credentials_response>(0, req);
        return resp && resp->results.size() == 1 ? resp->results[0].error_code : int16_t{-999};
    } catch (const std::exception&) {
        return -999;
    }
}

TEST(cluster_security, test_scram_inter_broker_replicates_once_the_broker_may_cluster_action) {
    auto missing = missing_tools();
    ASSERT_TRUE(missing.empty()) << missing;
    pki_dir pki;
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    listener_ports ports(3);
    // The harness's PLAINTEXT listener (and only it) is the bootstrap/admin door here.
    cluster_harness cluster(
        scram_inter_broker(pki, ports, {"allow.everyone.if.no.acl.found=false",
                                        "super.users=User:ANONYMOUS"}));
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    // The brokers' credential, before any topic: Kafka's kafka-storage format --add-scram does
    // the same before the first start.
    ASSERT_EQ(add_scram_credential(cluster.port(0), "broker", "broker-secret"), 0);

    const std::string topic = "scram-replicated";
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, nullptr, 3), 0);
    auto led = cluster.wait_for_metadata(
        0,
        [&topic](const metadata_view& m) {
            const auto* t = m.topic(topic);
            return t != nullptr && t->partitions.size() == 1 && t->partitions[0].leader >= 0;
        },
        30s, {topic});
    ASSERT_TRUE(led) << cluster.log_tails();
    const auto leader = static_cast<size_t>(led->topic(topic)->partitions[0].leader);
    // acks=1: the followers cannot fetch yet, so acks=all would wait for the ISR to shrink.
    int16_t produced = -999;
    for (auto deadline = std::chrono::steady_clock::now() + 30s;
         produced != 0 && std::chrono::steady_clock::now() < deadline;
         std::this_thread::sleep_for(200ms)) {
        produced = produce_via(cluster.port(leader), topic, 0, {"a", "b", "c"}, 1);
    }
    ASSERT_EQ(produced, 0) << cluster.log_tails();
    // Authenticated as User:broker, which may not ClusterAction: refused, and said so.
    EXPECT_TRUE(wait_for_log(cluster, "refused: TOPIC_AUTHORIZATION_FAILED", 60s))
        << cluster.log_tails();
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (i != leader) {
            EXPECT_TRUE(cluster.replica_batches(i, topic, 0).empty()) << "broker " << i;
        }
    }
    int rc = 0;
    auto acl = kafka_acls(cluster.broker(0).bootstrap(),
                          "--add --allow-principal User:broker --operation ClusterAction --cluster",
                          &rc);
    ASSERT_EQ(rc, 0) << acl;
    auto why = wait_until_replicated(cluster, topic);
    EXPECT_TRUE(why.empty()) << why << "\n" << cluster.log_tails();
}

TEST(cluster_security, test_a_cluster_on_https_etcd_with_client_certificates_replicates) {
    auto missing = missing_tools();
    ASSERT_TRUE(missing.empty()) << missing;
    pki_dir pki;
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    pki_dir other;  // another CA: its ca.pem does not vouch for etcd's certificate
    ASSERT_TRUE(other.error.empty()) << other.error;
    cluster_options options;
    options.etcd_tls = etcd_process::tls_files{pki.path / "broker.crt", pki.path / "broker.key",
                                               pki.path / "ca.pem"};
    options.overrides = {"etcd.tls.ca.location=" + pki.file("ca.pem"),
                         "etcd.tls.certificate.location=" + pki.file("client.crt"),
                         "etcd.tls.key.location=" + pki.file("client.key"),
                         "etcd.tls.required=true"};
    cluster_harness cluster(options);
    ASSERT_EQ(cluster.etcd().endpoint().rfind("https://", 0), 0u) << cluster.etcd().endpoint();
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err << "\netcd:\n" << cluster.etcd().log_text();

    const std::string topic = "over-https-etcd";
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, nullptr, 3), 0);
    auto led = cluster.wait_for_metadata(
        0,
        [&topic](const metadata_view& m) {
            const auto* t = m.topic(topic);
            return t != nullptr && t->partitions.size() == 1 && t->partitions[0].leader >= 0 &&
                   t->partitions[0].isr.size() == 3;
        },
        30s, {topic});
    ASSERT_TRUE(led) << cluster.log_tails();
    const auto leader = static_cast<size_t>(led->topic(topic)->partitions[0].leader);
    ASSERT_EQ(produce_when_open(cluster.port(leader), topic, 0, {"x", "y", "z"}, 30s), 0)
        << cluster.log_tails();
    auto why = wait_until_replicated(cluster, topic);
    EXPECT_TRUE(why.empty()) << why << "\n" << cluster.log_tails();

    // Trusting another CA: the handshake fails and the broker says why.
    auto wrong_ca = cluster.extra_broker(7);
    wrong_ca->add_override("etcd.tls.ca.location=" + other.file("ca.pem"));
    wrong_ca->add_override("etcd.connect.timeout.ms=1000");
    (void)wrong_ca->run_to_exit(15s);
    auto log = wrong_ca->log_text();
    EXPECT_NE(log.find("TLS handshake with etcd endpoint " + cluster.etcd().endpoint() +
                       " failed"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("certificate verify failed"), std::string::npos) << log;

    // etcd.tls.required with an http endpoint: refused at start, saying so.
    auto plain = cluster.extra_broker(8);
    plain->add_override("etcd.endpoints=http://127.0.0.1:2379");
    EXPECT_NE(plain->run_to_exit(30s), 0);
    log = plain->log_text();
    EXPECT_NE(log.find("etcd.tls.required is set, but etcd endpoint 'http://127.0.0.1:2379' is "
                       "not https"),
              std::string::npos)
        << log;
}

// KIP-368 between brokers: with connections.max.reauth.ms the leader ends a follower's SASL
// session after that long and closes a connection that sends anything else past it. The
// followers re-authenticate on the same connection before then (leader_client), so over five
// lifetimes of steady replication no leader closes a fetcher's connection.
TEST(cluster_security, test_followers_reauthenticate_before_their_sasl_session_expires) {
    auto missing = missing_tools();
    ASSERT_TRUE(missing.empty()) << missing;
    pki_dir pki;
    ASSERT_TRUE(pki.error.empty()) << pki.error;
    listener_ports ports(3);
    cluster_harness cluster(scram_inter_broker(
        pki, ports, {"connections.max.reauth.ms=2000", "super.users=User:ANONYMOUS;User:broker"}));
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(add_scram_credential(cluster.port(0), "broker", "broker-secret"), 0);

    const std::string topic = "reauthenticated";
    ASSERT_EQ(create_topic_via(cluster.port(0), topic, 1, 30000, nullptr, 3), 0);
    auto why = std::string("never produced");
    const auto until = std::chrono::steady_clock::now() + 10s;
    int rounds = 0;
    while (std::chrono::steady_clock::now() < until) {
        auto m = cluster.metadata(0, {topic});
        const auto* t = m ? m->topic(topic) : nullptr;
        if (t == nullptr || t->partitions.size() != 1 || t->partitions[0].leader < 0) {
            std::this_thread::sleep_for(200ms);
            continue;
        }
        const auto leader = static_cast<size_t>(t->partitions[0].leader);
        ASSERT_EQ(
            produce_when_open(cluster.port(leader), topic, 0, {"r" + std::to_string(rounds)}),
            0);
        why = wait_until_replicated(cluster, topic);
        ASSERT_TRUE(why.empty()) << why << "\n" << cluster.log_tails();
        ++rounds;
        std::this_thread::sleep_for(500ms);
    }
    EXPECT_GE(rounds, 5);
    for (size_t i = 0; i < cluster.size(); ++i) {
        EXPECT_EQ(cluster.broker(i).log_text().find("SASL session expired"), std::string::npos)
            << "broker " << i << " closed a connection whose session expired:\n"
            << cluster.log_tails();
    }
}

}  // namespace
}  // namespace spool::tests::cluster
