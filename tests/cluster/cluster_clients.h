#pragma once

// Real Kafka clients driven by the cluster tests, each bounded in time: kcat (librdkafka) for
// metadata, produce and consume; Apache Kafka 4.1.1's Java AdminClient and kafka-topics from the
// peer cache (scripts/peers/fetch-kafka.sh, as tests/compat uses it). A missing peer makes the
// calling test fail with the reason, never skip.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace spool::tests::cluster {

// kcat -L -J through `bootstrap`: librdkafka's metadata as JSON (nullopt when kcat failed).
std::optional<nlohmann::json> kcat_metadata(const std::string& bootstrap,
                                            const std::string& topic = {});

// Produces each value to topic/partition with kcat (acks=all, librdkafka's retries on); true
// when kcat reports every message delivered. `extra` is appended to the kcat command line.
bool kcat_produce(const std::string& bootstrap, const std::string& topic, int32_t partition,
                  const std::vector<std::string>& values, const std::string& extra = {},
                  std::string* output = nullptr, int timeout_seconds = 30);

// Every value in topic/partition from offset 0 to the end, read with kcat. `extra` is appended
// to the kcat command line.
std::vector<std::string> kcat_consume(const std::string& bootstrap, const std::string& topic,
                                      int32_t partition, int timeout_seconds = 30,
                                      const std::string& extra = {});

// Consumes with kcat as member of `group` (librdkafka's balanced consumer, auto commit, which
// commits the offsets of what it handed out on close); at most `count` messages (0: until the
// end of every partition). The values in the order kcat printed them.
std::vector<std::string> kcat_consume_in_group(const std::string& bootstrap,
                                               const std::string& group, const std::string& topic,
                                               int count, int timeout_seconds = 60);

// The Kafka 4.1.1 libs directory ("<cache>/kafka-4.1.1/libs"), or empty with *why set.
std::string kafka_libs(std::string* why);
// The same for another Kafka version ("4.4.0"; "" = 4.1.1).
std::string kafka_libs_of(const std::string& version, std::string* why);

// kafka-features (Kafka 4.4.0's FeatureCommand, which names metadata.version levels up to
// 4.4-IV2) through bootstrap with `args` (e.g. "describe"); its stdout and stderr.
std::string kafka_features(const std::string& bootstrap, const std::string& args,
                           int* exit_code);

// Admin.describeCluster() through bootstrap: "cluster_id=.. controller=N brokers=0@h:p,..".
std::string java_describe_cluster(const std::string& bootstrap, int* exit_code);

// kafka-topics (TopicCommand's main class) through bootstrap with `args` (e.g. "--alter --topic t
// --partitions 6"); its stdout.
std::string kafka_topics(const std::string& bootstrap, const std::string& args, int* exit_code);

// kafka-topics --describe --topic through bootstrap.
std::string kafka_topics_describe(const std::string& bootstrap, const std::string& topic,
                                  int* exit_code);

// kafka-configs (Kafka's ConfigCommand) through bootstrap with `args` (e.g. "--describe
// --entity-type topics --entity-name t"); its stdout.
std::string kafka_configs(const std::string& bootstrap, const std::string& args, int* exit_code);

// kafka-consumer-groups (Kafka 4.1.1's ConsumerGroupCommand) with `args`; stdout and stderr.
std::string kafka_consumer_groups(const std::string& bootstrap, const std::string& args,
                                  int* exit_code);

// kafka-acls (Kafka's AclCommand) through bootstrap with `args` (e.g. "--list"); its stdout
// and stderr.
std::string kafka_acls(const std::string& bootstrap, const std::string& args, int* exit_code);

// kafka-leader-election (Kafka's LeaderElectionCommand) through bootstrap with `args` (e.g.
// "--election-type PREFERRED --all-topic-partitions"); its stdout and stderr.
std::string kafka_leader_election(const std::string& bootstrap, const std::string& args,
                                  int* exit_code);

// kafka-reassign-partitions (Kafka's ReassignPartitionsCommand) through bootstrap with `args`
// (e.g. "--execute --reassignment-json-file f"); its stdout and stderr.
std::string kafka_reassign_partitions(const std::string& bootstrap, const std::string& args,
                                      int* exit_code);

// etcd as etcdctl (Debian's etcd-client) reads it: independent of Spool's own etcd client.
struct etcd_key {
    std::string key;
    std::string value;
    int64_t version = 0;  // writes since the key was created: 1 = written once
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
};
std::optional<std::vector<etcd_key>> etcdctl_get_prefix(const std::string& endpoint,
                                                        const std::string& prefix);
struct etcd_status {
    int64_t revision = 0;
    int64_t db_size = 0;         // bytes of the backend file
    int64_t db_size_in_use = 0;  // bytes of it holding live data
};
std::optional<etcd_status> etcdctl_status(const std::string& endpoint);

}  // namespace spool::tests::cluster
