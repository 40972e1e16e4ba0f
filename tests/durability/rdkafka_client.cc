#include "tests/durability/rdkafka_client.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <thread>

namespace spool::tests {

namespace {

std::unique_ptr<RdKafka::Conf> global_conf(const std::string& bootstrap,
                                           const std::map<std::string, std::string>& settings) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string error;
    EXPECT_EQ(conf->set("bootstrap.servers", bootstrap, error), RdKafka::Conf::CONF_OK) << error;
    for (const auto& [k, v] : settings) {
        EXPECT_EQ(conf->set(k, v, error), RdKafka::Conf::CONF_OK) << k << ": " << error;
    }
    return conf;
}

}  // namespace

std::string record_id(uint64_t n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "rec-%012llu", static_cast<unsigned long long>(n));
    return buf;
}

acked_producer::acked_producer(const std::string& bootstrap, const std::string& topic,
                               const std::map<std::string, std::string>& extra)
    : _topic(topic) {
    std::map<std::string, std::string> settings = {
        {"enable.idempotence", "true"},
        {"acks", "all"},
        {"linger.ms", "2"},
        // Long enough to ride out every restart of the test: a record is either acknowledged
        // or still being retried, never given up on while the broker is down.
        {"message.timeout.ms", "120000"},
        {"retry.backoff.ms", "50"},
        {"reconnect.backoff.ms", "20"},
        {"reconnect.backoff.max.ms", "200"},
        {"socket.connection.setup.timeout.ms", "2000"},
    };
    for (const auto& [k, v] : extra) {
        settings[k] = v;
    }
    auto conf = global_conf(bootstrap, settings);
    std::string error;
    EXPECT_EQ(conf->set("dr_cb", static_cast<RdKafka::DeliveryReportCb*>(this), error),
              RdKafka::Conf::CONF_OK)
        << error;
    _producer.reset(RdKafka::Producer::create(conf.get(), error));
    EXPECT_TRUE(_producer) << error;
}

acked_producer::~acked_producer() {
    if (_producer) {
        _producer->flush(1000);
    }
}

bool acked_producer::produce(const std::string& id) {
    auto* opaque = new std::string(id);
    auto err = _producer->produce(_topic, 0, RdKafka::Producer::RK_MSG_COPY,
                                  const_cast<char*>(id.data()), id.size(), nullptr, 0, 0, opaque);
    if (err != RdKafka::ERR_NO_ERROR) {
        delete opaque;
        return false;
    }
    return true;
}

void acked_producer::poll(int timeout_ms) {
    _producer->poll(timeout_ms);
}

bool acked_producer::flush(std::chrono::milliseconds timeout) {
    return _producer->flush(static_cast<int>(timeout.count())) == RdKafka::ERR_NO_ERROR;
}

std::string acked_producer::fatal_error() {
    std::string text;
    auto err = _producer->fatal_error(text);
    return err == RdKafka::ERR_NO_ERROR ? std::string() : RdKafka::err2str(err) + ": " + text;
}

void acked_producer::dr_cb(RdKafka::Message& message) {
    std::unique_ptr<std::string> id(static_cast<std::string*>(message.msg_opaque()));
    if (message.err() == RdKafka::ERR_NO_ERROR) {
        _acked[*id] = message.offset();
    } else {
        _failed[*id] = message.errstr();
    }
}

std::vector<stored_record> read_partition(const std::string& bootstrap, const std::string& topic,
                                          std::string* error, std::chrono::milliseconds timeout) {
    std::vector<stored_record> out;
    auto [low, high] = watermarks(bootstrap, topic);
    if (high < 0) {
        *error = "no watermarks for " + topic;
        return out;
    }
    auto conf = global_conf(bootstrap, {{"enable.partition.eof", "true"}});
    std::string err;
    std::unique_ptr<RdKafka::Consumer> consumer(RdKafka::Consumer::create(conf.get(), err));
    if (!consumer) {
        *error = err;
        return out;
    }
    std::unique_ptr<RdKafka::Topic> t(RdKafka::Topic::create(consumer.get(), topic, nullptr, err));
    consumer->start(t.get(), 0, RdKafka::Topic::OFFSET_BEGINNING);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int64_t next = low;
    while (next < high && std::chrono::steady_clock::now() < deadline) {
        std::unique_ptr<RdKafka::Message> m(consumer->consume(t.get(), 0, 500));
        if (m->err() == RdKafka::ERR_NO_ERROR) {
            out.push_back(
                {m->offset(), std::string(static_cast<const char*>(m->payload()), m->len())});
            next = m->offset() + 1;
        } else if (m->err() != RdKafka::ERR__TIMED_OUT && m->err() != RdKafka::ERR__PARTITION_EOF) {
            *error = m->errstr();
            break;
        }
    }
    consumer->stop(t.get(), 0);
    if (next < high && error->empty()) {
        *error = "read stopped at " + std::to_string(next) + " of " + std::to_string(high);
    }
    return out;
}

std::pair<int64_t, int64_t> watermarks(const std::string& bootstrap, const std::string& topic) {
    auto conf = global_conf(bootstrap, {});
    std::string err;
    std::unique_ptr<RdKafka::Producer> p(RdKafka::Producer::create(conf.get(), err));
    int64_t low = -1;
    int64_t high = -1;
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (p->query_watermark_offsets(topic, 0, &low, &high, 3000) == RdKafka::ERR_NO_ERROR) {
            return {low, high};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    return {-1, -1};
}

ack_audit audit(const std::map<std::string, int64_t>& acked,
                const std::vector<stored_record>& log) {
    std::map<std::string, std::vector<int64_t>> found;
    for (const auto& r : log) {
        auto it = acked.find(r.value);
        if (it != acked.end()) {
            found[r.value].push_back(r.offset);
        }
    }
    ack_audit a;
    a.acked = acked.size();
    auto example = [&](const std::string& what) {
        if (a.examples.size() < 10) {
            a.examples.push_back(what);
        }
    };
    for (const auto& [id, offset] : acked) {
        auto it = found.find(id);
        if (it == found.end()) {
            ++a.lost;
            example("lost " + id + "@" + std::to_string(offset));
            continue;
        }
        if (it->second.size() > 1) {
            ++a.duplicated;
            example("duplicated " + id);
        }
        if (it->second.front() != offset) {
            ++a.moved;
            example("moved " + id + " " + std::to_string(offset) + "->" +
                    std::to_string(it->second.front()));
        }
    }
    return a;
}

}  // namespace spool::tests
