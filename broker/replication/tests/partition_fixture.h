#pragma once

// The fixture of replication::partition's tests: a real partition_log in a temp dir, a fake clock
// and an isr_writer that records the proposals and answers when the test says.

#include "broker/replication/partition.h"

#include "broker/storage/errc.h"
#include "broker/storage/tests/test_util.h"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace spool::broker::replication::test {

using namespace std::chrono_literals;
using storage::test::batch_spec;
using storage::test::make_batch;

class recording_isr_writer : public isr_writer {
public:
    void write(isr_change change, std::function<void(std::error_code)> done) override {
        changes.push_back(std::move(change));
        answers.push_back(std::move(done));
    }
    // Answers the oldest unanswered proposal.
    void answer(std::error_code ec = {}) {
        ASSERT_LT(answered, answers.size());
        answers[answered++](ec);
    }
    std::vector<isr_change> changes;
    std::vector<std::function<void(std::error_code)>> answers;
    size_t answered = 0;
};

inline partition_assignment assignment(int32_t leader, int32_t epoch, std::vector<int32_t> isr,
                                int32_t partition_epoch = 0,
                                std::vector<int32_t> replicas = {1, 2, 3}) {
    partition_assignment a;
    a.leader = leader;
    a.leader_epoch = epoch;
    a.partition_epoch = partition_epoch;
    a.replicas = std::move(replicas);
    a.isr = std::move(isr);
    a.record_revision = 100 + partition_epoch;
    return a;
}

// The leader's bytes as a fetch returns them: everything from `from`.
inline std::vector<uint8_t> read_all(partition& p, model::offset from) {
    auto rd = p.log().read(from, 1 << 20, p.log().log_end_offset());
    EXPECT_TRUE(rd);
    std::vector<uint8_t> out;
    for (const auto& s : rd.value().slices) {
        auto b = storage::test::slice_bytes(s);
        out.insert(out.end(), b.begin(), b.end());
    }
    return out;
}

class partition_test : public ::testing::Test {
protected:
    std::unique_ptr<partition> make(int32_t self = 1, std::string topic = "t",
                                    storage::log_config cfg = {}) {
        auto log = storage::partition_log::open(_dir.path() / (topic + "-0"),
                                                {topic, model::partition_id(0)}, cfg);
        EXPECT_TRUE(log);
        partition_options o;
        o.self = self;
        o.replica_lag_time_max = 30s;
        o.clock = [this] { return now; };
        o.isr = &writer;
        o.high_watermark_moved = [this] { ++hw_moves; };
        return std::make_unique<partition>(std::move(log).value(), ioc.get_executor(), o);
    }

    // Appends `records` records as leader (acks=-1 unless told, min ISR 1); the last offset + 1.
    static model::offset produce(partition& p, int records = 1, int16_t acks = -1) {
        auto bytes = make_batch({.records = records});
        auto r = p.append_as_leader(bytes, acks, 1);
        EXPECT_TRUE(r) << (r ? "" : r.error().message());
        return r ? r.value().last_offset + 1 : model::offset(-1);
    }

    storage::test::temp_dir _dir;
    boost::asio::io_context ioc;
    steady_time now = std::chrono::steady_clock::now();
    recording_isr_writer writer;
    int hw_moves = 0;
};

}  // namespace spool::broker::replication::test
