#pragma once

// Helpers for storage tests: temporary directories and record batches built with the real
// protocol/records builder (no hand-made bytes).

#include "broker/storage/partition_log.h"
#include "common/testing/temp_dir.h"
#include "protocol/records/batch_builder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace spool::broker::storage::test {

namespace rec = spool::protocol::records;

// A fresh directory under the build's temp area, removed at destruction.
class temp_dir : public spool::testing::temp_dir {
public:
    temp_dir() : spool::testing::temp_dir("spool-storage-tests") {}
};

struct batch_spec {
    int records = 1;
    size_t value_size = 16;
    int64_t timestamp = 1000;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    int32_t base_sequence = -1;
    std::string key{};  // empty: null key
    bool tombstone = false;
    rec::compression codec = rec::compression::none;
    bool transactional = false;
};

inline std::vector<uint8_t> make_batch(const batch_spec& s) {
    rec::batch_options o;
    o.codec = s.codec;
    o.producer_id = s.producer_id;
    o.producer_epoch = s.producer_epoch;
    o.base_sequence = s.base_sequence;
    o.transactional = s.transactional;
    rec::batch_builder b(o);
    std::string value(s.value_size, 'v');
    for (int i = 0; i < s.records; ++i) {
        auto key = s.key.empty() ? rec::nullable_bytes::null() : rec::nullable_bytes::of(s.key);
        auto val = s.tombstone ? rec::nullable_bytes::null() : rec::nullable_bytes::of(value);
        b.add(s.timestamp + i, key, val);
    }
    return b.build();
}

// Appends one batch and returns its base offset.
inline model::offset append_one(partition_log& log, const batch_spec& s,
                                model::leader_epoch epoch = model::leader_epoch(0)) {
    auto bytes = make_batch(s);
    auto r = log.append(bytes, epoch);
    EXPECT_TRUE(r) << (r ? "" : r.error().message());
    return r ? r.value().base_offset : model::offset(-1);
}

// A transaction marker as the coordinator's WriteTxnMarkers makes it (protocol/records).
inline std::vector<uint8_t> make_marker(int64_t pid, int16_t epoch, bool commit,
                                        int32_t coordinator_epoch = 0) {
    rec::control_batch_options o;
    o.producer_id = pid;
    o.producer_epoch = epoch;
    o.coordinator_epoch = coordinator_epoch;
    o.timestamp = 1000;
    std::vector<uint8_t> out;
    EXPECT_FALSE(rec::build_control_batch(commit ? rec::control_type::commit
                                                 : rec::control_type::abort,
                                          o, out));
    return out;
}

// Reads the bytes of a slice back (tests only; the broker sends them with sendfile).
inline std::vector<uint8_t> slice_bytes(const file_slice& s) {
    std::vector<uint8_t> out(s.length);
    auto n = ::pread(s.file->fd(), out.data(), out.size(), static_cast<off_t>(s.offset));
    out.resize(n < 0 ? 0 : size_t(n));
    return out;
}

// Base offsets of the batches in a read result, in order.
inline std::vector<int64_t> batch_offsets(const read_result& r) {
    std::vector<int64_t> out;
    for (const auto& s : r.slices) {
        auto bytes = slice_bytes(s);
        size_t pos = 0;
        while (pos + rec::batch_header_size <= bytes.size()) {
            auto info = batch_info::decode(bytes.data() + pos);
            out.push_back(info.base_offset.value());
            pos += info.size();
        }
    }
    return out;
}

// The partition owner's task queue: completions from the flusher or cleaner thread land here and
// run when the test drains it, as they would on the owning core.
class owner_queue {
public:
    post_fn poster() {
        return [this](std::function<void()> f) {
            std::lock_guard lk(_mu);
            _tasks.push_back(std::move(f));
        };
    }
    // Runs queued tasks until pred() holds (or 10 s pass).
    template <class P>
    bool drain_until(P pred) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!pred()) {
            if (std::chrono::steady_clock::now() > deadline) {
                return false;
            }
            std::function<void()> f;
            {
                std::lock_guard lk(_mu);
                if (!_tasks.empty()) {
                    f = std::move(_tasks.front());
                    _tasks.pop_front();
                }
            }
            if (f) {
                f();
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        }
        return true;
    }

    // Runs what is queued now.
    void run_queued() {
        std::deque<std::function<void()>> tasks;
        {
            std::lock_guard lk(_mu);
            tasks.swap(_tasks);
        }
        for (auto& f : tasks) {
            f();
        }
    }

private:
    std::mutex _mu;
    std::deque<std::function<void()>> _tasks;
};

inline log_config small_segments(uint32_t segment_bytes = 4096) {
    log_config c;
    c.segment_bytes = segment_bytes;
    c.index_interval_bytes = 256;
    c.segment_index_bytes = 4096;
    return c;
}

}  // namespace spool::broker::storage::test
