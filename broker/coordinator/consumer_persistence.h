#pragma once

// What a load collects of the KIP-848 records before it rebuilds the consumer groups: the last
// value of every key in log order (nullopt: a tombstone).

#include "broker/coordinator/consumer_record_codec.h"

#include <map>
#include <optional>
#include <span>
#include <string>

namespace spool::broker::coordinator {

struct consumer_replay {
    struct group_records {
        bool seen = false;
        std::optional<bytes_t> group_epoch;
        std::optional<bytes_t> target_epoch;
        std::map<std::string, std::optional<bytes_t>> member_metadata;
        std::map<std::string, std::optional<bytes_t>> target_member;
        std::map<std::string, std::optional<bytes_t>> current;
    };
    std::map<std::string, group_records> groups;

    void add(const consumer_key& key, std::optional<std::span<const uint8_t>> value);
};

}  // namespace spool::broker::coordinator
