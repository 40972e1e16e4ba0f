// spool-loadgen: one librdkafka-based load generator for every broker the benchmark compares.
// Prints one JSON object per run on stdout; bench/run.sh collects them into the results table.

#include "bench/loadgen/options.h"
#include "bench/loadgen/stats.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace spool::bench {
namespace {

using clock = std::chrono::steady_clock;

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch())
        .count();
}

struct kafka_deleter {
    void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using kafka_handle = std::unique_ptr<rd_kafka_t, kafka_deleter>;

struct delivery_counts {
    std::atomic<int64_t> delivered{0};
    std::atomic<int64_t> failed{0};
    std::atomic<int64_t> last_delivery_ns{0};
    std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    auto* counts = static_cast<delivery_counts*>(opaque);
    if (msg->err) {
        if (counts->failed.fetch_add(1) == 0)
            counts->first_error = rd_kafka_err2str(msg->err);
    } else {
        counts->delivered.fetch_add(1, std::memory_order_relaxed);
    }
    counts->last_delivery_ns.store(now_ns(), std::memory_order_relaxed);
}

void set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
        throw std::runtime_error("config " + key + ": " + err);
    }
}

kafka_handle make_client(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
    char err[512];
    rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
    if (!rk)
        throw std::runtime_error(std::string("rd_kafka_new: ") + err);
    return kafka_handle(rk);
}

kafka_handle make_producer(const options& o, const std::string& bootstrap,
                           delivery_counts* counts) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "acks", o.acks);
    set(conf, "queue.buffering.max.kbytes", "1048576");
    set(conf, "queue.buffering.max.messages", "1000000");
    for (const auto& [k, v] : o.producer_conf)
        set(conf, k, v);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, counts);
    return make_client(RD_KAFKA_PRODUCER, conf);
}

kafka_handle make_consumer(const std::string& bootstrap) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", "spool-loadgen");
    set(conf, "enable.auto.commit", "false");
    set(conf, "fetch.wait.max.ms", "100");
    set(conf, "isolation.level", "read_uncommitted");
    set(conf, "queued.max.messages.kbytes", "262144");
    auto rk = make_client(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(rk.get());
    return rk;
}

void assign_all(rd_kafka_t* consumer, const options& o, int64_t start_offset) {
    rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(o.partitions);
    for (int p = 0; p < o.partitions; ++p) {
        rd_kafka_topic_partition_list_add(parts, o.topic.c_str(), p)->offset = start_offset;
    }
    rd_kafka_resp_err_t err = rd_kafka_assign(consumer, parts);
    rd_kafka_topic_partition_list_destroy(parts);
    if (err)
        throw std::runtime_error(std::string("assign: ") + rd_kafka_err2str(err));
}

// Creates the topic through the Admin API; an existing topic is fine.
void ensure_topic(const options& o, const std::string& bootstrap) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    auto admin = make_client(RD_KAFKA_PRODUCER, conf);
    char err[512];
    rd_kafka_NewTopic_t* topic =
        rd_kafka_NewTopic_new(o.topic.c_str(), o.partitions, 1, err, sizeof err);
    rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.get());
    rd_kafka_CreateTopics(admin.get(), &topic, 1, nullptr, queue);
    rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, 30000);
    std::string failure;
    if (!ev) {
        failure = "CreateTopics timed out";
    } else {
        const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t** results =
            res ? rd_kafka_CreateTopics_result_topics(res, &n) : nullptr;
        if (rd_kafka_event_error(ev)) {
            failure = rd_kafka_event_error_string(ev);
        } else if (n == 1 && rd_kafka_topic_result_error(results[0]) &&
                   rd_kafka_topic_result_error(results[0]) !=
                       RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            failure = rd_kafka_topic_result_error_string(results[0]);
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_NewTopic_destroy(topic);
    if (!failure.empty())
        throw std::runtime_error("create topic " + o.topic + ": " + failure);
}

std::vector<char> make_payload(size_t size) {
    std::vector<char> payload(size);
    std::mt19937 rng(42);
    // Printable but not trivially compressible, like typical JSON-ish event data.
    for (auto& c : payload)
        c = static_cast<char>('a' + rng() % 26);
    return payload;
}

void produce_one(rd_kafka_t* rk, const options& o, void* data, size_t size, int flags) {
    while (true) {
        rd_kafka_resp_err_t err =
            rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(o.topic.c_str()), RD_KAFKA_V_VALUE(data, size),
                              RD_KAFKA_V_MSGFLAGS(flags), RD_KAFKA_V_END);
        if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
            return;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            throw std::runtime_error(std::string("produce: ") + rd_kafka_err2str(err));
        }
        rd_kafka_poll(rk, 1);
    }
}

void print_throughput(const char* mode, const options& o, int64_t records, double seconds,
                      int64_t failed) {
    double mb = static_cast<double>(records) * o.record_size / 1e6;
    std::printf(
        "{\"mode\":\"%s\",\"records\":%lld,\"failed\":%lld,\"seconds\":%.3f,"
        "\"records_per_s\":%.0f,\"mb_per_s\":%.2f}\n",
        mode, static_cast<long long>(records), static_cast<long long>(failed), seconds,
        records / seconds, mb / seconds);
}

int run_produce(const options& o, const std::string& bootstrap, bool report = true) {
    delivery_counts counts;
    auto producer = make_producer(o, bootstrap, &counts);
    auto payload = make_payload(o.record_size);
    int64_t start = now_ns();
    for (int64_t i = 0; i < o.records; ++i) {
        produce_one(producer.get(), o, payload.data(), payload.size(), 0);
        if ((i & 1023) == 0)
            rd_kafka_poll(producer.get(), 0);
    }
    rd_kafka_flush(producer.get(), 120000);
    double seconds = (counts.last_delivery_ns.load() - start) / 1e9;
    if (counts.failed)
        std::fprintf(stderr, "first delivery error: %s\n", counts.first_error.c_str());
    if (report)
        print_throughput("produce", o, counts.delivered.load(), seconds, counts.failed.load());
    return counts.failed ? 1 : 0;
}

int run_consume(const options& o, const std::string& bootstrap) {
    auto consumer = make_consumer(bootstrap);
    assign_all(consumer.get(), o, RD_KAFKA_OFFSET_BEGINNING);
    int64_t received = 0;
    int64_t start = now_ns();
    int64_t deadline = start + static_cast<int64_t>(120e9);
    while (received < o.records && now_ns() < deadline) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer.get(), 100);
        if (!msg)
            continue;
        if (!msg->err)
            ++received;
        rd_kafka_message_destroy(msg);
    }
    double seconds = (now_ns() - start) / 1e9;
    rd_kafka_consumer_close(consumer.get());
    print_throughput("consume", o, received, seconds, o.records - received);
    return received == o.records ? 0 : 1;
}

// Offers a fixed load and measures produce-to-consume latency with send stamps in the payload.
int run_latency(const options& o, const std::string& bootstrap) {
    delivery_counts counts;
    auto producer = make_producer(o, bootstrap, &counts);
    auto consumer = make_consumer(bootstrap);
    assign_all(consumer.get(), o, RD_KAFKA_OFFSET_END);

    std::atomic<bool> stop{false};
    latency_samples samples;
    int64_t warmup_until = now_ns() + static_cast<int64_t>(2e9);
    std::thread reader([&] {
        while (!stop.load()) {
            rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer.get(), 50);
            if (!msg)
                continue;
            if (!msg->err && msg->len >= sizeof(int64_t)) {
                int64_t sent;
                std::memcpy(&sent, msg->payload, sizeof sent);
                int64_t now = now_ns();
                if (sent >= warmup_until)
                    samples.add((now - sent) / 1000);
            }
            rd_kafka_message_destroy(msg);
        }
    });

    auto payload = make_payload(o.record_size);
    double per_second = o.rate_mb_per_s * 1e6 / o.record_size;
    int64_t start = now_ns();
    int64_t end = start + static_cast<int64_t>((o.duration_s + 2) * 1e9);
    int64_t sent = 0;
    while (true) {
        int64_t now = now_ns();
        if (now >= end)
            break;
        auto due = static_cast<int64_t>((now - start) / 1e9 * per_second);
        for (; sent < due; ++sent) {
            int64_t stamp = now_ns();
            std::memcpy(payload.data(), &stamp, sizeof stamp);
            produce_one(producer.get(), o, payload.data(), payload.size(), RD_KAFKA_MSG_F_COPY);
        }
        rd_kafka_poll(producer.get(), 0);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    rd_kafka_flush(producer.get(), 30000);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop = true;
    reader.join();
    rd_kafka_consumer_close(consumer.get());
    std::printf(
        "{\"mode\":\"latency\",\"rate_mb_per_s\":%.1f,\"samples\":%zu,\"failed\":%lld,"
        "\"p50_us\":%.0f,\"p99_us\":%.0f,\"p999_us\":%.0f}\n",
        o.rate_mb_per_s, samples.count(), static_cast<long long>(counts.failed.load()),
        samples.percentile(0.5), samples.percentile(0.99), samples.percentile(0.999));
    return samples.count() > 0 && counts.failed == 0 ? 0 : 1;
}

// Retries a single acks=1 produce until it succeeds; reports the time since the broker started.
int run_first_produce(const options& o, const std::string& bootstrap) {
    int64_t deadline = now_ns() + static_cast<int64_t>(o.duration_s * 1e9);
    char byte = 'x';
    while (now_ns() < deadline) {
        delivery_counts counts;
        options one = o;
        one.acks = "1";
        one.producer_conf["message.timeout.ms"] = "1000";
        one.producer_conf["linger.ms"] = "0";
        auto producer = make_producer(one, bootstrap, &counts);
        produce_one(producer.get(), one, &byte, 1, RD_KAFKA_MSG_F_COPY);
        rd_kafka_flush(producer.get(), 2000);
        if (counts.delivered == 1) {
            auto since = std::chrono::system_clock::now().time_since_epoch();
            int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(since).count();
            std::printf("{\"mode\":\"first_produce\",\"ms_since_start\":%.1f}\n",
                        (wall - o.since_epoch_ns) / 1e6);
            return 0;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::printf("{\"mode\":\"first_produce\",\"error\":\"timed out\"}\n");
    return 1;
}

int run(const options& o) {
    kafka_handle mock_holder;
    rd_kafka_mock_cluster_t* mock = nullptr;
    std::string bootstrap = o.bootstrap;
    if (o.mock_cluster) {
        rd_kafka_conf_t* conf = rd_kafka_conf_new();
        mock_holder = make_client(RD_KAFKA_PRODUCER, conf);
        mock = rd_kafka_mock_cluster_new(mock_holder.get(), 1);
        bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
        rd_kafka_mock_topic_create(mock, o.topic.c_str(), o.partitions, 1);
        // Each run has a fresh in-process cluster, so a consume run fills it first.
        if (o.run_mode == mode::consume && run_produce(o, bootstrap, false) != 0)
            return 1;
    } else if (o.run_mode == mode::produce || o.run_mode == mode::latency) {
        ensure_topic(o, bootstrap);
    }
    int rc = 0;
    switch (o.run_mode) {
        case mode::produce:
            rc = run_produce(o, bootstrap);
            break;
        case mode::consume:
            rc = run_consume(o, bootstrap);
            break;
        case mode::latency:
            rc = run_latency(o, bootstrap);
            break;
        case mode::first_produce:
            rc = run_first_produce(o, bootstrap);
            break;
    }
    if (mock)
        rd_kafka_mock_cluster_destroy(mock);
    return rc;
}

}  // namespace
}  // namespace spool::bench

int main(int argc, char** argv) {
    try {
        return spool::bench::run(spool::bench::parse_options(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spool-loadgen: %s\n", e.what());
        return 1;
    }
}
