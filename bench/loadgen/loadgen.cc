// spool-loadgen: one librdkafka-based load generator for every broker the benchmark compares.
// Prints one JSON object per run on stdout; bench/run.sh collects them into the results table.

#include "bench/loadgen/options.h"
#include "bench/loadgen/stats.h"

#include <arpa/inet.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
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
    // Latency mode: each acknowledged record's send-to-acknowledgement time (its payload starts
    // with the send stamp), for records sent after ack_samples_from. Delivery reports run on the
    // thread that polls the producer, the only one touching it.
    latency_samples* ack_samples = nullptr;
    int64_t ack_samples_from = 0;
    // Latency mode: the longest time between two acknowledgements after ack_samples_from (a
    // failover's stall of the producer, bench/replicated.sh's failover row).
    int64_t max_ack_gap_ns = 0;
    int64_t last_ack_ns = 0;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    auto* counts = static_cast<delivery_counts*>(opaque);
    if (msg->err) {
        if (counts->failed.fetch_add(1) == 0)
            counts->first_error = rd_kafka_err2str(msg->err);
    } else {
        counts->delivered.fetch_add(1, std::memory_order_relaxed);
        if (counts->ack_samples && msg->len >= sizeof(int64_t)) {
            int64_t sent;
            std::memcpy(&sent, msg->payload, sizeof sent);
            const int64_t now = now_ns();
            if (sent >= counts->ack_samples_from)
                counts->ack_samples->add((now - sent) / 1000);
            if (now >= counts->ack_samples_from) {
                if (counts->last_ack_ns != 0)
                    counts->max_ack_gap_ns =
                        std::max(counts->max_ack_gap_ns, now - counts->last_ack_ns);
                counts->last_ack_ns = now;
            }
        }
    }
    counts->last_delivery_ns.store(now_ns(), std::memory_order_relaxed);
}

void set(rd_kafka_conf_t* conf, const std::string& key, const std::string& value) {
    char err[512];
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
        throw std::runtime_error("config " + key + ": " + err);
    }
}

// A configuration for any client handle: the bootstrap and the -S settings (security).
rd_kafka_conf_t* new_conf(const options& o, const std::string& bootstrap) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    for (const auto& [k, v] : o.client_conf)
        set(conf, k, v);
    return conf;
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
    rd_kafka_conf_t* conf = new_conf(o, bootstrap);
    set(conf, "acks", o.acks);
    for (const auto& [k, v] : o.producer_conf)
        set(conf, k, v);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, counts);
    return make_client(RD_KAFKA_PRODUCER, conf);
}

kafka_handle make_consumer(const options& o, const std::string& bootstrap) {
    rd_kafka_conf_t* conf = new_conf(o, bootstrap);
    set(conf, "group.id", "spool-loadgen");
    set(conf, "enable.auto.commit", "false");
    set(conf, "isolation.level", "read_uncommitted");
    for (const auto& [k, v] : o.consumer_conf)
        set(conf, k, v);
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
    rd_kafka_conf_t* conf = new_conf(o, bootstrap);
    auto admin = make_client(RD_KAFKA_PRODUCER, conf);
    char err[512];
    rd_kafka_NewTopic_t* topic =
        rd_kafka_NewTopic_new(o.topic.c_str(), o.partitions, o.replication_factor, err, sizeof err);
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

// Deletes the topic through the Admin API (the runner drops each produce scenario's topic once
// measured, so a round's data fits the disk); a topic that does not exist is fine.
int run_delete_topic(const options& o, const std::string& bootstrap) {
    rd_kafka_conf_t* conf = new_conf(o, bootstrap);
    auto admin = make_client(RD_KAFKA_PRODUCER, conf);
    rd_kafka_DeleteTopic_t* topic = rd_kafka_DeleteTopic_new(o.topic.c_str());
    rd_kafka_queue_t* queue = rd_kafka_queue_new(admin.get());
    rd_kafka_DeleteTopics(admin.get(), &topic, 1, nullptr, queue);
    rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, 60000);
    std::string failure;
    if (!ev) {
        failure = "DeleteTopics timed out";
    } else {
        const rd_kafka_DeleteTopics_result_t* res = rd_kafka_event_DeleteTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t** results =
            res ? rd_kafka_DeleteTopics_result_topics(res, &n) : nullptr;
        if (rd_kafka_event_error(ev)) {
            failure = rd_kafka_event_error_string(ev);
        } else if (n == 1 && rd_kafka_topic_result_error(results[0]) &&
                   rd_kafka_topic_result_error(results[0]) !=
                       RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
            failure = rd_kafka_topic_result_error_string(results[0]);
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_queue_destroy(queue);
    rd_kafka_DeleteTopic_destroy(topic);
    if (!failure.empty()) {
        std::fprintf(stderr, "spool-loadgen: delete topic %s: %s\n", o.topic.c_str(),
                     failure.c_str());
        return 1;
    }
    return 0;
}

std::vector<char> make_payload(size_t size) {
    std::vector<char> payload(size);
    std::mt19937 rng(42);
    // Printable but not trivially compressible, like typical JSON-ish event data.
    for (auto& c : payload)
        c = static_cast<char>('a' + rng() % 26);
    return payload;
}

// partition -1 leaves the choice to librdkafka's partitioner (sticky for records without a key).
void produce_one(rd_kafka_t* rk, const options& o, void* data, size_t size, int flags,
                 int32_t partition = RD_KAFKA_PARTITION_UA) {
    while (true) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(o.topic.c_str()), RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_VALUE(data, size), RD_KAFKA_V_MSGFLAGS(flags), RD_KAFKA_V_END);
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

// spread_evenly sends record i to partition i % partitions instead of using the partitioner.
int run_produce(const options& o, const std::string& bootstrap, bool report = true,
                bool spread_evenly = false) {
    delivery_counts counts;
    auto producer = make_producer(o, bootstrap, &counts);
    auto payload = make_payload(o.record_size);
    // One acknowledged record first: connecting and fetching metadata take the same few
    // milliseconds on every broker and would otherwise dominate short runs.
    produce_one(producer.get(), o, payload.data(), payload.size(), 0);
    rd_kafka_flush(producer.get(), 30000);
    const int64_t warmup_delivered = counts.delivered.load();
    int64_t start = now_ns();
    for (int64_t i = 0; i < o.records; ++i) {
        produce_one(producer.get(), o, payload.data(), payload.size(), 0,
                    spread_evenly ? static_cast<int32_t>(i % o.partitions) : RD_KAFKA_PARTITION_UA);
        if ((i & 1023) == 0)
            rd_kafka_poll(producer.get(), 0);
    }
    rd_kafka_flush(producer.get(), 120000);
    double seconds = (counts.last_delivery_ns.load() - start) / 1e9;
    if (counts.failed)
        std::fprintf(stderr, "first delivery error: %s\n", counts.first_error.c_str());
    if (report)
        print_throughput("produce", o, counts.delivered.load() - warmup_delivered, seconds,
                         counts.failed.load());
    return counts.failed || warmup_delivered != 1 ? 1 : 0;
}

// Where each partition's log ends; with a rewind window the consumer seeks back to the start of
// the partition at its end (see run_mock).
struct rewind_window {
    std::vector<int64_t> low;
    std::vector<int64_t> high;
};

// Seeks one partition; the mock cluster sometimes refuses a seek while a fetch for the partition
// is in flight, so it retries briefly before giving up.
void seek_to(rd_kafka_t* consumer, const options& o, int32_t partition, int64_t offset) {
    std::string why;
    for (int attempt = 0; attempt < 100; ++attempt) {
        rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(parts, o.topic.c_str(), partition)->offset = offset;
        rd_kafka_error_t* error = rd_kafka_seek_partitions(consumer, parts, 10000);
        rd_kafka_resp_err_t err = parts->elems[0].err;
        rd_kafka_topic_partition_list_destroy(parts);
        if (!error && !err)
            return;
        why = error ? rd_kafka_error_string(error) : rd_kafka_err2str(err);
        if (error)
            rd_kafka_error_destroy(error);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    throw std::runtime_error("seek: " + why);
}

// Reads o.records records from the beginning of every partition. The rate counts from the first
// record on: connecting and looking up offsets is start-up latency, reported apart as
// first_record_ms, not throughput.
int run_consume(const options& o, const std::string& bootstrap,
                const rewind_window* rewind = nullptr) {
    auto consumer = make_consumer(o, bootstrap);
    assign_all(consumer.get(), o, RD_KAFKA_OFFSET_BEGINNING);
    int64_t received = 0;
    int64_t bytes = 0;
    const int64_t assigned = now_ns();
    int64_t start = 0;
    int64_t deadline = assigned + static_cast<int64_t>(120e9);
    // Gaps of 100 ms or more between two records: librdkafka's broker thread stops fetching once
    // its queue holds queued.min.messages and looks again only at its next wake-up (up to 1 s,
    // fetch.queue.backoff.ms in later versions), so these show that back-off at no cost.
    int64_t last = 0, stalls = 0, stall_ns = 0;
    while (received < o.records && now_ns() < deadline) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer.get(), 100);
        if (!msg)
            continue;
        if (!msg->err) {
            const int64_t now = now_ns();
            if (received > 0 && now - last >= 100'000'000) {
                ++stalls;
                stall_ns += now - last;
            }
            last = now;
            if (received++ == 0)
                start = now;
            bytes += static_cast<int64_t>(msg->len);
            if (rewind && msg->offset + 1 >= rewind->high[msg->partition])
                seek_to(consumer.get(), o, msg->partition, rewind->low[msg->partition]);
        }
        rd_kafka_message_destroy(msg);
    }
    const int64_t end = now_ns();
    rd_kafka_consumer_close(consumer.get());
    if (received < 2) {
        std::printf("{\"mode\":\"consume\",\"failed\":1,\"error\":\"no records\"}\n");
        return 1;
    }
    // The first record ends the start-up, so the rate is over the records after it.
    double seconds = (end - start) / 1e9;
    std::printf(
        "{\"mode\":\"consume\",\"records\":%lld,\"failed\":%lld,\"seconds\":%.3f,"
        "\"records_per_s\":%.0f,\"mb_per_s\":%.2f,\"first_record_ms\":%.1f,\"stalls\":%lld,"
        "\"stall_ms\":%.1f}\n",
        static_cast<long long>(received), static_cast<long long>(o.records - received), seconds,
        (received - 1) / seconds, bytes / 1e6 / seconds, (start - assigned) / 1e6,
        static_cast<long long>(stalls), stall_ns / 1e6);
    return received == o.records ? 0 : 1;
}

// Offers a fixed load and measures produce-to-consume latency with send stamps in the payload,
// and each record's produce latency (send to acknowledgement: with acks=all, replication).
int run_latency(const options& o, const std::string& bootstrap) {
    delivery_counts counts;
    latency_samples acked;
    int64_t warmup_until = now_ns() + static_cast<int64_t>(2e9);
    counts.ack_samples = &acked;
    counts.ack_samples_from = warmup_until;
    auto producer = make_producer(o, bootstrap, &counts);
    auto consumer = make_consumer(o, bootstrap);
    assign_all(consumer.get(), o, RD_KAFKA_OFFSET_END);

    std::atomic<bool> stop{false};
    latency_samples samples;
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
        "\"p50_us\":%.0f,\"p99_us\":%.0f,\"p999_us\":%.0f,"
        "\"ack_p50_us\":%.0f,\"ack_p99_us\":%.0f,\"ack_p999_us\":%.0f,\"ack_max_us\":%.0f,"
        "\"ack_max_gap_ms\":%.0f}\n",
        o.rate_mb_per_s, samples.count(), static_cast<long long>(counts.failed.load()),
        samples.percentile(0.5), samples.percentile(0.99), samples.percentile(0.999),
        acked.percentile(0.5), acked.percentile(0.99), acked.percentile(0.999),
        acked.percentile(1.0), counts.max_ack_gap_ns / 1e6);
    return samples.count() > 0 && counts.failed == 0 ? 0 : 1;
}

int64_t boottime_ns() {
    timespec ts{};
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct process_start {
    std::string name;          // comm, e.g. "java" or "spool-broker"
    int64_t boottime_ns = -1;  // when the kernel started the process, on CLOCK_BOOTTIME
};

// Reads the start time of the process in PID_FILE from /proc (field 22 of /proc/PID/stat, in
// clock ticks since boot). Using the kernel's start time of the broker process itself (the JVM for
// Kafka, not a wrapper script) makes both brokers' start-up clocks start at the same event.
process_start read_process_start(const std::string& pid_file) {
    process_start ps;
    std::ifstream pid_in(pid_file);
    long pid = 0;
    if (!(pid_in >> pid) || pid <= 0)
        return ps;
    std::ifstream stat_in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_in)), std::istreambuf_iterator<char>());
    auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos)
        return ps;
    ps.name = stat.substr(open + 1, close - open - 1);
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    // After "pid (comm) " the fields start at number 3; starttime is number 22.
    for (int number = 3; number <= 22 && (fields >> field); ++number) {
        if (number == 22) {
            ps.boottime_ns = std::stoll(field) * (1'000'000'000 / sysconf(_SC_CLK_TCK));
        }
    }
    return ps;
}

// True once something accepts TCP connections at HOST:PORT.
bool accepts_connections(const std::string& host_port) {
    auto colon = host_port.rfind(':');
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host_port.substr(0, colon).c_str(), host_port.substr(colon + 1).c_str(), &hints,
                    &found) != 0)
        return false;
    bool open = false;
    for (addrinfo* a = found; a && !open; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0)
            continue;
        open = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        close(fd);
    }
    freeaddrinfo(found);
    return open;
}

// Produces one acks=1 record, retrying until it is acknowledged, and reports the time since the
// broker process started. Started together with the broker. librdkafka retries a refused
// bootstrap connection only on its 1 s topic scan, which would quantise the result to whole
// seconds, so the client first polls the port every 5 ms; from there librdkafka's own steps
// (ApiVersions, Metadata that auto-creates the topic, Produce) count, with short backoffs.
int run_first_produce(const options& o, const std::string& bootstrap) {
    int64_t deadline = now_ns() + static_cast<int64_t>(o.duration_s * 1e9);
    char byte = 'x';
    while (!accepts_connections(bootstrap) && now_ns() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    while (now_ns() < deadline) {
        delivery_counts counts;
        options one = o;
        one.acks = "1";
        one.producer_conf["message.timeout.ms"] = "5000";
        one.producer_conf["linger.ms"] = "0";
        one.producer_conf["reconnect.backoff.ms"] = "10";
        one.producer_conf["reconnect.backoff.max.ms"] = "20";
        one.producer_conf["retry.backoff.ms"] = "10";
        one.producer_conf["topic.metadata.refresh.fast.interval.ms"] = "10";
        one.producer_conf["socket.connection.setup.timeout.ms"] = "1000";
        auto producer = make_producer(one, bootstrap, &counts);
        produce_one(producer.get(), one, &byte, 1, RD_KAFKA_MSG_F_COPY);
        while (counts.delivered + counts.failed == 0 && now_ns() < deadline)
            rd_kafka_poll(producer.get(), 1);
        if (counts.delivered == 1) {
            const int64_t acked = boottime_ns();
            process_start ps = read_process_start(o.broker_pid_file);
            if (ps.boottime_ns < 0) {
                std::printf(
                    "{\"mode\":\"first_produce\",\"failed\":1,\"error\":\"no broker "
                    "pid\"}\n");
                return 1;
            }
            std::printf("{\"mode\":\"first_produce\",\"ms_since_start\":%.1f,\"process\":\"%s\"}\n",
                        (acked - ps.boottime_ns) / 1e6, ps.name.c_str());
            return 0;
        }
    }
    std::printf("{\"mode\":\"first_produce\",\"failed\":1,\"error\":\"timed out\"}\n");
    return 1;
}

// librdkafka's mock cluster keeps at most 5 MiB per partition (older record batches are dropped)
// and answers a Fetch with one stored batch per partition. A consume ceiling therefore fills a
// window that fits, then reads it over and over (seeking back at the end) until o.records records.
constexpr int64_t mock_window_bytes_per_partition = 4 << 20;

// Destroys the mock cluster before the client handle it lives in, also when an exception
// unwinds (the other order hangs in rd_kafka_destroy).
struct mock_cluster_deleter {
    void operator()(rd_kafka_mock_cluster_t* mock) const { rd_kafka_mock_cluster_destroy(mock); }
};

int run_mock(const options& o) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    kafka_handle holder = make_client(RD_KAFKA_PRODUCER, conf);
    std::unique_ptr<rd_kafka_mock_cluster_t, mock_cluster_deleter> mock(
        rd_kafka_mock_cluster_new(holder.get(), 1));
    std::string bootstrap = rd_kafka_mock_cluster_bootstraps(mock.get());
    rd_kafka_mock_topic_create(mock.get(), o.topic.c_str(), o.partitions, 1);
    int rc = 1;
    if (o.run_mode == mode::produce) {
        rc = run_produce(o, bootstrap);
    } else if (o.run_mode == mode::consume) {
        options fill = o;
        // Record size plus the per-record overhead inside a batch (varints, attributes).
        fill.records = mock_window_bytes_per_partition * o.partitions / (o.record_size + 16);
        rc = run_produce(fill, bootstrap, false, true);
        if (rc == 0) {
            rewind_window window;
            auto consumer = make_consumer(o, bootstrap);
            for (int p = 0; p < o.partitions; ++p) {
                int64_t low = 0, high = 0;
                rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
                    consumer.get(), o.topic.c_str(), p, &low, &high, 10000);
                if (err || high <= low)
                    throw std::runtime_error("mock partition " + std::to_string(p) +
                                             " holds no window: " + rd_kafka_err2str(err));
                window.low.push_back(low);
                window.high.push_back(high);
            }
            consumer.reset();
            rc = run_consume(o, bootstrap, &window);
        }
    } else {
        std::fprintf(stderr,
                     "spool-loadgen: --mock supports produce and consume only: the mock cluster "
                     "answers an empty Fetch only after fetch.wait.max.ms, so latency there "
                     "measures that timer\n");
        rc = 2;
    }
    return rc;
}

int run(const options& o) {
    if (o.mock_cluster)
        return run_mock(o);
    if (o.run_mode == mode::produce || o.run_mode == mode::latency)
        ensure_topic(o, o.bootstrap);
    switch (o.run_mode) {
        case mode::produce:
            return run_produce(o, o.bootstrap);
        case mode::consume:
            return run_consume(o, o.bootstrap);
        case mode::latency:
            return run_latency(o, o.bootstrap);
        case mode::first_produce:
            return run_first_produce(o, o.bootstrap);
        case mode::delete_topic:
            return run_delete_topic(o, o.bootstrap);
    }
    return 2;
}

}  // namespace
}  // namespace spool::bench

int main(int argc, char** argv) {
    // Line-buffered, so a result line survives even if the process is killed afterwards.
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        return spool::bench::run(spool::bench::parse_options(argc, argv));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spool-loadgen: %s\n", e.what());
        return 1;
    }
}
