// Hostile frames: claimed counts and lengths far beyond the frame, millions of tagged fields,
// truncation at every byte. Decoders must refuse them without crashing, and an allocation hook
// (this binary replaces global operator new) shows memory stays within 2x frame + 64 KiB.

#include "protocol/messages/all.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

namespace {
std::atomic<bool> counting{false};
std::atomic<size_t> allocated{0};

void* counted_alloc(size_t n) {
    if (counting.load(std::memory_order_relaxed)) {
        allocated.fetch_add(n, std::memory_order_relaxed);
    }
    void* p = std::malloc(n == 0 ? 1 : n);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}
}  // namespace

void* operator new(size_t n) {
    return counted_alloc(n);
}
void* operator new[](size_t n) {
    return counted_alloc(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
    std::free(p);
}

namespace spool::protocol {
namespace {

constexpr size_t slack = 64 * 1024;

// Decodes `frame` as Message at `version`, returning (ok, bytes allocated while decoding).
template <class Message>
std::pair<bool, size_t> decode_counting(const std::vector<uint8_t>& frame, int16_t version,
                                        wire::read_error* error = nullptr) {
    auto msg = std::make_unique<Message>();
    wire::reader r(frame);
    allocated = 0;
    counting = true;
    bool ok = msg->decode(r, version);
    counting = false;
    if (error != nullptr) {
        *error = r.error();
    }
    return {ok, allocated.load()};
}

void put_uvarint(std::vector<uint8_t>& out, uint64_t v) {
    wire::writer w(out);
    w.write_uvarint(v);
}
void put_i32(std::vector<uint8_t>& out, int32_t v) {
    wire::writer w(out);
    w.write_i32(v);
}

TEST(safety, test_compact_array_count_of_two_billion_is_refused_without_allocating) {
    // Metadata v9 request: topics claims 2^31 - 1 elements, followed by 1 KiB of filler.
    std::vector<uint8_t> frame;
    put_uvarint(frame, 0x80000000u);
    frame.resize(frame.size() + 1024, 0x01);
    wire::read_error err;
    auto [ok, bytes] = decode_counting<metadata_request>(frame, 9, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, wire::read_error::bad_length);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_classic_array_count_of_two_billion_is_refused_without_allocating) {
    // Produce v3 request: null transactional id | acks | timeout | topics count INT32_MAX.
    std::vector<uint8_t> frame = {0xff, 0xff, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00};
    put_i32(frame, INT32_MAX);
    frame.resize(frame.size() + 1024, 0x00);
    wire::read_error err;
    auto [ok, bytes] = decode_counting<produce_request>(frame, 3, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, wire::read_error::bad_length);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_array_count_that_fits_the_frame_but_not_its_elements_stays_bounded) {
    // Metadata v9 request: a count of 32768 two-byte topics over 64 KiB of bytes that decode as
    // null names (not allowed before v10), so the decode fails at the first element.
    std::vector<uint8_t> frame;
    put_uvarint(frame, 32768 + 1);
    frame.resize(frame.size() + 65536, 0x00);
    auto [ok, bytes] = decode_counting<metadata_request>(frame, 9);
    EXPECT_FALSE(ok);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_one_gib_compact_string_length_is_refused) {
    // ApiVersions v3 request: client_software_name claims 1 GiB.
    std::vector<uint8_t> frame;
    put_uvarint(frame, (1u << 30) + 1);
    frame.resize(frame.size() + 100, 'x');
    wire::read_error err;
    auto [ok, bytes] = decode_counting<api_versions_request>(frame, 3, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, wire::read_error::underflow);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_one_gib_bytes_length_is_refused) {
    // SaslAuthenticate v0 request: auth_bytes claims 1 GiB.
    std::vector<uint8_t> frame;
    put_i32(frame, 1 << 30);
    frame.resize(frame.size() + 100, 'x');
    auto [ok, bytes] = decode_counting<sasl_authenticate_request>(frame, 0);
    EXPECT_FALSE(ok);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_one_gib_records_length_is_refused) {
    // Produce v3 request: one topic "t", one partition, records claim 1 GiB.
    std::vector<uint8_t> frame = {0xff, 0xff, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,
                                  0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 't',  0x00,
                                  0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00};
    put_i32(frame, 1 << 30);
    frame.resize(frame.size() + 100, 0x00);
    auto [ok, bytes] = decode_counting<produce_request>(frame, 3);
    EXPECT_FALSE(ok);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_millions_of_tagged_fields_stay_within_frame_sized_memory) {
    // ApiVersions v3 request: two empty names, then 3 million empty unknown tagged fields.
    constexpr uint32_t count = 3'000'000;
    std::vector<uint8_t> frame = {0x01, 0x01};
    put_uvarint(frame, count);
    frame.reserve(frame.size() + 2 * count);
    for (uint32_t i = 0; i < count; ++i) {
        frame.push_back(0x0a);  // tag 10
        frame.push_back(0x00);  // size 0
    }
    auto [ok, bytes] = decode_counting<api_versions_request>(frame, 3);
    EXPECT_TRUE(ok);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_tagged_field_count_beyond_the_frame_is_refused) {
    std::vector<uint8_t> frame = {0x01, 0x01};
    put_uvarint(frame, 0xffffffffu);
    frame.resize(frame.size() + 64, 0x00);
    wire::read_error err;
    auto [ok, bytes] = decode_counting<api_versions_request>(frame, 3, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, wire::read_error::bad_length);
    EXPECT_LE(bytes, 2 * frame.size() + slack);
}

TEST(safety, test_overlong_varint_is_refused) {
    std::vector<uint8_t> frame = {0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    wire::read_error err;
    auto [ok, bytes] = decode_counting<api_versions_request>(frame, 3, &err);
    EXPECT_FALSE(ok);
    EXPECT_EQ(err, wire::read_error::bad_varint);
}

template <class List>
struct for_each_api;
template <class... P>
struct for_each_api<type_list<P...>> {
    template <class Fn>
    static void run(Fn fn) {
        (fn.template operator()<typename P::request>(), ...);
        (fn.template operator()<typename P::response>(), ...);
    }
};

// Every strict prefix of a valid message lacks bytes its encoding needs, so it must fail.
TEST(safety, test_truncation_at_every_byte_is_refused_for_every_message) {
    size_t frames = 0;
    for_each_api<all_apis>::run([&]<class Message>() {
        std::mt19937_64 rng(7);
        for (int16_t v = Message::min_version; v <= Message::max_version; ++v) {
            Message msg;
            msg.randomize(rng, v);
            std::vector<uint8_t> bytes;
            wire::writer w(bytes);
            msg.encode(w, v);
            for (size_t cut = 0; cut < bytes.size(); ++cut) {
                std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<long>(cut));
                auto [ok, allocated_bytes] = decode_counting<Message>(prefix, v);
                ASSERT_FALSE(ok) << typeid(Message).name() << " v" << v << " cut " << cut;
                ASSERT_LE(allocated_bytes, 2 * bytes.size() + slack);
                ++frames;
            }
        }
    });
    EXPECT_GT(frames, 1000u);
}

// Random bytes (and random mutations of valid messages) never crash a decoder, and whatever
// decodes re-encodes to a message that decodes the same.
TEST(safety, test_random_and_mutated_frames_never_crash) {
    for_each_api<all_apis>::run([&]<class Message>() {
        std::mt19937_64 rng(11);
        for (int16_t v = Message::min_version; v <= Message::max_version; ++v) {
            for (int round = 0; round < 20; ++round) {
                Message msg;
                msg.randomize(rng, v);
                std::vector<uint8_t> bytes;
                wire::writer w(bytes);
                msg.encode(w, v);
                if (bytes.empty()) {
                    continue;
                }
                for (int m = 0; m < 3; ++m) {
                    bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
                }
                auto [ok, allocated_bytes] = decode_counting<Message>(bytes, v);
                ASSERT_LE(allocated_bytes, 2 * bytes.size() + slack);
                if (ok) {
                    Message decoded;
                    wire::reader r(bytes);
                    ASSERT_TRUE(decoded.decode(r, v));
                    std::vector<uint8_t> again;
                    wire::writer w2(again);
                    decoded.encode(w2, v);
                    Message twice;
                    wire::reader r2(again);
                    ASSERT_TRUE(twice.decode(r2, v));
                    ASSERT_TRUE(twice == decoded);
                }
            }
        }
    });
}

}  // namespace
}  // namespace spool::protocol
