#include "protocol/records/tests/rdkafka_capture.h"

#include "protocol/records/batch_parser.h"
#include "protocol/records/tests/sample_records.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <arpa/inet.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

namespace spool::protocol::records::testing {

namespace {

constexpr const char* topic = "capture";

struct rk_deleter {
    void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

struct fd_closer {
    int fd = -1;
    ~fd_closer() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};

int connect_to(const std::string& host_port) {
    std::string first = host_port.substr(0, host_port.find(','));
    auto colon = first.rfind(':');
    std::string host = first.substr(0, colon);
    std::string port = first.substr(colon + 1);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) {
        return -1;
    }
    int fd = -1;
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            break;
        }
        if (fd >= 0) {
            ::close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

bool send_all(int fd, const std::vector<uint8_t>& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
        ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, 0);
        if (n <= 0) {
            return false;
        }
        sent += static_cast<size_t>(n);
    }
    return true;
}

bool recv_all(int fd, uint8_t* out, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = ::recv(fd, out + got, n - got, 0);
        if (r <= 0) {
            return false;
        }
        got += static_cast<size_t>(r);
    }
    return true;
}

// Sends one request (header v1) and returns the response body after the correlation id.
std::optional<std::vector<uint8_t>> round_trip(int fd, int16_t api_key, int16_t version,
                                               int32_t correlation_id,
                                               const std::vector<uint8_t>& body,
                                               std::string& error) {
    std::vector<uint8_t> frame;
    wire::writer f(frame);
    f.write_i32(static_cast<int32_t>(2 + 2 + 4 + 2 + 13 + body.size()));
    f.write_i16(api_key);
    f.write_i16(version);
    f.write_i32(correlation_id);
    f.write_i16(13);
    f.write_raw("spool-capture");
    f.write_bytes(body);
    if (!send_all(fd, frame)) {
        error = "send failed";
        return std::nullopt;
    }
    uint8_t size_bytes[4];
    if (!recv_all(fd, size_bytes, 4)) {
        error = "no response";
        return std::nullopt;
    }
    std::vector<uint8_t> response(load_be32(size_bytes));
    if (response.size() < 4 || !recv_all(fd, response.data(), response.size()) ||
        static_cast<int32_t>(load_be32(response.data())) != correlation_id) {
        error = "bad response";
        return std::nullopt;
    }
    response.erase(response.begin(), response.begin() + 4);
    return response;
}

// One Fetch v4 round trip for partition 0 from offset; appends the records bytes to out and
// returns the high watermark (or -1 on failure).
int64_t fetch_v4(int fd, int32_t correlation_id, int64_t offset, std::vector<uint8_t>& out,
                 std::string& error) {
    std::vector<uint8_t> body;
    wire::writer w(body);
    w.write_i32(-1);        // replica id
    w.write_i32(100);       // max wait ms
    w.write_i32(1);         // min bytes
    w.write_i32(64 << 20);  // max bytes
    w.write_i8(0);          // read_uncommitted
    w.write_i32(1);         // topics
    w.write_i16(static_cast<int16_t>(std::char_traits<char>::length(topic)));
    w.write_raw(topic);
    w.write_i32(1);  // partitions
    w.write_i32(0);
    w.write_i64(offset);
    w.write_i32(64 << 20);
    auto response = round_trip(fd, 1, 4, correlation_id, body, error);
    if (!response) {
        return -1;
    }
    wire::reader r(*response);
    (void)r.read_i32();  // throttle
    int32_t topics = r.read_i32();
    int64_t high_watermark = -1;
    for (int32_t t = 0; t < topics && r.ok(); ++t) {
        r.skip(static_cast<uint16_t>(r.read_i16()));
        int32_t partitions = r.read_i32();
        for (int32_t p = 0; p < partitions && r.ok(); ++p) {
            (void)r.read_i32();
            int16_t code = r.read_i16();
            high_watermark = r.read_i64();
            (void)r.read_i64();  // last stable offset
            int32_t aborted = r.read_i32();
            for (int32_t a = 0; a < aborted; ++a) {
                r.skip(16);
            }
            int32_t size = r.read_i32();
            auto records = r.read_bytes(size < 0 ? 0 : static_cast<size_t>(size));
            if (code != 0) {
                error = "fetch error code " + std::to_string(code);
                return -1;
            }
            out.insert(out.end(), records.begin(), records.end());
        }
    }
    if (!r.ok()) {
        error = "malformed fetch response";
        return -1;
    }
    return high_watermark;
}

// Drops a trailing partial batch (a fetch may cut one) and returns the next offset to fetch.
int64_t complete_batches(std::vector<uint8_t>& bytes, int64_t next) {
    size_t pos = 0;
    validate_options header_only;
    header_only.origin = batch_origin::log;
    while (pos < bytes.size()) {
        auto info = read_batch_header(std::span<const uint8_t>(bytes).subspan(pos), header_only);
        if (!info) {
            break;
        }
        next = info.value().last_offset() + 1;
        pos += info.value().size;
    }
    bytes.resize(pos);
    return next;
}

using rk_ptr = std::unique_ptr<rd_kafka_t, rk_deleter>;

bool set_all(rd_kafka_conf_t* conf,
             std::initializer_list<std::pair<const char*, std::string>> settings,
             std::string& error) {
    char errstr[512];
    for (const auto& [key, value] : settings) {
        if (rd_kafka_conf_set(conf, key, value.c_str(), errstr, sizeof errstr) !=
            RD_KAFKA_CONF_OK) {
            error = errstr;
            return false;
        }
    }
    return true;
}

// A producer whose mock cluster (one broker, the capture topic) lives as long as it does.
rk_ptr mock_producer(const std::string& codec, rd_kafka_mock_cluster_t*& cluster,
                     std::string& error) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    if (!set_all(conf,
                 {{"test.mock.num.brokers", "1"},
                  {"compression.codec", codec},
                  {"enable.idempotence", "true"},
                  {"linger.ms", "50"},
                  {"batch.num.messages", "50"},
                  {"log_level", "3"}},
                 error)) {
        rd_kafka_conf_destroy(conf);
        return nullptr;
    }
    char errstr[512];
    rk_ptr rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr));
    if (!rk) {
        error = errstr;
        return nullptr;
    }
    cluster = rd_kafka_handle_mock_cluster(rk.get());
    if (cluster == nullptr || rd_kafka_mock_topic_create(cluster, topic, 1, 1) != 0) {
        error = "mock cluster unavailable";
        return nullptr;
    }
    return rk;
}

std::optional<std::string> optional_string(const void* data, size_t size) {
    if (data == nullptr) {
        return std::nullopt;
    }
    return std::string(static_cast<const char*>(data), size);
}

}  // namespace

std::vector<uint8_t> capture_librdkafka_batches(const std::string& codec, std::string& error) {
    rd_kafka_mock_cluster_t* cluster = nullptr;
    rk_ptr rk = mock_producer(codec, cluster, error);
    if (!rk) {
        return {};
    }
    for (const auto& rec : sample_records()) {
        rd_kafka_headers_t* headers = rd_kafka_headers_new(rec.headers.size());
        for (const auto& h : rec.headers) {
            rd_kafka_header_add(headers, h.key.data(), static_cast<ssize_t>(h.key.size()),
                                h.value ? h.value->data() : nullptr,
                                h.value ? static_cast<ssize_t>(h.value->size()) : 0);
        }
        // Null pointers make a null key or value; the macros need plain variables.
        const char* key = rec.key ? rec.key->data() : nullptr;
        size_t key_size = rec.key ? rec.key->size() : 0;
        char* value = rec.value ? const_cast<char*>(rec.value->data()) : nullptr;
        size_t value_size = rec.value ? rec.value->size() : 0;
        rd_kafka_resp_err_t err =
            rd_kafka_producev(rk.get(), RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_KEY(key, key_size), RD_KAFKA_V_VALUE(value, value_size),
                              RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_TIMESTAMP(rec.timestamp),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            rd_kafka_headers_destroy(headers);
            error = rd_kafka_err2str(err);
            return {};
        }
    }
    if (rd_kafka_flush(rk.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR ||
        rd_kafka_outq_len(rk.get()) != 0) {
        error = "flush timed out";
        return {};
    }

    fd_closer sock{connect_to(rd_kafka_mock_cluster_bootstraps(cluster))};
    if (sock.fd < 0) {
        error = "cannot connect to the mock broker";
        return {};
    }
    std::vector<uint8_t> batches;
    int64_t next = 0;
    for (int32_t round = 1; round < 100; ++round) {
        int64_t high_watermark = fetch_v4(sock.fd, round, next, batches, error);
        if (high_watermark < 0) {
            return {};
        }
        next = complete_batches(batches, next);
        if (next >= high_watermark) {
            return batches;
        }
    }
    error = "fetch made no progress";
    return {};
}

std::optional<std::vector<sample_record>> consume_with_librdkafka(
    const std::vector<uint8_t>& batches, size_t expected_records, std::string& error) {
    rd_kafka_mock_cluster_t* cluster = nullptr;
    rk_ptr producer = mock_producer("none", cluster, error);
    if (!producer) {
        return std::nullopt;
    }
    const std::string bootstraps = rd_kafka_mock_cluster_bootstraps(cluster);

    // Produce v3: transactional_id, acks, timeout, [topic [partition records]].
    {
        fd_closer sock{connect_to(bootstraps)};
        if (sock.fd < 0) {
            error = "cannot connect to the mock broker";
            return std::nullopt;
        }
        std::vector<uint8_t> body;
        wire::writer w(body);
        w.write_i16(-1);
        w.write_i16(1);
        w.write_i32(10000);
        w.write_i32(1);
        w.write_i16(static_cast<int16_t>(std::char_traits<char>::length(topic)));
        w.write_raw(topic);
        w.write_i32(1);
        w.write_i32(0);
        w.write_i32(static_cast<int32_t>(batches.size()));
        w.write_bytes(batches);
        auto response = round_trip(sock.fd, 0, 3, 1, body, error);
        if (!response) {
            return std::nullopt;
        }
        wire::reader r(*response);
        (void)r.read_i32();                           // topics
        r.skip(static_cast<uint16_t>(r.read_i16()));  // name
        (void)r.read_i32();                           // partitions
        (void)r.read_i32();                           // partition index
        int16_t code = r.read_i16();
        if (!r.ok() || code != 0) {
            error = "produce failed with error " + std::to_string(code);
            return std::nullopt;
        }
    }

    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    if (!set_all(conf,
                 {{"bootstrap.servers", bootstraps},
                  {"group.id", "spool-records-check"},
                  {"enable.auto.commit", "false"},
                  {"enable.partition.eof", "true"},
                  {"check.crcs", "true"},
                  {"log_level", "3"}},
                 error)) {
        rd_kafka_conf_destroy(conf);
        return std::nullopt;
    }
    char errstr[512];
    rk_ptr consumer(rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof errstr));
    if (!consumer) {
        error = errstr;
        return std::nullopt;
    }
    rd_kafka_poll_set_consumer(consumer.get());
    rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(assignment, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_resp_err_t assigned = rd_kafka_assign(consumer.get(), assignment);
    rd_kafka_topic_partition_list_destroy(assignment);
    if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
        error = rd_kafka_err2str(assigned);
        return std::nullopt;
    }

    std::vector<sample_record> out;
    for (int polls = 0; polls < 200 && out.size() < expected_records; ++polls) {
        rd_kafka_message_t* msg = rd_kafka_consumer_poll(consumer.get(), 100);
        if (msg == nullptr) {
            continue;
        }
        std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> owned(
            msg, rd_kafka_message_destroy);
        if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            continue;
        }
        if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            error = rd_kafka_message_errstr(msg);
            return std::nullopt;
        }
        sample_record r;
        r.timestamp = rd_kafka_message_timestamp(msg, nullptr);
        r.key = optional_string(msg->key, msg->key_len);
        r.value = optional_string(msg->payload, msg->len);
        rd_kafka_headers_t* headers = nullptr;
        if (rd_kafka_message_headers(msg, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char* name = nullptr;
            const void* value = nullptr;
            size_t size = 0;
            for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                               RD_KAFKA_RESP_ERR_NO_ERROR;
                 ++i) {
                r.headers.push_back({name, optional_string(value, size)});
            }
        }
        out.push_back(std::move(r));
    }
    rd_kafka_consumer_close(consumer.get());
    return out;
}

}  // namespace spool::protocol::records::testing
