// Every message at every version: random content -> encode -> decode -> equal -> re-encode
// byte-equal, and encoded_size() equals the bytes written.

#include "protocol/messages/all.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace spool::protocol {
namespace {

constexpr int rounds_per_version = 40;

template <class Message>
void round_trip_all_versions(uint64_t seed) {
    for (int16_t version = Message::min_version; version <= Message::max_version; ++version) {
        std::mt19937_64 rng(seed + static_cast<uint64_t>(version));
        for (int round = 0; round < rounds_per_version; ++round) {
            SCOPED_TRACE(testing::Message() << "version " << version << " round " << round);
            Message original;
            original.randomize(rng, version);

            std::vector<uint8_t> bytes;
            wire::writer w(bytes);
            original.encode(w, version);
            ASSERT_EQ(original.encoded_size(version), bytes.size());

            Message decoded;
            wire::reader r(bytes);
            ASSERT_TRUE(decoded.decode(r, version)) << static_cast<int>(r.error());
            ASSERT_EQ(r.remaining(), 0u);
            ASSERT_TRUE(decoded == original);

            std::vector<uint8_t> again;
            wire::writer w2(again);
            decoded.encode(w2, version);
            ASSERT_EQ(again, bytes);
        }
    }
}

template <class List>
struct to_gtest_types;
template <class... T>
struct to_gtest_types<type_list<T...>> {
    using type = ::testing::Types<T...>;
};

template <class Pair>
class message_round_trip : public ::testing::Test {};
TYPED_TEST_SUITE(message_round_trip, to_gtest_types<all_apis>::type);

TYPED_TEST(message_round_trip, test_request_round_trips_at_every_version) {
    round_trip_all_versions<typename TypeParam::request>(1);
}

TYPED_TEST(message_round_trip, test_response_round_trips_at_every_version) {
    round_trip_all_versions<typename TypeParam::response>(2);
}

template <class Message>
class other_round_trip : public ::testing::Test {};
TYPED_TEST_SUITE(other_round_trip, to_gtest_types<other_messages>::type);

TYPED_TEST(other_round_trip, test_round_trips_at_every_version) {
    round_trip_all_versions<TypeParam>(3);
}

TEST(api_table, test_every_api_pair_agrees_on_versions) {
    []<class... P>(type_list<P...>) {
        (
            [] {
                using req = typename P::request;
                using resp = typename P::response;
                EXPECT_EQ(req::api, resp::api);
                EXPECT_EQ(req::min_version, resp::min_version);
                EXPECT_EQ(req::max_version, resp::max_version);
                const api_info* info = find_api(req::api);
                ASSERT_NE(info, nullptr);
                EXPECT_EQ(info->min_version, req::min_version);
                EXPECT_EQ(info->max_version, req::max_version);
                EXPECT_EQ(info->first_flexible_version, req::first_flexible_version);
            }(),
            ...);
    }(all_apis{});
    // + the four share-group APIs (KIP-932), their three admin APIs and the three share-state
    // requests a partition leader answers another broker (share_state_access.h), and the share
    // coordinator's ReadShareGroupState / WriteShareGroupState (broker/share), and
    // ListConfigResources (KIP-1142).
    EXPECT_EQ(supported_apis.size(), 62u);
}

}  // namespace
}  // namespace spool::protocol
