#include "operator/builders/security.h"

#include "operator/builders/common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace spool::op::builders {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return s;
}

std::string tls_file(const char* key) {
    return fmt::format("{}/{}", tls_mount_path, key);
}

// Authentication keys of one client listener.
void add_listener(std::map<std::string, std::string>& out, const api::cluster& c,
                  const std::string& name, const api::listener_security& l) {
    std::string prefix = "listener.name." + lower(name) + ".";
    switch (l.authentication) {
        case api::listener_authentication::none:
            break;
        case api::listener_authentication::tls:
            out[prefix + "ssl.client.auth"] = "required";
            break;
        case api::listener_authentication::scram_sha_512:
            out[prefix + "sasl.enabled.mechanisms"] = "SCRAM-SHA-512";
            break;
        case api::listener_authentication::oauth: {
            out[prefix + "sasl.enabled.mechanisms"] = "OAUTHBEARER";
            out[prefix + "oauthbearer.sasl.server.callback.handler.class"] =
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler";
            const auto& s = c.spec.security;
            out["sasl.oauthbearer.jwks.endpoint.url"] = s.oauth_jwks_url;
            if (!s.oauth_issuer.empty()) {
                out["sasl.oauthbearer.expected.issuer"] = s.oauth_issuer;
            }
            if (!s.oauth_audience.empty()) {
                out["sasl.oauthbearer.expected.audience"] = s.oauth_audience;
            }
            break;
        }
    }
}

bool is_ip_address(const std::string& host) {
    return !host.empty() && std::all_of(host.begin(), host.end(), [](unsigned char ch) {
        return std::isdigit(ch) || ch == '.' || ch == ':';
    });
}

}  // namespace

std::string cluster_ca_secret_name(const api::cluster& c) {
    return c.meta.name + "-cluster-ca";
}
std::string cluster_ca_cert_secret_name(const api::cluster& c) {
    return c.meta.name + "-cluster-ca-cert";
}
std::string clients_ca_secret_name(const api::cluster& c) {
    return c.meta.name + "-clients-ca";
}
std::string clients_ca_cert_secret_name(const api::cluster& c) {
    return c.meta.name + "-clients-ca-cert";
}
std::string broker_certs_secret_name(const api::cluster& c) {
    return c.meta.name + "-broker-certs";
}
std::string operator_cert_secret_name(const api::cluster& c) {
    return c.meta.name + "-operator-cert";
}
std::string broker_principal_cn(const api::cluster& c) {
    return c.meta.name + "-broker";
}
std::string certificate_principal(const std::string& cn) {
    return fmt::format("User:CN={},O={}", cn, certificate_organization);
}

std::string internal_listener_name(const api::cluster& c) {
    return api::is_secured(c) ? internal_secure_listener_name : "PLAINTEXT";
}

std::string security_protocol(const api::listener_security& l) {
    bool sasl = l.authentication == api::listener_authentication::scram_sha_512 ||
                l.authentication == api::listener_authentication::oauth;
    if (l.tls) {
        return sasl ? "SASL_SSL" : "SSL";
    }
    return sasl ? "SASL_PLAINTEXT" : "PLAINTEXT";
}

std::map<std::string, std::string> security_entries(const api::cluster& c) {
    std::map<std::string, std::string> out;
    if (!api::is_secured(c)) {
        return out;
    }
    const auto& s = c.spec.security;
    std::string internal = internal_secure_listener_name;
    std::string protocols = fmt::format("{}:{},{}:SSL", internal, security_protocol(s.internal),
                                        replication_listener_name);
    add_listener(out, c, internal, s.internal);
    if (c.spec.pod_address_listener.enabled) {
        protocols += fmt::format(",{}:{}", pod_address_listener_name, security_protocol(s.pod));
        add_listener(out, c, pod_address_listener_name, s.pod);
    }
    if (c.spec.external_listener.enabled) {
        protocols +=
            fmt::format(",{}:{}", external_listener_name, security_protocol(s.external));
        add_listener(out, c, external_listener_name, s.external);
    }
    out["listener.security.protocol.map"] = protocols;
    out["inter.broker.listener.name"] = replication_listener_name;
    // One key store everywhere; client listeners trust the clients CA (user certificates), the
    // replication listener the cluster CA (brokers, the operator), the admin API both.
    out["ssl.keystore.type"] = "PEM";
    out["ssl.keystore.location"] = tls_file(broker_keystore_key);
    out["ssl.truststore.type"] = "PEM";
    out["ssl.truststore.location"] = tls_file(clients_ca_bundle_key);
    out["ssl.principal.mapping.rules"] = "RULE:^CN=([^,]+)$/$1/,DEFAULT";
    out["listener.name.replication.ssl.truststore.location"] = tls_file(cluster_ca_bundle_key);
    out["listener.name.replication.ssl.client.auth"] = "required";
    out["http.tls.enabled"] = "true";
    out["http.authentication.enabled"] = "true";
    out["listener.name.http.ssl.truststore.location"] = tls_file(admin_ca_bundle_key);
    out["listener.name.http.ssl.client.auth"] = "requested";
    if (s.authorization) {
        out["authorizer.class.name"] = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    }
    std::string supers = certificate_principal(broker_principal_cn(c)) + ";" +
                         certificate_principal(operator_principal_cn);
    for (const auto& u : s.super_users) {
        supers += ";" + (u.rfind("User:", 0) == 0 ? u : "User:" + u);
    }
    out["super.users"] = supers;
    return out;
}

std::map<std::string, std::string> etcd_tls_entries(const api::cluster& c) {
    std::map<std::string, std::string> out;
    const auto& tls = c.spec.metadata_store.etcd_tls;
    if (!api::uses_etcd(c) || !tls.enabled()) {
        return out;
    }
    auto file = [](const char* name) { return fmt::format("{}/{}", etcd_tls_mount_path, name); };
    out["etcd.tls.ca.location"] = file(etcd_ca_file);
    if (!tls.client_secret.empty()) {
        out["etcd.tls.certificate.location"] = file(etcd_cert_file);
        out["etcd.tls.key.location"] = file(etcd_key_file);
    }
    out["etcd.tls.required"] = "true";
    return out;
}

json etcd_tls_volume(const api::cluster& c) {
    const auto& tls = c.spec.metadata_store.etcd_tls;
    if (!api::uses_etcd(c) || !tls.enabled()) {
        return json::null();
    }
    auto item = [](const char* key, const char* path) {
        return obj({{"key", str(key)}, {"path", str(path)}});
    };
    json sources =
        arr({obj({{"secret", obj({{"name", str(tls.ca_secret)},
                                  {"items", arr({item(ca_cert_key, etcd_ca_file)})}})}})});
    if (!tls.client_secret.empty()) {
        sources[sources.size()] =
            obj({{"secret", obj({{"name", str(tls.client_secret)},
                                 {"items", arr({item(tls_cert_key, etcd_cert_file),
                                                item(tls_key_key, etcd_key_file)})}})}});
    }
    return obj({{"name", str(etcd_tls_volume_name)},
                {"projected", obj({{"sources", sources}, {"defaultMode", num(0440)}})}});
}

std::string operator_bootstrap_address(const api::cluster& c) {
    if (!api::is_secured(c)) {
        return bootstrap_address(c);
    }
    return fmt::format("{}.{}.svc:{}", client_service_name(c), c.meta.namespace_,
                       c.spec.replication_port);
}

std::vector<std::string> broker_dns_names(const api::cluster& c, int32_t brokers) {
    std::vector<std::string> out;
    const std::string& ns = c.meta.namespace_;
    std::string headless = headless_service_name(c);
    for (int32_t i = 0; i < brokers; ++i) {
        out.push_back(pod_dns_name(c, i));
        out.push_back(pod_dns_name(c, i) + ".cluster.local");
    }
    out.push_back(fmt::format("*.{}.{}.svc", headless, ns));
    out.push_back(fmt::format("*.{}.{}.svc.cluster.local", headless, ns));
    for (const auto& service : {headless, client_service_name(c)}) {
        out.push_back(service);
        out.push_back(fmt::format("{}.{}", service, ns));
        out.push_back(fmt::format("{}.{}.svc", service, ns));
        out.push_back(fmt::format("{}.{}.svc.cluster.local", service, ns));
    }
    const auto& ext = c.spec.external_listener;
    if (ext.enabled && !ext.advertised_host.empty() && !is_ip_address(ext.advertised_host)) {
        out.push_back(ext.advertised_host);
    }
    return out;
}

}  // namespace spool::op::builders
