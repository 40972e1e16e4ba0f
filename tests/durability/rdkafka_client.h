#pragma once

// librdkafka (rdkafka++ from Debian) for the durability tests: an idempotent acks=all producer
// that remembers, per record id, the offset its delivery report acknowledged; and a reader of a
// whole partition.
//
// Lifecycle: one producer across broker restarts (it reconnects and retries, as applications
// do). Threading: test thread only; delivery reports run inside poll()/flush() on it.

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace spool::tests {

class acked_producer : public RdKafka::DeliveryReportCb {
public:
    // extra: more producer settings (key -> value).
    acked_producer(const std::string& bootstrap, const std::string& topic,
                   const std::map<std::string, std::string>& extra = {});
    ~acked_producer() override;

    // Queues one record whose value is `id` (ids must be unique); false if the local queue is
    // full (call poll and retry).
    bool produce(const std::string& id);
    void poll(int timeout_ms = 0);
    // Waits until every queued record is acknowledged or failed; false on timeout.
    bool flush(std::chrono::milliseconds timeout);

    const std::map<std::string, int64_t>& acked() const { return _acked; }
    const std::map<std::string, std::string>& failed() const { return _failed; }
    // A fatal idempotence error (librdkafka stops producing): empty when none.
    std::string fatal_error();
    int outq_len() { return _producer->outq_len(); }

    void dr_cb(RdKafka::Message& message) override;

private:
    std::string _topic;
    std::unique_ptr<RdKafka::Producer> _producer;
    std::map<std::string, int64_t> _acked;
    std::map<std::string, std::string> _failed;
};

// The id of the n-th record a test produces, "rec-000000000042": unique and sortable.
std::string record_id(uint64_t n);

struct stored_record {
    int64_t offset = 0;
    std::string value;
};

// Every record of partition 0 from its log start to its high watermark, read with the legacy
// consumer (no group); error text in *error when the read did not complete.
std::vector<stored_record> read_partition(
    const std::string& bootstrap, const std::string& topic, std::string* error,
    std::chrono::milliseconds timeout = std::chrono::seconds(60));

// Low and high watermark of partition 0, or {-1, -1}.
std::pair<int64_t, int64_t> watermarks(const std::string& bootstrap, const std::string& topic);

// What an acknowledged record's fate was in the log read back.
struct ack_audit {
    uint64_t acked = 0;
    uint64_t lost = 0;                  // acknowledged, not in the log
    uint64_t duplicated = 0;            // acknowledged, in the log more than once
    uint64_t moved = 0;                 // acknowledged at one offset, found at another
    std::vector<std::string> examples;  // a few ids per kind, for the failure message
};
ack_audit audit(const std::map<std::string, int64_t>& acked, const std::vector<stored_record>& log);

}  // namespace spool::tests
