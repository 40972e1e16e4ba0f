#include "operator/reconcilers/certificates.h"

#include "operator/builders/common.h"
#include "operator/builders/security.h"
#include "operator/reconcilers/cluster_context.h"
#include "operator/reconcilers/external_hosts.h"
#include "operator/reconcilers/pki.h"
#include "operator/reconcilers/secret_io.h"

#include <fmt/format.h>
#include <openssl/sha.h>

#include <algorithm>
#include <map>
#include <set>

namespace spool::op::reconcilers {

namespace {

std::string short_hash(const std::string& text) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    std::string out;
    for (int i = 0; i < 6; ++i) {
        out += fmt::format("{:02x}", digest[i]);
    }
    return out;
}

std::string join(const std::vector<std::string>& certs) {
    std::string out;
    for (const auto& c : certs) {
        out += c;
    }
    return out;
}

bool expiring(const std::string& cert_pem, int64_t now, const api::security_spec& s) {
    auto end = pki::not_after(cert_pem);
    return !end || *end - int64_t{s.renew_before_days} * 86400 <= now;
}

// One CA: its key Secret and its trust bundle Secret.
struct ca_state {
    pki::key_and_certificate current;
    std::vector<std::string> bundle;  // current first
    bool renewed = false;
};

result<ca_state> ensure_ca(kube::client& api, const api::cluster& c, const std::string& key_name,
                           const std::string& cert_name, const std::string& cn, int64_t now) {
    const auto& s = c.spec.security;
    const std::string& ns = c.meta.namespace_;
    auto key_secret = read_secret(api, ns, key_name);
    if (!key_secret) {
        return key_secret.error();
    }
    auto cert_secret = read_secret(api, ns, cert_name);
    if (!cert_secret) {
        return cert_secret.error();
    }
    ca_state out;
    const auto& kd = key_secret.value().data;
    auto key = kd.find(builders::ca_key_key);
    auto cert = kd.find(builders::ca_cert_key);
    bool usable = key != kd.end() && cert != kd.end() && pki::not_after(cert->second);
    if (usable) {
        out.current = {key->second, cert->second};
        auto b = cert_secret.value().data.find(builders::ca_cert_key);
        for (const auto& old : pki::split_certificates(
                 b == cert_secret.value().data.end() ? std::string() : b->second)) {
            auto end = pki::not_after(old);
            if (old != out.current.cert_pem && end && *end > now) {
                out.bundle.push_back(old);  // still valid: keep trusting it
            }
        }
    }
    bool forced = key_secret.value().annotations.contains(force_renew_annotation);
    if (!usable || forced || expiring(out.current.cert_pem, now, s)) {
        auto made = pki::make_ca(cn, s.validity_days, now);
        if (!made) {
            return made.error();
        }
        if (usable) {
            out.bundle.insert(out.bundle.begin(), out.current.cert_pem);
            out.renewed = true;
        }
        out.current = std::move(made).value();
    }
    out.bundle.insert(out.bundle.begin(), out.current.cert_pem);
    if (auto w = write_secret(api, c, key_name, key_secret.value(),
                              {{builders::ca_key_key, out.current.key_pem},
                               {builders::ca_cert_key, out.current.cert_pem}});
        !w) {
        return w.error();
    }
    if (forced) {
        // kubectl annotate wrote it with another field manager: a merge patch removes it.
        (void)api.merge_patch(kube::kinds::secret, ns, key_name,
                              obj({{"metadata", obj({{"annotations",
                                                      obj({{force_renew_annotation,
                                                            json::null()}})}})}}));
    }
    if (auto w = write_secret(api, c, cert_name, cert_secret.value(),
                              {{builders::ca_cert_key, join(out.bundle)}});
        !w) {
        return w.error();
    }
    return out;
}

// The CA of `bundle` that signed `cert_pem`; empty when none did.
std::string signer(const std::string& cert_pem, const std::vector<std::string>& bundle) {
    for (const auto& ca : bundle) {
        if (pki::signed_by(cert_pem, ca)) {
            return ca;
        }
    }
    return {};
}

std::string certificate_of(const std::string& pem) {
    auto certs = pki::split_certificates(pem);
    return certs.empty() ? std::string() : certs.front();
}

std::string annotation_value(const std::vector<std::string>& cluster_bundle,
                             const std::vector<std::string>& clients_bundle,
                             const std::string& broker_signer) {
    return short_hash(join(cluster_bundle) + join(clients_bundle)) + "." +
           short_hash(broker_signer);
}

// Whether every broker pod (spec.replicas of them) is ready and runs with `annotation`.
bool every_broker_has(kube::client& api, const api::cluster& c, const std::string& annotation) {
    auto pods = api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
    if (!pods) {
        return false;
    }
    int32_t count = 0;
    for (const auto& pod : pods.value().items) {
        auto meta = api::parse_meta(pod);
        auto a = meta.annotations.find(builders::certificates_annotation);
        if (a == meta.annotations.end() || a->second != annotation || !pod_ready(pod) ||
            meta.deleting) {
            return false;
        }
        ++count;
    }
    return count >= c.spec.replicas;
}

bool is_ipv4(const std::string& host) {
    return !host.empty() && std::all_of(host.begin(), host.end(), [](char ch) {
        return std::isdigit(static_cast<unsigned char>(ch)) || ch == '.';
    });
}

// The broker certificate's names: every advertised DNS name, and the addresses clients reach
// brokers at when a TLS listener advertises them (pod IPs for POD, node IPs or the external
// host for a NodePort EXTERNAL listener).
pki::certificate_request broker_request(kube::client& api, const api::cluster& c, int64_t now) {
    pki::certificate_request req;
    req.now = now;
    req.common_name = builders::broker_principal_cn(c);
    req.organization = builders::certificate_organization;
    req.validity_days = c.spec.security.validity_days;
    req.dns_names = builders::broker_dns_names(c, c.spec.replicas);
    std::set<std::string> ips;
    const auto& ext = c.spec.external_listener;
    bool pod_tls = c.spec.pod_address_listener.enabled && c.spec.security.pod.tls;
    bool node_tls = ext.enabled && c.spec.security.external.tls &&
                    ext.type == api::external_type::node_port;
    if (node_tls && is_ipv4(ext.advertised_host)) {
        ips.insert(ext.advertised_host);
    }
    if (pod_tls || (node_tls && ext.advertised_host.empty())) {
        auto pods =
            api.list(kube::kinds::pod, c.meta.namespace_, {builders::selector_string(c), ""});
        if (pods) {
            for (const auto& pod : pods.value().items) {
                const json* st = find(pod, "status");
                std::string pod_ip = st ? get_string(*st, "podIP") : "";
                std::string host_ip = st ? get_string(*st, "hostIP") : "";
                if (pod_tls && !pod_ip.empty()) {
                    ips.insert(pod_ip);
                }
                if (node_tls && ext.advertised_host.empty() && !host_ip.empty()) {
                    ips.insert(host_ip);
                }
            }
        }
    }
    // A LoadBalancer listener advertises each Service's address once it has one: a name or an
    // address the certificate must carry (a new one joins on the next pass).
    if (ext.enabled && c.spec.security.external.tls &&
        ext.type == api::external_type::load_balancer) {
        auto services =
            api.list(kube::kinds::service, c.meta.namespace_, {builders::selector_string(c), ""});
        if (services) {
            for (const auto& [ordinal, host] : load_balancer_hosts(services.value().items)) {
                if (is_ipv4(host)) {
                    ips.insert(host);
                } else {
                    req.dns_names.push_back(host);
                }
            }
        }
    }
    req.ip_addresses.assign(ips.begin(), ips.end());
    return req;
}

bool same_names(const std::string& cert_pem, const pki::certificate_request& req) {
    std::vector<std::string> want;
    for (const auto& d : req.dns_names) {
        want.push_back("DNS:" + d);
    }
    for (const auto& ip : req.ip_addresses) {
        want.push_back("IP:" + ip);
    }
    auto have = pki::subject_alt_names(cert_pem);
    std::sort(want.begin(), want.end());
    std::sort(have.begin(), have.end());
    return want == have;
}

}  // namespace

result<std::optional<client_tls>> load_operator_tls(kube::client& api, const api::cluster& c) {
    if (!api::is_secured(c)) {
        return std::optional<client_tls>{};
    }
    auto s = read_secret(api, c.meta.namespace_, builders::operator_cert_secret_name(c));
    if (!s) {
        return s.error();
    }
    const auto& d = s.value().data;
    auto ca = d.find(builders::ca_cert_key);
    auto cert = d.find(builders::tls_cert_key);
    auto key = d.find(builders::tls_key_key);
    if (ca == d.end() || cert == d.end() || key == d.end()) {
        return make_error("CertificatesPending",
                          fmt::format("Secret {} with the operator's client certificate does not "
                                      "exist yet",
                                      builders::operator_cert_secret_name(c)));
    }
    return std::optional<client_tls>{client_tls{ca->second, cert->second, key->second}};
}

result<std::unique_ptr<admin_client>> connect_as_operator(kube::client& api,
                                                          admin_client_factory& admins,
                                                          const api::cluster& c,
                                                          const std::string& bootstrap) {
    auto tls = load_operator_tls(api, c);
    if (!tls) {
        return tls.error();
    }
    return admins.connect(bootstrap.empty() ? builders::operator_bootstrap_address(c) : bootstrap,
                          tls.value() ? &*tls.value() : nullptr);
}

result<certificates_outcome> reconcile_certificates(kube::client& api, const api::cluster& c,
                                                    int64_t now) {
    const auto& s = c.spec.security;
    const std::string& ns = c.meta.namespace_;
    auto cluster_ca =
        ensure_ca(api, c, builders::cluster_ca_secret_name(c),
                  builders::cluster_ca_cert_secret_name(c), c.meta.name + "-cluster-ca", now);
    if (!cluster_ca) {
        return cluster_ca.error();
    }
    auto clients_ca =
        ensure_ca(api, c, builders::clients_ca_secret_name(c),
                  builders::clients_ca_cert_secret_name(c), c.meta.name + "-clients-ca", now);
    if (!clients_ca) {
        return clients_ca.error();
    }
    auto& cca = cluster_ca.value();
    const auto& current = cca.current;
    certificates_outcome out;
    if (cca.renewed) {
        out.message = "cluster CA renewed: trusting the new one beside the old";
    } else if (clients_ca.value().renewed) {
        out.message = "clients CA renewed: trusting the new one beside the old";
    }

    // The broker certificate.
    auto broker_secret = read_secret(api, ns, builders::broker_certs_secret_name(c));
    if (!broker_secret) {
        return broker_secret.error();
    }
    std::string keystore;
    if (auto k = broker_secret.value().data.find(builders::broker_keystore_key);
        k != broker_secret.value().data.end()) {
        keystore = k->second;
    }
    std::string broker_cert = certificate_of(keystore);
    std::string broker_signer = signer(broker_cert, cca.bundle);
    auto req = broker_request(api, c, now);
    bool move_to_current = false;
    if (!broker_signer.empty() && broker_signer != current.cert_pem) {
        // Stage 2 of a renewal: only once every broker trusts the new CA.
        move_to_current =
            every_broker_has(api, c, annotation_value(cca.bundle, clients_ca.value().bundle,
                                                      broker_signer));
    }
    // During an overlap a certificate of the old CA waits for stage 2, which re-signs it anyway
    // (re-signing earlier, by the new CA, would present it to brokers that do not trust it).
    bool overlap = !broker_signer.empty() && broker_signer != current.cert_pem;
    if (broker_signer.empty() || move_to_current || !same_names(broker_cert, req) ||
        (!overlap && expiring(broker_cert, now, s))) {
        auto issued = pki::issue(current, req);
        if (!issued) {
            return issued.error();
        }
        keystore = issued.value().key_pem + issued.value().cert_pem;
        broker_signer = current.cert_pem;
        if (move_to_current && out.message.empty()) {
            out.message = "broker certificates re-signed by the new cluster CA";
        }
    }
    std::string admin_trust = join(cca.bundle) + join(clients_ca.value().bundle);
    // Stage 3: every broker runs with certificates of the current CA: the old is dropped.
    if (cca.bundle.size() > 1 && broker_signer == current.cert_pem &&
        every_broker_has(api, c, annotation_value(cca.bundle, clients_ca.value().bundle,
                                                  broker_signer))) {
        cca.bundle = {current.cert_pem};
        admin_trust = join(cca.bundle) + join(clients_ca.value().bundle);
        if (auto w = write_secret(api, c, builders::cluster_ca_cert_secret_name(c),
                                  stored_secret{true, {}, {}},
                                  {{builders::ca_cert_key, join(cca.bundle)}});
            !w) {
            return w.error();
        }
        out.message = "old cluster CA no longer trusted";
    }
    if (auto w = write_secret(api, c, builders::broker_certs_secret_name(c),
                              broker_secret.value(),
                              {{builders::broker_keystore_key, keystore},
                               {builders::cluster_ca_bundle_key, join(cca.bundle)},
                               {builders::clients_ca_bundle_key, join(clients_ca.value().bundle)},
                               {builders::admin_ca_bundle_key, admin_trust}});
        !w) {
        return w.error();
    }

    // The operator's client certificate, signed by the CA that signed the brokers'.
    auto op_secret = read_secret(api, ns, builders::operator_cert_secret_name(c));
    if (!op_secret) {
        return op_secret.error();
    }
    const auto& od = op_secret.value().data;
    std::string op_cert = od.contains(builders::tls_cert_key) ? od.at(builders::tls_cert_key) : "";
    std::string op_key = od.contains(builders::tls_key_key) ? od.at(builders::tls_key_key) : "";
    std::string op_signer = signer(op_cert, cca.bundle);
    if (op_key.empty() || op_signer.empty() ||
        (op_signer != current.cert_pem && broker_signer == current.cert_pem) ||
        (op_signer == current.cert_pem && expiring(op_cert, now, s))) {
        pki::certificate_request op_req;
        op_req.common_name = builders::operator_principal_cn;
        op_req.organization = builders::certificate_organization;
        op_req.validity_days = s.validity_days;
        op_req.now = now;
        auto issued = pki::issue(current, op_req);
        if (!issued) {
            return issued.error();
        }
        op_cert = issued.value().cert_pem;
        op_key = issued.value().key_pem;
    }
    out.operator_tls = {join(cca.bundle), op_cert, op_key};
    if (auto w = write_secret(api, c, builders::operator_cert_secret_name(c), op_secret.value(),
                              {{builders::tls_key_key, op_key},
                               {builders::tls_cert_key, op_cert},
                               {builders::ca_cert_key, out.operator_tls.ca_pem}});
        !w) {
        return w.error();
    }
    out.annotation = annotation_value(cca.bundle, clients_ca.value().bundle, broker_signer);
    return out;
}

}  // namespace spool::op::reconcilers
