#include "broker/net/frame_buffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

namespace spool::broker::net {
namespace {

constexpr size_t mib = 1024 * 1024;

// Writes `n` bytes of `source` (from `from`) into the buffers prepare() returned, as a read does.
size_t fill(const std::vector<boost::asio::mutable_buffer>& buffers,
            const std::vector<uint8_t>& source, size_t from, size_t n) {
    size_t done = 0;
    for (const auto& b : buffers) {
        size_t length = std::min(b.size(), n - done);
        std::memcpy(b.data(), source.data() + from + done, length);
        done += length;
        if (done == n) {
            break;
        }
    }
    return done;
}

std::vector<uint8_t> pattern(size_t n) {
    std::vector<uint8_t> v(n);
    std::mt19937 rng(7);
    for (auto& b : v) {
        b = static_cast<uint8_t>(rng());
    }
    return v;
}

size_t total(const std::vector<boost::asio::mutable_buffer>& buffers) {
    size_t n = 0;
    for (const auto& b : buffers) {
        n += b.size();
    }
    return n;
}

TEST(frame_buffer_test, test_a_claimed_frame_allocates_nothing_until_bytes_arrive) {
    frame_buffer f(100 * mib);
    EXPECT_EQ(f.allocated_bytes(), 0u);
    EXPECT_EQ(f.missing(), 100 * mib);
}

TEST(frame_buffer_test, test_a_frame_whose_bytes_are_all_there_is_read_in_place_and_never_copied) {
    auto source = pattern(3 * mib);
    frame_buffer f(source.size());
    auto buffers = f.prepare(source.size());
    ASSERT_EQ(buffers.size(), 1u);
    f.commit(fill(buffers, source, 0, source.size()));
    ASSERT_TRUE(f.complete());
    EXPECT_EQ(f.copied_bytes(), 0u);
    EXPECT_EQ(f.release(), source);
}

TEST(frame_buffer_test, test_a_few_bytes_of_a_large_claim_hold_one_small_chunk) {
    frame_buffer f(100 * mib);
    auto buffers = f.prepare(16);
    EXPECT_EQ(total(buffers), 16u);
    f.commit(16);
    EXPECT_EQ(f.allocated_bytes(), frame_buffer::min_chunk_bytes);
}

TEST(frame_buffer_test, test_a_trickled_frame_holds_at_most_its_bytes_plus_one_chunk) {
    frame_buffer f(100 * mib);
    auto source = pattern(8 * mib);
    size_t step = 3000;  // what a slow client's segments bring
    for (size_t at = 0; at + step <= source.size(); at += step) {
        auto buffers = f.prepare(step);
        ASSERT_EQ(total(buffers), step);
        f.commit(fill(buffers, source, at, step));
        size_t slack = std::max(frame_buffer::min_chunk_bytes,
                                std::min(f.received(), frame_buffer::chunk_bytes));
        ASSERT_LE(f.allocated_bytes(), f.received() + slack);
    }
    EXPECT_EQ(f.copied_bytes(), 0u) << "trickled bytes are not moved while they arrive";
}

TEST(frame_buffer_test, test_a_trickled_frame_is_copied_once_when_its_last_bytes_are_ready) {
    auto source = pattern(5 * mib + 123);
    frame_buffer f(source.size());
    std::mt19937 rng(11);
    size_t at = 0;
    size_t before_last = 0;
    while (!f.complete()) {
        // Random arrivals; the last one brings the rest of the frame at once.
        size_t ready = std::min<size_t>(f.missing(), 1 + rng() % 200'000);
        if (ready == f.missing()) {
            before_last = f.received();
        }
        auto buffers = f.prepare(ready);
        size_t n = fill(buffers, source, at, total(buffers));
        f.commit(n);
        at += n;
    }
    EXPECT_EQ(f.copied_bytes(), before_last) << "each byte received in chunks is copied once";
    EXPECT_EQ(f.allocated_bytes(), source.size());
    EXPECT_EQ(f.release(), source);
}

TEST(frame_buffer_test, test_linearising_in_steps_copies_a_step_at_a_time_and_frees_as_it_goes) {
    auto source = pattern(2 * mib);
    frame_buffer f(source.size());
    size_t step = 100'000;
    size_t at = 0;
    while (f.missing() > step) {
        auto buffers = f.prepare(step);
        at += fill(buffers, source, at, total(buffers));
        f.commit(total(buffers));
    }
    ASSERT_TRUE(f.must_linearise(f.missing()));
    size_t held = f.allocated_bytes();
    size_t steps = 0;
    while (!f.linearise(256 * 1024)) {
        ++steps;
        // A step copies whole chunks: at most the step plus one chunk.
        ASSERT_LE(f.copied_bytes(), steps * (256 * 1024 + frame_buffer::chunk_bytes));
        // Copied chunks are freed: the frame never holds much more than its size.
        ASSERT_LE(f.allocated_bytes(), source.size() + held - f.copied_bytes());
    }
    EXPECT_GE(steps, f.received() / (256 * 1024 + frame_buffer::chunk_bytes));
    EXPECT_FALSE(f.must_linearise(f.missing()));
    auto rest = f.prepare(f.missing());
    ASSERT_EQ(rest.size(), 1u);
    f.commit(fill(rest, source, at, total(rest)));
    EXPECT_EQ(f.copied_bytes(), at);
    EXPECT_EQ(f.release(), source);
}

TEST(frame_buffer_test, test_a_short_read_into_the_contiguous_buffer_continues_in_place) {
    auto source = pattern(frame_buffer::chunk_bytes * 3);
    frame_buffer f(source.size());
    auto first = f.prepare(100'000);
    f.commit(fill(first, source, 0, total(first)));
    auto last = f.prepare(f.missing());
    ASSERT_EQ(last.size(), 1u);
    f.commit(fill(last, source, 100'000, 10));  // the read returned fewer bytes than were ready
    EXPECT_EQ(f.copied_bytes(), 100'000u);
    auto rest = f.prepare(f.missing());
    ASSERT_EQ(rest.size(), 1u);
    f.commit(fill(rest, source, 100'010, total(rest)));
    EXPECT_EQ(f.copied_bytes(), 100'000u);
    EXPECT_EQ(f.release(), source);
}

TEST(frame_buffer_test, test_one_prepare_covers_no_more_chunks_than_one_read_fills) {
    frame_buffer f(100 * mib);
    auto buffers = f.prepare(50 * mib);
    EXPECT_EQ(buffers.size(), frame_buffer::max_buffers);
    EXPECT_EQ(f.allocated_bytes(), frame_buffer::max_buffers * frame_buffer::chunk_bytes);
}

TEST(frame_buffer_test, test_prepare_never_goes_past_the_frame) {
    frame_buffer f(10);
    auto buffers = f.prepare(1000);
    EXPECT_EQ(total(buffers), 10u);
    f.commit(10);
    EXPECT_TRUE(f.prepare(1000).empty());
}

}  // namespace
}  // namespace spool::broker::net
