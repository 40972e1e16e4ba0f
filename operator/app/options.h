#pragma once

// Command-line flags of spool-operator.

#include "operator/api/cluster.h"

#include <optional>
#include <string>
#include <vector>

namespace spool::op::app {

struct options {
    std::string kubeconfig;  // empty: $KUBECONFIG, then the in-cluster service account
    std::string context;
    std::string namespace_;   // watched namespace; empty watches all namespaces
    int metrics_port = 8080;  // 0 disables /metrics
    bool leader_elect = false;
    std::string leader_election_namespace;  // default: the kubeconfig / pod namespace
    std::string leader_election_id = "spool-operator-leader";
    bool apply_crds = false;
    std::string kafka_bootstrap;  // overrides every Cluster's bootstrap address (out of cluster)
    // etcd for Clusters whose spec names none (the chart's own etcd; the flag is comma-separated).
    std::vector<std::string> default_etcd_endpoints;
    // "<namespace>/<name>" of the default etcd's CA Secret (ca.crt, ca.key); empty: plaintext.
    std::string default_etcd_ca_secret;
    std::string default_broker_image = api::builtin_broker_image;
    // Every Cluster and Topic is reconciled at least this often, event or not (drift repair).
    int resync_period_seconds = 300;
    std::string log_level = "info";
    bool version = false;
};

// Parses argv; nullopt after printing help or an error (the exit code is in `exit_code`).
std::optional<options> parse_options(int argc, char** argv, int& exit_code);

}  // namespace spool::op::app
