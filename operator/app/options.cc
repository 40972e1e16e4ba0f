#include "operator/app/options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <iostream>

namespace spool::op::app {

namespace po = boost::program_options;

std::optional<options> parse_options(int argc, char** argv, int& exit_code) {
    options o;
    std::string etcd_endpoints;
    po::options_description desc("spool-operator: runs Spool clusters on Kubernetes");
    desc.add_options()("help,h", "show this help")                              //
        ("version", po::bool_switch(&o.version), "print the version and exit")  //
        ("kubeconfig", po::value(&o.kubeconfig),
         "kubeconfig file (default: $KUBECONFIG, else the in-cluster service account)")  //
        ("context", po::value(&o.context), "kubeconfig context (default: current)")      //
        ("namespace", po::value(&o.namespace_),
         "namespace to watch (default: all namespaces)")  //
        ("metrics-port", po::value(&o.metrics_port)->default_value(o.metrics_port),
         "port of /metrics and /healthz, 0 to disable")  //
        ("leader-elect", po::bool_switch(&o.leader_elect),
         "run only while holding a coordination.k8s.io Lease")  //
        ("leader-election-namespace", po::value(&o.leader_election_namespace),
         "namespace of the Lease (default: the operator's namespace)")  //
        ("leader-election-id",
         po::value(&o.leader_election_id)->default_value(o.leader_election_id),
         "name of the Lease")  //
        ("apply-crds", po::bool_switch(&o.apply_crds),
         "server-side apply the built-in CRDs at start (helm upgrade does not update CRDs)")  //
        ("kafka-bootstrap", po::value(&o.kafka_bootstrap),
         "Kafka bootstrap address for every Cluster (when running outside the cluster)")  //
        ("default-etcd-endpoints", po::value(&etcd_endpoints),
         "etcd client URLs (comma-separated) for Clusters whose spec.metadataStore names none; "
         "the chart sets its own etcd here")  //
        ("default-broker-image",
         po::value(&o.default_broker_image)->default_value(o.default_broker_image),
         "broker image of Clusters whose spec.image is empty; the chart sets its broker.image "
         "here")  //
        ("default-etcd-ca-secret", po::value(&o.default_etcd_ca_secret),
         "<namespace>/<name> of the Secret (ca.crt, ca.key) of the CA of the default etcd: "
         "Clusters on that etcd get a client certificate it signs and https settings; the chart "
         "sets its etcd's here")  //
        ("resync-period",
         po::value(&o.resync_period_seconds)->default_value(o.resync_period_seconds),
         "seconds between full passes over every Cluster and Topic, event or not (repairs "
         "drift no event reports); 0 disables")  //
        ("log-level", po::value(&o.log_level)->default_value(o.log_level),
         "trace, debug, info, warn or error");
    po::variables_map vm;
    try {
        po::store(po::parse_command_line(argc, argv, desc), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "spool-operator: " << e.what() << "\n" << desc << "\n";
        exit_code = 2;
        return std::nullopt;
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        exit_code = 0;
        return std::nullopt;
    }
    if (o.resync_period_seconds < 0) {
        std::cerr << "spool-operator: --resync-period must be >= 0\n";
        exit_code = 2;
        return std::nullopt;
    }
    for (size_t start = 0; start < etcd_endpoints.size();) {
        size_t comma = std::min(etcd_endpoints.find(',', start), etcd_endpoints.size());
        if (comma > start) {
            o.default_etcd_endpoints.push_back(etcd_endpoints.substr(start, comma - start));
        }
        start = comma + 1;
    }
    return o;
}

}  // namespace spool::op::app
