// whole_batches_size (fetched_records.h): a follower appends whole batches only, whatever byte
// the leader cut the records at.

#include "broker/replication/fetched_records.h"

#include "protocol/records/batch_builder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace spool::broker::replication {
namespace {

namespace rec = protocol::records;

std::vector<uint8_t> batch(int64_t base_offset, int records) {
    rec::batch_options options;
    options.base_offset = base_offset;
    options.partition_leader_epoch = 3;
    rec::batch_builder b(options);
    for (int i = 0; i < records; ++i) {
        std::string value = "value-" + std::to_string(base_offset + i);
        b.add(1000 + i, {},
              {{reinterpret_cast<const uint8_t*>(value.data()), value.size()}, false});
    }
    return b.build();
}

TEST(fetched_records, test_every_cut_inside_the_last_batch_keeps_only_the_whole_ones) {
    auto first = batch(0, 3);
    auto second = batch(3, 5);
    std::vector<uint8_t> run = first;
    run.insert(run.end(), second.begin(), second.end());
    EXPECT_EQ(whole_batches_size(run), run.size());
    for (size_t cut = first.size(); cut < run.size(); ++cut) {
        EXPECT_EQ(whole_batches_size(std::span(run).first(cut)), first.size()) << cut;
    }
    for (size_t cut = 0; cut < first.size(); ++cut) {
        EXPECT_EQ(whole_batches_size(std::span(run).first(cut)), 0u) << cut;
    }
}

TEST(fetched_records, test_a_length_below_the_batch_header_stops_the_walk_there) {
    auto good = batch(0, 2);
    std::vector<uint8_t> run = good;
    auto bad = batch(2, 2);
    bad[8] = 0;  // batch_length 0x000000xx -> below the fixed header
    bad[9] = 0;
    bad[10] = 0;
    bad[11] = 10;
    run.insert(run.end(), bad.begin(), bad.end());
    EXPECT_EQ(whole_batches_size(run), good.size());
}

TEST(fetched_records, test_empty_records_are_zero_bytes) {
    EXPECT_EQ(whole_batches_size({}), 0u);
}

}  // namespace
}  // namespace spool::broker::replication
