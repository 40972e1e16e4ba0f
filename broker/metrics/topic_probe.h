#pragma once

// Per-topic traffic, fed by the produce and fetch handlers:
//
//   spool_broker_bytes_in_total{topic}     counter (record-batch bytes appended)
//   spool_broker_records_in_total{topic}   counter
//   spool_broker_bytes_out_total{topic}    counter (record-batch bytes returned by fetches)
//   spool_broker_records_out_total{topic}  counter
//
// Hot path: topic(name) takes a lock and a hash lookup; a handler that serves a partition
// repeatedly should keep the returned handle (it stays valid until forget(name)) and call
// the handle's verbs, which are relaxed atomics only.
//
// Lifecycle: built by the composition root, outlives handlers. Threading: all methods are
// safe from any thread; forget() must not race with users of that topic's handle (call it
// from topic deletion, after the partitions are gone).

#include "broker/metrics/registry.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace prometheus {
class Counter;
template <typename T>
class Family;
}  // namespace prometheus

namespace spool::broker::metrics {

class topic_probe {
public:
    class handle {
    public:
        void produced(uint64_t bytes, uint64_t records) noexcept;
        void fetched(uint64_t bytes, uint64_t records) noexcept;

    private:
        friend class topic_probe;
        prometheus::Counter* _bytes_in = nullptr;
        prometheus::Counter* _records_in = nullptr;
        prometheus::Counter* _bytes_out = nullptr;
        prometheus::Counter* _records_out = nullptr;
    };

    explicit topic_probe(registry& reg);
    ~topic_probe();
    topic_probe(const topic_probe&) = delete;
    topic_probe& operator=(const topic_probe&) = delete;

    handle& topic(std::string_view name);
    void produced(std::string_view topic_name, uint64_t bytes, uint64_t records) {
        topic(topic_name).produced(bytes, records);
    }
    void fetched(std::string_view topic_name, uint64_t bytes, uint64_t records) {
        topic(topic_name).fetched(bytes, records);
    }
    // Drops the topic's series (after the topic is deleted).
    void forget(std::string_view name);

private:
    prometheus::Family<prometheus::Counter>* _bytes_in;
    prometheus::Family<prometheus::Counter>* _records_in;
    prometheus::Family<prometheus::Counter>* _bytes_out;
    prometheus::Family<prometheus::Counter>* _records_out;
    std::mutex _mutex;
    std::unordered_map<std::string, std::unique_ptr<handle>> _topics;
};

}  // namespace spool::broker::metrics
