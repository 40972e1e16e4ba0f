#pragma once

// Helpers for end-to-end tests against a real etcd + kube-apiserver (+ kube-controller-manager)
// started by scripts/k8s/start.sh as a CTest fixture (see CMakeLists.txt). Each test works in
// its own namespace, so tests never see each other's objects.

#include "operator/api/json.h"
#include "operator/kube/http_client.h"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::e2e {

using op::json;

// Paths under $SPOOL_E2E_ROOT (set by CTest).
std::string kubeconfig_path();
std::string control_plane_dir();

std::unique_ptr<op::kube::http_client> admin_client();
std::unique_ptr<op::kube::http_client> client_for_context(const std::string& context);

// Creates a fresh namespace named after the running test; deleted by the destructor.
class test_namespace {
public:
    explicit test_namespace(op::kube::client& api);
    ~test_namespace();
    const std::string& name() const { return _name; }

private:
    op::kube::client& _api;
    std::string _name;
};

// A spool-operator child process; stopped with SIGTERM by stop() or the destructor. Its output
// goes to a log file that failing tests print.
class operator_process {
public:
    explicit operator_process(std::vector<std::string> extra_args);
    ~operator_process();
    // SIGTERM and wait; returns the exit status (or -1).
    int stop();
    bool running();
    std::string log() const;
    const std::string& metrics_url() const { return _metrics_url; }
    pid_t pid() const { return _pid; }

private:
    pid_t _pid = -1;
    std::string _log_path;
    std::string _metrics_url;
};

// Polls `condition` until it holds or `timeout` passes.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(30),
                std::chrono::milliseconds every = std::chrono::milliseconds(200));

// GET over plain HTTP, for the operator's /metrics.
std::string http_get(const std::string& url);

// A free TCP port on 127.0.0.1.
int free_port();

// Runs a command, returns its exit code and (merged) output.
int run(const std::string& command, std::string* output = nullptr);

json parse(const std::string& text);

// spec.security of a plaintext Cluster (the default is TLS and SCRAM, issue #34): these tests
// run no certificates and talk plaintext to their brokers.
json plaintext_security();

// A spool.dev/v1alpha1 Cluster named "demo" with `replicas` brokers, plaintext, and defaults
// otherwise.
json demo_cluster(int replicas);

// The broker fixture's bootstrap address (host:port).
std::string broker_bootstrap();
// "host:port" of that broker's HTTP admin API; empty when it has none (Apache Kafka).
std::string broker_http_address();
// Partition count of `topic` as kcat (an independent client) sees it; -1 when it does not exist.
int kcat_partitions(const std::string& topic);

// Topic configs as Apache Kafka's own kafka-configs tool (kafka.admin.ConfigCommand, from the
// Kafka jars in the peer cache) reads them from the broker: the dynamic (topic-level) entries
// only, key -> value. nullopt when the tool is not available or failed. Takes seconds (a JVM).
bool kafka_config_tool_available();
std::optional<std::map<std::string, std::string>> kafka_topic_configs(const std::string& topic);
// Sets one topic config with the same tool, as an administrator outside the operator would.
bool kafka_set_topic_config(const std::string& topic, const std::string& key,
                            const std::string& value);

}  // namespace spool::e2e
