#pragma once

// Where the API server is and how to authenticate, from a kubeconfig file (yaml-cpp) or from the
// pod's service account (in-cluster). Read once at start; a token file is re-read by the client
// on every request because bound service-account tokens rotate.

#include "operator/api/error.h"

#include <string>
#include <string_view>

namespace spool::op::kube {

struct config {
    std::string server;  // https://host:port
    std::string token;
    std::string token_file;
    std::string ca_pem;           // empty: system trust store
    std::string client_cert_pem;  // with client_key_pem: mutual TLS
    std::string client_key_pem;
    bool insecure_skip_tls_verify = false;
    std::string namespace_;  // the context's namespace, "default" when unset
};

// Reads a kubeconfig (the current context unless `context` is given). Relative file paths in
// the kubeconfig are resolved against its directory, like kubectl does.
result<config> load_kubeconfig(const std::string& path, const std::string& context = {});

// Reads the service account mounted into a pod (token, ca.crt, namespace) and
// KUBERNETES_SERVICE_HOST/PORT. `root` is the mount directory, overridable for tests.
result<config> load_in_cluster(
    const std::string& root = "/var/run/secrets/kubernetes.io/serviceaccount");

// base64 (standard alphabet, padding optional); nullopt-like empty result on invalid input.
result<std::string> base64_decode(const std::string& text);
// base64 with padding, as a Secret's data carries it.
std::string base64_encode(std::string_view bytes);

}  // namespace spool::op::kube
