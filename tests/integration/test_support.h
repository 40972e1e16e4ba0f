#pragma once

// Requests the integration tests send again and again, built with the protocol library's codecs
// and sent with kafka_client: a record batch, a Produce (and one record's produce_one, with its
// exact error code), ListOffsets latest, a CreateTopics, a Fetch of partition 0; and running a
// command line (kcat) for its output.

#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/produce.h"
#include "common/testing/build_flavour.h"
#include "protocol/records/batch_builder.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spool::tests {

// Whether timing bounds are asserted (the `timing` label's entries; common/testing/build_flavour.h).
using spool::testing::timing_bounds_asserted;

inline std::vector<uint8_t> make_batch(
    const std::vector<std::string>& values,
    protocol::records::compression codec = protocol::records::compression::none,
    int64_t producer_id = -1, int32_t base_sequence = -1) {
    protocol::records::batch_options o;
    o.codec = codec;
    o.producer_id = producer_id;
    o.producer_epoch = producer_id >= 0 ? 0 : -1;
    o.base_sequence = base_sequence;
    protocol::records::batch_builder b(o);
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    for (const auto& v : values) {
        b.add(now, protocol::records::nullable_bytes::null(),
              protocol::records::nullable_bytes::of(v));
    }
    return b.build();
}

inline protocol::produce_request produce_req(const std::string& topic, int32_t partition,
                                             const std::vector<uint8_t>& batch, int16_t acks) {
    protocol::produce_request req;
    req.acks = acks;
    req.timeout_ms = 5000;
    auto& t = req.topic_data.emplace_back();
    t.name = topic;
    auto& p = t.partition_data.emplace_back();
    p.index = partition;
    p.records = protocol::records_field::view(batch);
    return req;
}

// One Produce (v9) of a one-record batch with `acks`; the partition's error code (-999: no
// answer) and the base offset it was written at.
inline std::pair<int16_t, int64_t> produce_one(kafka_client& c, const std::string& topic,
                                               const std::string& value, int16_t acks) {
    auto batch = make_batch({value});
    auto resp = c.call<protocol::produce_request, protocol::produce_response>(
        9, produce_req(topic, 0, batch, acks));
    if (!resp || resp->responses.empty() || resp->responses[0].partition_responses.empty()) {
        return {-999, -1};
    }
    const auto& p = resp->responses[0].partition_responses[0];
    return {p.error_code, p.base_offset};
}

// ListOffsets latest of partition 0 with an isolation level (0 read_uncommitted: the high
// watermark; 1 read_committed: the last stable offset); -999: no answer.
inline int64_t latest_offset(kafka_client& c, const std::string& topic, int8_t isolation = 0) {
    protocol::list_offsets_request req;
    req.replica_id = -1;
    req.isolation_level = isolation;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& p = t.partitions.emplace_back();
    p.partition_index = 0;
    p.timestamp = -1;
    auto resp = c.call<protocol::list_offsets_request, protocol::list_offsets_response>(5, req);
    if (!resp || resp->topics.empty() || resp->topics[0].partitions.empty() ||
        resp->topics[0].partitions[0].error_code != 0) {
        return -999;
    }
    return resp->topics[0].partitions[0].offset;
}

inline int16_t create_topic(kafka_client& c, const std::string& name, int32_t partitions,
                            const std::vector<std::pair<std::string, std::string>>& configs = {}) {
    protocol::create_topics_request req;
    auto& t = req.topics.emplace_back();
    t.name = name;
    t.num_partitions = partitions;
    t.replication_factor = 1;
    for (const auto& [k, v] : configs) {
        auto& cfg = t.configs.emplace_back();
        cfg.name = k;
        cfg.value = v;
    }
    req.timeout_ms = 30000;
    auto resp = c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
    return resp ? resp->topics.at(0).error_code : -999;
}

// A sessionless Fetch of partition 0 of topic from offset (1 MiB, 100 ms long poll).
inline protocol::fetch_request fetch_partition_0(const std::string& topic, int64_t offset) {
    protocol::fetch_request req;
    req.max_wait_ms = 100;
    req.min_bytes = 1;
    req.max_bytes = 1 << 20;
    req.session_epoch = -1;
    auto& t = req.topics.emplace_back();
    t.topic = topic;
    auto& p = t.partitions.emplace_back();
    p.partition = 0;
    p.fetch_offset = offset;
    p.partition_max_bytes = 1 << 20;
    return req;
}

// Fetches partition 0 of topic from offset; returns the records bytes (empty on error).
inline std::string fetch_bytes(kafka_client& c, const std::string& topic, int64_t offset,
                               int16_t* error = nullptr) {
    auto req = fetch_partition_0(topic, offset);
    auto resp = c.call<protocol::fetch_request, protocol::fetch_response>(11, req);
    if (!resp || resp->responses.empty() || resp->responses[0].partitions.empty()) {
        return {};
    }
    const auto& pd = resp->responses[0].partitions[0];
    if (error != nullptr) {
        *error = pd.error_code;
    }
    auto b = pd.records.bytes();
    return std::string(b.begin(), b.end());
}

// Runs a shell command; returns what it printed on stdout.
inline std::string run(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
        return out;
    }
    char buf[4096];
    size_t n;
    while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) {
        out.append(buf, n);
    }
    ::pclose(p);
    return out;
}

inline bool have_kcat() {
    return ::system("command -v kcat >/dev/null 2>&1") == 0;
}

// A fresh spool-broker per test, started with `overrides()` and stopped cleanly (exit 0) after.
class running_broker_test : public ::testing::Test {
protected:
    virtual std::vector<std::string> overrides() const { return {}; }
    void SetUp() override {
        broker = std::make_unique<broker_process>();
        for (const auto& kv : overrides()) {
            broker->add_override(kv);
        }
        ASSERT_TRUE(broker->start()) << broker->log_text();
    }
    void TearDown() override {
        auto info = broker->stop();
        EXPECT_TRUE(info.exited) << broker->log_text();
        EXPECT_EQ(info.status, 0) << broker->log_text();
    }

    std::unique_ptr<broker_process> broker;
};

}  // namespace spool::tests
