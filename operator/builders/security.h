#pragma once

// What spec.security makes of the brokers (api/security.h): listener names and protocols, the
// TLS, SASL and authorizer keys of broker.yaml, and the names of the Secrets the operator keeps
// its certificate authorities and certificates in.
//
// A secured Cluster's listeners: INTERNAL (ports.kafka, per-pod DNS names), REPLICATION
// (ports.replication, SSL with client certificates of the cluster CA; inter-broker and the
// operator's Kafka connections), POD and EXTERNAL as spec says. Principals from certificates are
// the RFC 2253 subject, except that a subject of only a CN (the clients CA's user certificates)
// maps to that CN: User:alice for CN=alice, as with SCRAM; the brokers are
// User:CN=<cluster>-broker,O=spool.dev and the operator User:CN=spool-operator,O=spool.dev, both
// super users, names no user certificate can have.

#include "operator/api/cluster.h"

#include <map>
#include <string>

namespace spool::op::builders {

inline constexpr const char* replication_listener_name = "REPLICATION";
inline constexpr const char* internal_secure_listener_name = "INTERNAL";
// Where the etcd TLS files are mounted (one projected volume of spec.metadataStore.etcd.tls's
// Secrets), and their names there.
inline constexpr const char* etcd_tls_mount_path = "/etc/spool-etcd-tls";
inline constexpr const char* etcd_tls_volume_name = "etcd-tls";
inline constexpr const char* etcd_ca_file = "ca.crt";
inline constexpr const char* etcd_cert_file = "client.crt";
inline constexpr const char* etcd_key_file = "client.key";
// Where the broker Secret is mounted.
inline constexpr const char* tls_mount_path = "/etc/spool-tls";
// Keys of the broker Secret (<cluster>-broker-certs).
inline constexpr const char* broker_keystore_key = "broker.pem";          // key, then certificate
inline constexpr const char* cluster_ca_bundle_key = "cluster-ca.crt";    // trusted cluster CAs
inline constexpr const char* clients_ca_bundle_key = "clients-ca.crt";    // trusted clients CAs
inline constexpr const char* admin_ca_bundle_key = "admin-ca.crt";        // both, admin API
// Keys of the CA Secrets (Strimzi's names) and of the operator's own certificate Secret.
inline constexpr const char* ca_key_key = "ca.key";
inline constexpr const char* ca_cert_key = "ca.crt";
inline constexpr const char* tls_key_key = "tls.key";
inline constexpr const char* tls_cert_key = "tls.crt";
// On the broker pods' template: what the brokers must have loaded (trust bundle and signing
// CA); a change rolls them one at a time, as a config change does.
inline constexpr const char* certificates_annotation = "spool.dev/certificates";

std::string cluster_ca_secret_name(const api::cluster& c);       // <name>-cluster-ca (key)
std::string cluster_ca_cert_secret_name(const api::cluster& c);  // <name>-cluster-ca-cert
std::string clients_ca_secret_name(const api::cluster& c);       // <name>-clients-ca (key)
std::string clients_ca_cert_secret_name(const api::cluster& c);  // <name>-clients-ca-cert
std::string broker_certs_secret_name(const api::cluster& c);     // <name>-broker-certs
std::string operator_cert_secret_name(const api::cluster& c);    // <name>-operator-cert

std::string broker_principal_cn(const api::cluster& c);  // <name>-broker
inline constexpr const char* operator_principal_cn = "spool-operator";
inline constexpr const char* certificate_organization = "spool.dev";
// "User:CN=<cn>,O=spool.dev"
std::string certificate_principal(const std::string& cn);

// The name the kafka port's listener has: PLAINTEXT, or INTERNAL on a secured Cluster.
std::string internal_listener_name(const api::cluster& c);
// Kafka's security protocol of a listener: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
std::string security_protocol(const api::listener_security& l);

// The broker.yaml keys of a secured Cluster (empty for an open one): protocol map, TLS stores,
// SASL mechanisms, admin API, authorizer and super users. `listeners` is what is already there.
std::map<std::string, std::string> security_entries(const api::cluster& c);

// The etcd.tls.* broker keys of a Cluster whose etcd is https (empty otherwise): the mounted CA,
// the client certificate when there is one, and etcd.tls.required.
std::map<std::string, std::string> etcd_tls_entries(const api::cluster& c);
// The pod volume of those files: a projected volume of the CA Secret's ca.crt and the client
// Secret's tls.crt and tls.key. Null when the etcd is not https.
json etcd_tls_volume(const api::cluster& c);

// host:port the operator's Kafka connections use: the bootstrap Service's REPLICATION port on a
// secured Cluster, else its kafka port.
std::string operator_bootstrap_address(const api::cluster& c);

// Every DNS name a broker certificate carries: each pod's name in the headless Service
// (.svc and .svc.cluster.local, and wildcards of both), the headless and bootstrap Services'
// names, and the external advertisedHost when it is a name.
std::vector<std::string> broker_dns_names(const api::cluster& c, int32_t brokers);

}  // namespace spool::op::builders
