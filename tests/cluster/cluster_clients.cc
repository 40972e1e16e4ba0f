#include "tests/cluster/cluster_clients.h"

#include "tests/cluster/cluster_harness.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef SPOOL_SOURCE_DIR
#error "SPOOL_SOURCE_DIR must name the source tree (for scripts/peers and tests/cluster/java)"
#endif

namespace spool::tests::cluster {

namespace {

namespace fs = std::filesystem;

// Single quotes for sh: values and topic names in these tests never contain one.
std::string shell_quoted(const std::string& s) {
    return "'" + s + "'";
}

std::string base64_decode(const std::string& in) {
    static const std::string chars =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t bits = 0;
    int count = 0;
    for (char c : in) {
        auto v = chars.find(c);
        if (v == std::string::npos) {
            continue;  // '=' padding
        }
        bits = (bits << 6) | static_cast<uint32_t>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xff));
        }
    }
    return out;
}

std::optional<nlohmann::json> etcdctl_json(const std::string& endpoint, const std::string& args) {
    int rc = 0;
    auto out = run_bounded("env ETCDCTL_API=3 etcdctl --command-timeout=20s --endpoints=" +
                               shell_quoted(endpoint) + " -w json " + args + " 2>/dev/null",
                           30, &rc);
    if (rc != 0) {
        return std::nullopt;
    }
    try {
        return nlohmann::json::parse(out);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

std::optional<std::vector<etcd_key>> etcdctl_get_prefix(const std::string& endpoint,
                                                        const std::string& prefix) {
    auto j = etcdctl_json(endpoint, "get --prefix " + shell_quoted(prefix));
    if (!j) {
        return std::nullopt;
    }
    std::vector<etcd_key> out;
    for (const auto& kv : j->value("kvs", nlohmann::json::array())) {
        out.push_back({base64_decode(kv.value("key", "")), base64_decode(kv.value("value", "")),
                       kv.value("version", int64_t{0}), kv.value("create_revision", int64_t{0}),
                       kv.value("mod_revision", int64_t{0})});
    }
    return out;
}

std::optional<etcd_status> etcdctl_status(const std::string& endpoint) {
    auto j = etcdctl_json(endpoint, "endpoint status");
    if (!j || !j->is_array() || j->empty()) {
        return std::nullopt;
    }
    const auto& st = j->at(0).at("Status");
    return etcd_status{st.at("header").value("revision", int64_t{0}),
                       st.value("dbSize", int64_t{0}), st.value("dbSizeInUse", int64_t{0})};
}

std::optional<nlohmann::json> kcat_metadata(const std::string& bootstrap,
                                            const std::string& topic) {
    int rc = 0;
    std::string cmd = "kcat -L -J -m 10 -b " + shell_quoted(bootstrap);
    if (!topic.empty()) {
        cmd += " -t " + shell_quoted(topic);
    }
    auto out = run_bounded(cmd + " 2>/dev/null", 20, &rc);
    if (rc != 0) {
        return std::nullopt;
    }
    try {
        return nlohmann::json::parse(out);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

bool kcat_produce(const std::string& bootstrap, const std::string& topic, int32_t partition,
                  const std::vector<std::string>& values, const std::string& extra,
                  std::string* output, int timeout_seconds) {
    auto input = fs::temp_directory_path() /
                 ("spool-cluster-produce-" + std::to_string(::getpid()) + "-" + topic);
    {
        std::ofstream f(input);
        for (const auto& v : values) {
            f << v << "\n";
        }
    }
    int rc = 0;
    // -X topic.request.required.acks=-1: a delivery report means the leader appended it.
    std::string cmd = "kcat -P -b " + shell_quoted(bootstrap) + " -t " + shell_quoted(topic) +
                      " -p " + std::to_string(partition) + " -X topic.request.required.acks=-1 " +
                      extra + " -l " + shell_quoted(input.string()) + " 2>&1";
    auto out = run_bounded(cmd, timeout_seconds, &rc);
    std::error_code ec;
    fs::remove(input, ec);
    if (output != nullptr) {
        *output = out;
    }
    // kcat exits non-zero when a message could not be delivered.
    return rc == 0 && out.find("Delivery failed") == std::string::npos;
}

std::vector<std::string> kcat_consume(const std::string& bootstrap, const std::string& topic,
                                      int32_t partition, int timeout_seconds,
                                      const std::string& extra) {
    auto out =
        run_bounded("kcat -C -q -e -o beginning -f '%s\\n' -b " + shell_quoted(bootstrap) + " -t " +
                        shell_quoted(topic) + " -p " + std::to_string(partition) + " " + extra +
                        " 2>/dev/null",
                    timeout_seconds);
    std::vector<std::string> values;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        values.push_back(line);
    }
    return values;
}

std::vector<std::string> kcat_consume_in_group(const std::string& bootstrap,
                                               const std::string& group, const std::string& topic,
                                               int count, int timeout_seconds) {
    std::string cmd = "kcat -q -b " + shell_quoted(bootstrap) + " -G " + shell_quoted(group) +
                      " -f '%s\\n' -X auto.offset.reset=earliest -X session.timeout.ms=6000 " +
                      (count > 0 ? "-c " + std::to_string(count) : std::string("-e")) + " " +
                      shell_quoted(topic) + " 2>/dev/null";
    auto out = run_bounded(cmd, timeout_seconds);
    std::vector<std::string> values;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        values.push_back(line);
    }
    return values;
}

std::string kafka_libs(std::string* why) {
    return kafka_libs_of("", why);
}

std::string kafka_libs_of(const std::string& version, std::string* why) {
    int rc = 0;
    const std::string script =
        shell_quoted(std::string(SPOOL_SOURCE_DIR) + "/scripts/peers/fetch-kafka.sh");
    // Another version than 4.1.1: its jars only (the compat classes are 4.1.1's).
    auto dir = run_bounded(
        version.empty()
            ? "bash " + script + " 2>/dev/null"
            : "env SPOOL_KAFKA_VERSION=" + shell_quoted(version) + " bash " + script +
                  " --jars-only 2>/dev/null",
        600, &rc);
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) {
        dir.pop_back();
    }
    if (rc != 0 || dir.empty() || !fs::is_directory(fs::path(dir) / "libs")) {
        *why = "Apache Kafka " + (version.empty() ? std::string("4.1.1") : version) +
               " is not in the peer cache and scripts/peers/fetch-kafka.sh could not fetch it "
               "(exit " +
               std::to_string(rc) + ")";
        return {};
    }
    return dir + "/libs";
}

std::string java_describe_cluster(const std::string& bootstrap, int* exit_code) {
    std::string why;
    auto libs = kafka_libs(&why);
    if (libs.empty()) {
        *exit_code = -1;
        return why;
    }
    // A single-file source program: the JDK compiles it in memory, no build step needed.
    std::string program =
        std::string(SPOOL_SOURCE_DIR) + "/tests/cluster/java/DescribeCluster.java";
    return run_bounded("java -XX:TieredStopAtLevel=1 -cp " + shell_quoted(libs + "/*") + " " +
                           shell_quoted(program) + " " + shell_quoted(bootstrap) + " 2>/dev/null",
                       90, exit_code);
}

namespace {

// Runs one of Kafka's command-line tools (its main class) from the peer cache through
// bootstrap with `args`; `redirect` keeps ("2>&1") or drops ("2>/dev/null") its stderr.
std::string run_kafka_tool(const char* main_class, const std::string& bootstrap,
                           const std::string& args, const char* redirect, int* exit_code) {
    std::string why;
    auto libs = kafka_libs(&why);
    if (libs.empty()) {
        *exit_code = -1;
        return why;
    }
    return run_bounded("java -XX:TieredStopAtLevel=1 -cp " + shell_quoted(libs + "/*") + " " +
                           main_class + " --bootstrap-server " + shell_quoted(bootstrap) + " " +
                           args + " " + redirect,
                       90, exit_code);
}

}  // namespace

std::string kafka_features(const std::string& bootstrap, const std::string& args,
                           int* exit_code) {
    std::string why;
    auto libs = kafka_libs_of("4.4.0", &why);
    if (libs.empty()) {
        *exit_code = -1;
        return why;
    }
    return run_bounded("java -XX:TieredStopAtLevel=1 -cp " + shell_quoted(libs + "/*") +
                           " org.apache.kafka.tools.FeatureCommand --bootstrap-server " +
                           shell_quoted(bootstrap) + " " + args + " 2>&1",
                       90, exit_code);
}

std::string kafka_topics(const std::string& bootstrap, const std::string& args, int* exit_code) {
    return run_kafka_tool("org.apache.kafka.tools.TopicCommand", bootstrap, args, "2>/dev/null",
                          exit_code);
}

std::string kafka_topics_describe(const std::string& bootstrap, const std::string& topic,
                                  int* exit_code) {
    return kafka_topics(bootstrap, "--describe --topic " + shell_quoted(topic), exit_code);
}

std::string kafka_reassign_partitions(const std::string& bootstrap, const std::string& args,
                                      int* exit_code) {
    return run_kafka_tool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", bootstrap,
                          args, "2>&1", exit_code);
}

std::string kafka_configs(const std::string& bootstrap, const std::string& args, int* exit_code) {
    return run_kafka_tool("kafka.admin.ConfigCommand", bootstrap, args, "2>&1", exit_code);
}

std::string kafka_consumer_groups(const std::string& bootstrap, const std::string& args,
                                  int* exit_code) {
    return run_kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", bootstrap,
                          args, "2>&1", exit_code);
}

std::string kafka_acls(const std::string& bootstrap, const std::string& args, int* exit_code) {
    return run_kafka_tool("org.apache.kafka.tools.AclCommand", bootstrap, args, "2>&1", exit_code);
}

std::string kafka_leader_election(const std::string& bootstrap, const std::string& args,
                                  int* exit_code) {
    return run_kafka_tool("org.apache.kafka.tools.LeaderElectionCommand", bootstrap, args, "2>&1",
                          exit_code);
}

}  // namespace spool::tests::cluster
