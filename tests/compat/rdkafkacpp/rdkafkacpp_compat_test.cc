// librdkafka C++ API (rdkafka++ 2.0.2 from Debian) against a real broker at $SPOOL_BOOTSTRAP.
//
// Run through tests/compat/run-compat.sh, which starts the broker under test. Covers the topic
// admin calls librdkafka 2.0.2 has (through the C API on the C++ handle, see rdkafka_admin.h), and
// per compression codec an idempotent producer of keyed messages read back by partition
// assignment (the legacy RdKafka::Consumer: no group, so no coordinator is involved).

#include "tests/compat/rdkafkacpp/rdkafka_admin.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace spool::compat {
namespace {

using namespace std::chrono_literals;

constexpr int partitions = 3;
constexpr int message_count = 200;
constexpr int timeout_ms = 30000;

std::string bootstrap() {
    const char* value = std::getenv("SPOOL_BOOTSTRAP");
    return value ? value : "";
}

/// Whether the broker accepts TCP connections: after a broker crash every test fails at once
/// instead of each waiting for librdkafka's timeouts.
bool broker_reachable() {
    const std::string address = bootstrap();
    const auto colon = address.rfind(':');
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (colon == std::string::npos ||
        getaddrinfo(address.substr(0, colon).c_str(), address.substr(colon + 1).c_str(), &hints,
                    &found) != 0) {
        return false;
    }
    bool connected = false;
    for (addrinfo* a = found; a != nullptr && !connected; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        connected = fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0;
        if (fd >= 0) {
            close(fd);
        }
    }
    freeaddrinfo(found);
    return connected;
}

std::string unique_topic(const std::string& what) {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    return "compat-rdkafkacpp-" + what + "-" +
           std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
}

std::unique_ptr<RdKafka::Conf> make_conf(const std::map<std::string, std::string>& settings) {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string error;
    EXPECT_EQ(conf->set("bootstrap.servers", bootstrap(), error), RdKafka::Conf::CONF_OK) << error;
    for (const auto& [key, value] : settings) {
        EXPECT_EQ(conf->set(key, value, error), RdKafka::Conf::CONF_OK) << key << ": " << error;
    }
    return conf;
}

/// One message of the workload and where the broker acknowledged it.
struct message {
    int seq;
    std::string key;
    std::optional<std::string> value;  // nullopt = tombstone
    int32_t partition = -1;
    int64_t offset = -1;
    RdKafka::ErrorCode error = RdKafka::ERR__STATE;  // until the delivery report arrives
};

std::vector<message> workload(const std::string& label) {
    std::vector<message> out;
    for (int i = 0; i < message_count; ++i) {
        message m{i, "key-" + std::to_string(i % 7), std::nullopt};
        if (i % 50 != 49) {
            m.value = label + "-" + std::to_string(i) + "-" + std::string((i % 5) * 150, 'v');
        }
        out.push_back(std::move(m));
    }
    return out;
}

/// Records each message's partition and offset; the opaque is the message's address.
class delivery_recorder : public RdKafka::DeliveryReportCb {
public:
    void dr_cb(RdKafka::Message& report) override {
        auto* m = static_cast<message*>(report.msg_opaque());
        m->error = report.err();
        m->partition = report.partition();
        m->offset = report.offset();
    }
};

/// Polls metadata until the topic has `count` partitions, each with a leader, or the deadline.
::testing::AssertionResult wait_for_topic(RdKafka::Handle& handle, const std::string& name,
                                          int count) {
    std::string error;
    std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(&handle, name, nullptr, error));
    std::string last = "no metadata";
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(100ms)) {
        RdKafka::Metadata* raw = nullptr;
        RdKafka::ErrorCode err = handle.metadata(false, topic.get(), &raw, 5000);
        std::unique_ptr<RdKafka::Metadata> md(raw);
        if (err != RdKafka::ERR_NO_ERROR || md->topics()->size() != 1) {
            last = RdKafka::err2str(err);
            continue;
        }
        const RdKafka::TopicMetadata* t = md->topics()->at(0);
        bool ready =
            t->err() == RdKafka::ERR_NO_ERROR && static_cast<int>(t->partitions()->size()) == count;
        for (const RdKafka::PartitionMetadata* p : *t->partitions()) {
            ready = ready && p->err() == RdKafka::ERR_NO_ERROR && p->leader() >= 0 &&
                    p->replicas()->size() == 1 && p->isrs()->size() == 1;
        }
        if (ready) {
            return ::testing::AssertionSuccess();
        }
        last = RdKafka::err2str(t->err()) + ", " + std::to_string(t->partitions()->size()) +
               " partitions";
    }
    return ::testing::AssertionFailure() << name << " not ready: " << last;
}

/// Polls metadata until the broker no longer knows the topic.
::testing::AssertionResult wait_for_topic_gone(RdKafka::Handle& handle, const std::string& name) {
    for (auto deadline = std::chrono::steady_clock::now() + 10s;
         std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(100ms)) {
        RdKafka::Metadata* raw = nullptr;
        if (handle.metadata(true, nullptr, &raw, 5000) != RdKafka::ERR_NO_ERROR) {
            continue;
        }
        std::unique_ptr<RdKafka::Metadata> md(raw);
        bool found = false;
        for (const RdKafka::TopicMetadata* t : *md->topics()) {
            found = found || t->topic() == name;
        }
        if (!found) {
            return ::testing::AssertionSuccess();
        }
    }
    return ::testing::AssertionFailure() << name << " still listed after DeleteTopics";
}

/// Config reads right after a write may be stale on Kafka (changes propagate asynchronously):
/// retry the read until `accept` holds or a few seconds pass; returns the last read.
template <typename Accept>
std::map<std::string, config_value> describe_until(rdkafka_admin& admin, const std::string& topic,
                                                   Accept accept) {
    std::map<std::string, config_value> configs;
    for (auto deadline = std::chrono::steady_clock::now() + 5s;;
         std::this_thread::sleep_for(50ms)) {
        std::string error;
        configs = admin.describe_topic_configs(topic, error);
        EXPECT_EQ(error, "");
        if (accept(configs) || std::chrono::steady_clock::now() > deadline) {
            return configs;
        }
    }
}

class rdkafkacpp_compat : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(bootstrap().empty())
            << "set SPOOL_BOOTSTRAP (tests/compat/run-compat.sh does)";
        ASSERT_TRUE(broker_reachable()) << "no broker accepts connections at " << bootstrap();
        std::string error;
        auto conf = make_conf({});
        _admin_handle.reset(RdKafka::Producer::create(conf.get(), error));
        ASSERT_TRUE(_admin_handle) << error;
        _admin = std::make_unique<rdkafka_admin>(_admin_handle->c_ptr());
    }

    std::unique_ptr<RdKafka::Producer> _admin_handle;
    std::unique_ptr<rdkafka_admin> _admin;
};

TEST_F(rdkafkacpp_compat, test_admin_creates_describes_alters_and_deletes_topic) {
    const std::string topic = unique_topic("admin");
    ASSERT_EQ(_admin->create_topic(topic, partitions, {{"retention.ms", "86400000"}}), "");
    ASSERT_TRUE(wait_for_topic(*_admin_handle, topic, partitions));
    EXPECT_NE(_admin->create_topic(topic, 1), "") << "creating an existing topic must fail";

    std::string error;
    auto configs = _admin->describe_topic_configs(topic, error);
    ASSERT_EQ(error, "");
    ASSERT_TRUE(configs.count("retention.ms"));
    EXPECT_EQ(configs["retention.ms"].value, "86400000");
    EXPECT_EQ(configs["retention.ms"].source, RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    ASSERT_TRUE(configs.count("cleanup.policy"));
    EXPECT_EQ(configs["cleanup.policy"].value, "delete");
    EXPECT_TRUE(configs["cleanup.policy"].is_default);

    // AlterConfigs replaces the whole override set: retention.ms falls back to its default.
    ASSERT_EQ(_admin->alter_topic_configs(topic, {{"cleanup.policy", "compact"}}), "");
    configs = describe_until(*_admin, topic, [](auto& c) {
        return c["cleanup.policy"].value == "compact" && c["retention.ms"].value != "86400000";
    });
    EXPECT_EQ(configs["cleanup.policy"].value, "compact");
    EXPECT_EQ(configs["cleanup.policy"].source, RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    EXPECT_NE(configs["retention.ms"].source, RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);

    ASSERT_EQ(_admin->create_partitions(topic, partitions + 1), "");
    EXPECT_TRUE(wait_for_topic(*_admin_handle, topic, partitions + 1));

    ASSERT_EQ(_admin->delete_topic(topic), "");
    EXPECT_TRUE(wait_for_topic_gone(*_admin_handle, topic));
}

TEST_F(rdkafkacpp_compat, test_describe_configs_of_unknown_topic_fails) {
    std::string error;
    _admin->describe_topic_configs(unique_topic("missing"), error);
    EXPECT_NE(error, "");
}

class rdkafkacpp_codec : public rdkafkacpp_compat,
                         public ::testing::WithParamInterface<std::string> {};

TEST_P(rdkafkacpp_codec, test_idempotent_keyed_messages_round_trip) {
    const std::string codec = GetParam();
    const std::string topic = unique_topic(codec);
    ASSERT_EQ(_admin->create_topic(topic, partitions), "");
    ASSERT_TRUE(wait_for_topic(*_admin_handle, topic, partitions));

    // Produce: idempotent, acks=all, the codec under test.
    std::vector<message> messages = workload("rdkafkacpp-" + codec);
    delivery_recorder recorder;
    auto conf = make_conf({{"enable.idempotence", "true"},
                           {"acks", "all"},
                           {"compression.codec", codec},
                           {"linger.ms", "5"},
                           {"message.timeout.ms", std::to_string(timeout_ms)}});
    std::string error;
    ASSERT_EQ(conf->set("dr_cb", &recorder, error), RdKafka::Conf::CONF_OK) << error;
    std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf.get(), error));
    ASSERT_TRUE(producer) << error;
    for (message& m : messages) {
        RdKafka::Headers* headers = RdKafka::Headers::create();
        headers->add("seq", std::to_string(m.seq));
        RdKafka::ErrorCode err = producer->produce(
            topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
            m.value ? const_cast<char*>(m.value->data()) : nullptr, m.value ? m.value->size() : 0,
            m.key.data(), m.key.size(), 0, headers, &m);
        if (err != RdKafka::ERR_NO_ERROR) {
            delete headers;  // ownership passes to librdkafka only on success
        }
        ASSERT_EQ(err, RdKafka::ERR_NO_ERROR) << RdKafka::err2str(err);
        producer->poll(0);
    }
    ASSERT_EQ(producer->flush(timeout_ms), RdKafka::ERR_NO_ERROR);

    // Acknowledgements: dense offsets from 0 in send order per partition; a key in one partition.
    std::map<int32_t, std::vector<const message*>> by_partition;
    std::map<std::string, int32_t> partition_of_key;
    for (const message& m : messages) {
        ASSERT_EQ(m.error, RdKafka::ERR_NO_ERROR)
            << "message " << m.seq << ": " << RdKafka::err2str(m.error);
        auto [it, inserted] = partition_of_key.emplace(m.key, m.partition);
        EXPECT_EQ(it->second, m.partition) << "key " << m.key << " spans partitions";
        auto& list = by_partition[m.partition];
        EXPECT_EQ(m.offset, static_cast<int64_t>(list.size()))
            << "message " << m.seq << " at partition " << m.partition;
        list.push_back(&m);
    }

    // Consume each partition by assignment (legacy consumer, read_committed by default) and
    // compare record by record.
    auto consumer_conf = make_conf({{"check.crcs", "true"}});
    std::unique_ptr<RdKafka::Consumer> consumer(
        RdKafka::Consumer::create(consumer_conf.get(), error));
    ASSERT_TRUE(consumer) << error;
    std::unique_ptr<RdKafka::Topic> handle(
        RdKafka::Topic::create(consumer.get(), topic, nullptr, error));
    ASSERT_TRUE(handle) << error;
    for (int32_t partition = 0; partition < partitions; ++partition) {
        const auto& want = by_partition[partition];
        ASSERT_EQ(consumer->start(handle.get(), partition, RdKafka::Topic::OFFSET_BEGINNING),
                  RdKafka::ERR_NO_ERROR);
        size_t got = 0;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        while (got < want.size() && std::chrono::steady_clock::now() < deadline) {
            std::unique_ptr<RdKafka::Message> msg(consumer->consume(handle.get(), partition, 500));
            if (msg->err() == RdKafka::ERR__TIMED_OUT ||
                msg->err() == RdKafka::ERR__PARTITION_EOF) {
                continue;
            }
            ASSERT_EQ(msg->err(), RdKafka::ERR_NO_ERROR) << msg->errstr();
            const message& m = *want[got];
            SCOPED_TRACE("partition " + std::to_string(partition) + " offset " +
                         std::to_string(msg->offset()));
            EXPECT_EQ(msg->offset(), static_cast<int64_t>(got));
            ASSERT_TRUE(msg->key());
            EXPECT_EQ(*msg->key(), m.key);
            if (m.value) {
                ASSERT_NE(msg->payload(), nullptr);
                EXPECT_EQ(std::string(static_cast<const char*>(msg->payload()), msg->len()),
                          *m.value);
            } else {
                EXPECT_EQ(msg->payload(), nullptr) << "tombstone read back with a value";
            }
            RdKafka::Headers* headers = msg->headers();
            ASSERT_NE(headers, nullptr);
            RdKafka::Headers::Header seq = headers->get_last("seq");
            ASSERT_EQ(seq.err(), RdKafka::ERR_NO_ERROR);
            EXPECT_EQ(std::string(static_cast<const char*>(seq.value()), seq.value_size()),
                      std::to_string(m.seq));
            ++got;
        }
        EXPECT_EQ(got, want.size()) << "records read back from partition " << partition;
        consumer->stop(handle.get(), partition);

        int64_t low = -1, high = -1;
        ASSERT_EQ(consumer->query_watermark_offsets(topic, partition, &low, &high, timeout_ms),
                  RdKafka::ERR_NO_ERROR);
        EXPECT_EQ(low, 0);
        EXPECT_EQ(high, static_cast<int64_t>(want.size()));
    }

    EXPECT_EQ(_admin->delete_topic(topic), "");
}

INSTANTIATE_TEST_SUITE_P(codecs, rdkafkacpp_codec,
                         ::testing::Values("none", "gzip", "snappy", "lz4", "zstd"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace spool::compat
