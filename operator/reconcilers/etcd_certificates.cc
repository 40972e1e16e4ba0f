#include "operator/reconcilers/etcd_certificates.h"

#include "operator/builders/security.h"
#include "operator/reconcilers/pki.h"
#include "operator/reconcilers/secret_io.h"

#include <fmt/format.h>

namespace spool::op::reconcilers {

result<std::string> reconcile_etcd_client_certificate(kube::client& api, const api::cluster& c,
                                                      const std::string& ca_secret, int64_t now) {
    auto slash = ca_secret.find('/');
    if (slash == std::string::npos) {
        return make_error("InvalidConfig",
                          fmt::format("etcd CA Secret \"{}\" is not <namespace>/<name>", ca_secret),
                          false);
    }
    auto ca = read_secret(api, ca_secret.substr(0, slash), ca_secret.substr(slash + 1));
    if (!ca) {
        return ca.error();
    }
    const auto& cad = ca.value().data;
    auto ca_key = cad.find(builders::ca_key_key);
    auto ca_cert = cad.find(builders::ca_cert_key);
    if (!ca.value().exists || ca_key == cad.end() || ca_cert == cad.end()) {
        // Retryable: the chart creates it; a missing one is an install still under way.
        return make_error("EtcdCANotFound",
                          fmt::format("etcd CA Secret {} has no ca.key and ca.crt", ca_secret),
                          true);
    }
    std::string name = api::etcd_client_secret_name(c);
    auto current = read_secret(api, c.meta.namespace_, name);
    if (!current) {
        return current.error();
    }
    const auto& s = c.spec.security;
    const auto& data = current.value().data;
    auto cert = data.find(builders::tls_cert_key);
    auto key = data.find(builders::tls_key_key);
    auto trusted = data.find(builders::ca_cert_key);
    bool usable = cert != data.end() && key != data.end() && trusted != data.end() &&
                  trusted->second == ca_cert->second &&
                  pki::signed_by(cert->second, ca_cert->second);
    auto end = usable ? pki::not_after(cert->second) : std::nullopt;
    if (end && *end - int64_t{s.renew_before_days} * 86400 > now) {
        return std::string();
    }
    pki::certificate_request req;
    req.common_name = fmt::format("{}.{}-broker", c.meta.namespace_, c.meta.name);
    req.organization = builders::certificate_organization;
    req.validity_days = s.validity_days;
    req.now = now;
    auto issued = pki::issue({ca_key->second, ca_cert->second}, req);
    if (!issued) {
        return issued.error();
    }
    if (auto w = write_secret(api, c, name, current.value(),
                              {{builders::ca_cert_key, ca_cert->second},
                               {builders::tls_cert_key, issued.value().cert_pem},
                               {builders::tls_key_key, issued.value().key_pem}});
        !w) {
        return w.error();
    }
    return std::string(current.value().exists ? "etcd client certificate renewed"
                                              : "etcd client certificate issued");
}

}  // namespace spool::op::reconcilers
