#pragma once

// Per-topic traffic, fed by the produce and fetch handlers:
//
//   spool_broker_bytes_in_total{topic}     counter (record-batch bytes appended)
//   spool_broker_records_in_total{topic}   counter (records per the batch headers)
//   spool_broker_bytes_out_total{topic}    counter (record-batch bytes returned by fetches)
//   spool_broker_records_out_total{topic}  counter
//
// Hot path: topic(name) takes a lock and a hash lookup; cached(name) is the calling thread's
// copy of the same handle (a hash lookup, no lock, no shared write) and is what handlers use.
// A handle's verbs are relaxed atomic adds on integers; the families are built at scrape time.
//
// Lifecycle: built by the composition root, outlives handlers. forget(name) drops the topic's
// series (topic deletion); the handle itself is retired, not freed, so a thread still holding
// it counts into a series nobody exports instead of freed memory, and every thread's cache is
// invalidated. A topic re-created under the same name starts from zero, as Prometheus expects
// of a counter reset. Threading: all methods are safe from any thread.

#include "broker/metrics/registry.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

namespace spool::broker::metrics {

class topic_probe {
public:
    class handle {
    public:
        void produced(uint64_t bytes, uint64_t records) noexcept {
            _bytes_in.fetch_add(bytes, std::memory_order_relaxed);
            _records_in.fetch_add(records, std::memory_order_relaxed);
        }
        void fetched(uint64_t bytes, uint64_t records) noexcept {
            _bytes_out.fetch_add(bytes, std::memory_order_relaxed);
            _records_out.fetch_add(records, std::memory_order_relaxed);
        }

    private:
        friend class topic_probe;
        std::atomic<uint64_t> _bytes_in{0};
        std::atomic<uint64_t> _records_in{0};
        std::atomic<uint64_t> _bytes_out{0};
        std::atomic<uint64_t> _records_out{0};
    };

    explicit topic_probe(registry& reg);
    ~topic_probe();
    topic_probe(const topic_probe&) = delete;
    topic_probe& operator=(const topic_probe&) = delete;

    // The topic's handle, created on first use; stays valid for the probe's lifetime.
    handle& topic(std::string_view name);
    // Same handle through a per-thread cache: locks only on a thread's first use of a topic
    // and after a forget().
    handle& cached(std::string_view name);
    void produced(std::string_view topic_name, uint64_t bytes, uint64_t records) {
        cached(topic_name).produced(bytes, records);
    }
    void fetched(std::string_view topic_name, uint64_t bytes, uint64_t records) {
        cached(topic_name).fetched(bytes, records);
    }
    // Drops the topic's series (after the topic is deleted).
    void forget(std::string_view name);

private:
    // The handles and the families built from them; shared with the registry so that a scrape
    // racing the probe's destruction reads live memory.
    class series;

    const uint64_t _id;  // tells the thread caches of different probes apart
    std::atomic<uint64_t> _generation{0};
    std::shared_ptr<series> _series;
};

}  // namespace spool::broker::metrics
