#include "bench/loadgen/options.h"

#include <cstdlib>
#include <iostream>
#include <string_view>

namespace spool::bench {

namespace {

[[noreturn]] void usage(const char* why) {
    std::cerr << "spool-loadgen: " << why << "\n"
              << "usage: spool-loadgen --mode produce|consume|latency|first-produce|delete-topic\n"
                 "  (--bootstrap HOST:PORT | --mock) [--topic T] [--partitions N] "
                 "[--replication-factor N]\n"
                 "  [--record-size BYTES] [--records N] [--acks 0|1|-1] [--rate-mb MB/s]\n"
                 "  [--duration SECONDS] [--broker-pid-file FILE] [--client-defaults]\n"
                 "  [-X producer.key=value]... [-C consumer.key=value]...\n"
                 "  [-S any-client.key=value]...  (every handle: security.protocol, sasl.*, ssl.*)\n";
    std::exit(2);
}

// "key=value" into map[key]; usage(why) without a '='.
void put_key_value(std::map<std::string, std::string>& map, const std::string& kv,
                   const char* why) {
    auto eq = kv.find('=');
    if (eq == std::string::npos)
        usage(why);
    map[kv.substr(0, eq)] = kv.substr(eq + 1);
}

mode parse_mode(std::string_view s) {
    if (s == "produce")
        return mode::produce;
    if (s == "consume")
        return mode::consume;
    if (s == "latency")
        return mode::latency;
    if (s == "first-produce")
        return mode::first_produce;
    if (s == "delete-topic")
        return mode::delete_topic;
    usage("unknown --mode");
}

}  // namespace

options parse_options(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage("missing value");
            return argv[++i];
        };
        if (arg == "--mode")
            o.run_mode = parse_mode(value());
        else if (arg == "--bootstrap")
            o.bootstrap = value();
        else if (arg == "--mock")
            o.mock_cluster = true;
        else if (arg == "--topic")
            o.topic = value();
        else if (arg == "--partitions")
            o.partitions = std::stoi(value());
        else if (arg == "--replication-factor")
            o.replication_factor = std::stoi(value());
        else if (arg == "--record-size")
            o.record_size = std::stoi(value());
        else if (arg == "--records")
            o.records = std::stoll(value());
        else if (arg == "--acks")
            o.acks = value();
        else if (arg == "--rate-mb")
            o.rate_mb_per_s = std::stod(value());
        else if (arg == "--duration")
            o.duration_s = std::stod(value());
        else if (arg == "--client-defaults")
            o.client_defaults = true;
        else if (arg == "--broker-pid-file")
            o.broker_pid_file = value();
        else if (arg == "-X")
            put_key_value(o.producer_conf, value(), "-X wants key=value");
        else if (arg == "-C")
            put_key_value(o.consumer_conf, value(), "-C wants key=value");
        else if (arg == "-S")
            put_key_value(o.client_conf, value(), "-S wants key=value");
        else {
            usage("unknown argument");
        }
    }
    if (!o.client_defaults) {
        o.producer_conf.insert(tuned_producer_conf.begin(), tuned_producer_conf.end());
        o.consumer_conf.insert(tuned_consumer_conf.begin(), tuned_consumer_conf.end());
    }
    if (o.bootstrap.empty() && !o.mock_cluster)
        usage("--bootstrap or --mock is required");
    if (o.run_mode == mode::first_produce && o.broker_pid_file.empty())
        usage("first-produce needs --broker-pid-file");
    if (o.record_size < 16)
        usage("--record-size must be at least 16 (latency stamps)");
    return o;
}

}  // namespace spool::bench
