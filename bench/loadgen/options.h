#pragma once

// Command-line options of spool-loadgen. Every scenario of bench/run.sh is one invocation, so the
// same binary, with the same librdkafka settings, drives Spool, Apache Kafka and the mock cluster.

#include <cstdint>
#include <map>
#include <string>

namespace spool::bench {

enum class mode { produce, consume, latency, first_produce, delete_topic };

struct options {
    mode run_mode = mode::produce;
    std::string bootstrap;      // empty with mock_cluster: an in-process librdkafka mock cluster
    bool mock_cluster = false;  // produce and consume only
    std::string topic = "bench";
    int partitions = 1;
    int replication_factor = 1;  // of the topic the loadgen creates when it is missing
    int record_size = 1024;
    int64_t records = 1'000'000;
    std::string acks = "1";
    double rate_mb_per_s = 0;     // latency mode: offered load
    double duration_s = 10;       // latency / first_produce limit
    std::string broker_pid_file;  // first_produce: the broker process whose start time counts
    // --client-defaults: librdkafka's own defaults (what users run), no tuned settings below;
    // -X/-C settings still apply.
    bool client_defaults = false;
    // -X/-C settings, plus unless client_defaults the tuned ones (tuned_producer_conf, ...) for
    // keys not given.
    std::map<std::string, std::string> producer_conf;
    std::map<std::string, std::string> consumer_conf;
    // -S settings for every client handle (producer, consumer, admin): security.protocol,
    // sasl.*, ssl.* (bench/security.sh).
    std::map<std::string, std::string> client_conf;
};

// The loadgen's tuned settings (the "tuned" rows of the benchmark).
inline const std::map<std::string, std::string> tuned_producer_conf = {
    {"linger.ms", "5"},
    {"batch.size", "1000000"},
    {"compression.codec", "none"},
    {"queue.buffering.max.kbytes", "1048576"},
    {"queue.buffering.max.messages", "1000000"}};
inline const std::map<std::string, std::string> tuned_consumer_conf = {
    {"fetch.wait.max.ms", "100"}, {"queued.max.messages.kbytes", "262144"}};

// Parses argv; prints usage and exits on error.
options parse_options(int argc, char** argv);

}  // namespace spool::bench
