#pragma once

// Blocking admin requests over the raw test client, for tests that need Kafka's exact error
// codes (librdkafka's admin API only gives text): CreateTopics with configs, DeleteRecords,
// Metadata without auto-creation.

#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/metadata.h"
#include "tests/integration/kafka_client.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spool::tests {

struct topic_answer {
    int16_t error_code = -999;  // -999: no answer
    std::string message;
};

// One CreateTopicsResponse row per topic asked for (v5).
inline std::vector<topic_answer> create_topics(
    kafka_client& c, const std::vector<std::pair<std::string, int32_t>>& topics,
    const std::map<std::string, std::string>& configs = {}, int16_t replication_factor = 1) {
    protocol::create_topics_request req;
    req.timeout_ms = 30000;
    for (const auto& [name, partitions] : topics) {
        auto& t = req.topics.emplace_back();
        t.name = name;
        t.num_partitions = partitions;
        t.replication_factor = replication_factor;
        for (const auto& [k, v] : configs) {
            auto& cfg = t.configs.emplace_back();
            cfg.name = k;
            cfg.value = v;
        }
    }
    std::vector<topic_answer> out(topics.size());
    auto resp = c.call<protocol::create_topics_request, protocol::create_topics_response>(5, req);
    if (!resp) {
        return out;
    }
    for (size_t i = 0; i < resp->topics.size() && i < out.size(); ++i) {
        out[i].error_code = resp->topics[i].error_code;
        out[i].message = resp->topics[i].error_message.value_or("");
    }
    return out;
}

inline topic_answer create_topic(kafka_client& c, const std::string& name, int32_t partitions,
                                 const std::map<std::string, std::string>& configs = {},
                                 int16_t replication_factor = 1) {
    return create_topics(c, {{name, partitions}}, configs, replication_factor).at(0);
}

// The topic's error in a Metadata answer that must not create it (3 = unknown).
inline int16_t topic_metadata_error(kafka_client& c, const std::string& name) {
    protocol::metadata_request req;
    auto& t = req.topics->emplace_back();
    t.name = name;
    req.allow_auto_topic_creation = false;
    auto resp = c.call<protocol::metadata_request, protocol::metadata_response>(9, req);
    if (!resp || resp->topics.empty()) {
        return -999;
    }
    return resp->topics[0].error_code;
}

// DeleteRecords below `offset` on partition 0; the new low watermark, or -error_code.
inline int64_t delete_records(kafka_client& c, const std::string& topic, int64_t offset) {
    protocol::delete_records_request req;
    req.timeout_ms = 30000;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    auto& p = t.partitions.emplace_back();
    p.partition_index = 0;
    p.offset = offset;
    auto resp = c.call<protocol::delete_records_request, protocol::delete_records_response>(1, req);
    if (!resp || resp->topics.empty() || resp->topics[0].partitions.empty()) {
        return -999;
    }
    const auto& pr = resp->topics[0].partitions[0];
    return pr.error_code != 0 ? -int64_t(pr.error_code) : pr.low_watermark;
}

}  // namespace spool::tests
