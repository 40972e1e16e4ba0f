#pragma once

// Raw-client steps of a transaction for tests that play both the transactional producer and the
// transaction coordinator: transactional (or plain idempotent) batches, WriteTxnMarkers, and a
// Fetch with an isolation level decoded into what a reader sees (values, aborted transactions,
// markers, last stable offset).

#include "protocol/messages/fetch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/write_txn_markers.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/record_reader.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"
#include "tests/integration/txn_batch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace spool::tests::txn {

inline constexpr int8_t read_committed = 1;
inline constexpr int8_t read_uncommitted = 0;

// One batch of `values` from producer (pid, epoch) at `seq` to partition 0 of topic, acks=all,
// transactional (with transactional id "txn-<pid>") or not; the partition's error code (-999: no
// answer) and base offset. Wall-clock timestamps, as markers carry: a gap past segment.ms would
// roll the segment.
inline std::pair<int16_t, int64_t> produce(kafka_client& c, const std::string& topic, int64_t pid,
                                           int16_t epoch, int32_t seq,
                                           const std::vector<std::string>& values,
                                           bool transactional = true) {
    auto batch = producer_batch(pid, epoch, seq, values, transactional);
    auto req = produce_req(topic, 0, batch, -1);
    if (transactional) {
        req.transactional_id = "txn-" + std::to_string(pid);
    }
    auto resp = c.call<protocol::produce_request, protocol::produce_response>(9, req);
    if (!resp) {
        return {-999, -1};
    }
    const auto& p = resp->responses.at(0).partition_responses.at(0);
    return {p.error_code, p.base_offset};
}

// WriteTxnMarkers (v1) for one producer on partitions of topic, as the coordinator sends it; the
// error code of each partition ({-999}: no answer).
inline std::vector<int16_t> end_txn(kafka_client& c, int64_t pid, int16_t epoch, bool commit,
                                    int32_t coordinator_epoch, const std::string& topic,
                                    std::vector<int32_t> partitions = {0}) {
    protocol::write_txn_markers_request req;
    auto& m = req.markers.emplace_back();
    m.producer_id = pid;
    m.producer_epoch = epoch;
    m.transaction_result = commit;
    m.coordinator_epoch = coordinator_epoch;
    auto& t = m.topics.emplace_back();
    t.name = topic;
    t.partition_indexes = std::move(partitions);
    auto resp =
        c.call<protocol::write_txn_markers_request, protocol::write_txn_markers_response>(1, req);
    if (!resp) {
        return {-999};
    }
    EXPECT_EQ(resp->markers.at(0).producer_id, pid);
    std::vector<int16_t> out;
    for (const auto& p : resp->markers.at(0).topics.at(0).partitions) {
        out.push_back(p.error_code);
    }
    return out;
}

struct fetched {
    int16_t error = -1;
    int64_t high_watermark = -1;
    int64_t last_stable_offset = -1;
    std::vector<std::pair<int64_t, int64_t>> aborted;  // producer id, first offset
    std::vector<std::string> values;                   // data records, in offset order
    int markers = 0;                                   // control batches returned
};

// A sessionless Fetch (v11) of partition 0 from offset with an isolation level, decoded. The
// broker returns aborted records below the LSO too: dropping them is the client's job.
inline fetched fetch(kafka_client& c, const std::string& topic, int8_t isolation,
                     int64_t offset = 0) {
    namespace rec = protocol::records;
    auto req = fetch_partition_0(topic, offset);
    req.isolation_level = isolation;
    req.max_wait_ms = 0;
    req.min_bytes = 0;
    fetched out;
    auto resp = c.call<protocol::fetch_request, protocol::fetch_response>(11, req);
    if (!resp) {
        return out;
    }
    const auto& pd = resp->responses.at(0).partitions.at(0);
    out.error = pd.error_code;
    out.high_watermark = pd.high_watermark;
    out.last_stable_offset = pd.last_stable_offset;
    if (pd.aborted_transactions) {
        for (const auto& a : *pd.aborted_transactions) {
            out.aborted.emplace_back(a.producer_id, a.first_offset);
        }
    }
    auto bytes = pd.records.bytes();
    rec::decompress_buffer scratch;
    rec::validate_options vo;
    vo.origin = rec::batch_origin::log;
    rec::batch_walker walker(bytes, vo, scratch);
    while (!walker.done()) {
        auto info = walker.next();
        if (!info) {
            ADD_FAILURE() << info.error().message();
            break;
        }
        if (info.value().is_control()) {
            ++out.markers;
            continue;
        }
        rec::record_reader reader(rec::records_section(bytes, info.value()),
                                  info.value().record_count);
        rec::record_view r;
        while (reader.next(r)) {
            out.values.emplace_back(r.value.as_string());
        }
    }
    return out;
}

// fetch() after a restart: retried every 100 ms for up to 10 s until the partition serves (its
// log reopens with the broker); the last answer.
inline fetched fetch_once_served(kafka_client& c, const std::string& topic, int8_t isolation) {
    fetched out;
    for (int i = 0; i < 100; ++i) {
        out = fetch(c, topic, isolation);
        if (out.error == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return out;
}

// What the crash tests crash in the middle of: producer a's transaction aborted (a1 at offset 0,
// its marker at 1), producer b's open (b1, b2 at 2-3), so the last stable offset is 2.
inline void write_aborted_then_open(kafka_client& c, const std::string& topic, int64_t a,
                                    int64_t b) {
    ASSERT_EQ(produce(c, topic, a, 0, 0, {"a1"}).first, 0);
    ASSERT_EQ(end_txn(c, a, 0, false, 0, topic), std::vector<int16_t>{0});
    ASSERT_EQ(produce(c, topic, b, 0, 0, {"b1", "b2"}).first, 0);
    ASSERT_EQ(fetch(c, topic, read_committed).last_stable_offset, 2);
}

// After the crash and restart: the same as before it. Below the LSO a1 is returned with a
// listed as aborted (the client drops it); b is still open.
inline void expect_aborted_then_open(const fetched& after, int64_t a) {
    EXPECT_EQ(after.error, 0);
    EXPECT_EQ(after.high_watermark, 4);
    EXPECT_EQ(after.last_stable_offset, 2);
    EXPECT_EQ(after.aborted, (std::vector<std::pair<int64_t, int64_t>>{{a, 0}}));
    EXPECT_EQ(after.values, std::vector<std::string>{"a1"});
}

}  // namespace spool::tests::txn
