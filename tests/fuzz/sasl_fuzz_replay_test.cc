// The SASL fuzzer's driver under any compiler: its seeds and a few thousand pseudo-random inputs
// run against the in-process broker, every request answered, and the seeds that complete a SCRAM
// exchange do complete it (the driver reaches the success path, not only the refusals).

#include "tests/fuzz/sasl_fuzz.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace spool::tests::fuzz {
namespace {

TEST(sasl_fuzz_replay, test_real_scram_exchanges_complete_in_exchange_mode) {
    sasl_under_fuzz sasl;
    ASSERT_EQ(sasl.error(), "");
    // Even first byte: exchange mode; SHA-256; user bob; password bob-secret; real messages.
    sasl.run(std::vector<uint8_t>{0, 0, 1, 1, 0, 0});
    // SHA-512 likewise.
    sasl.run(std::vector<uint8_t>{0, 1, 1, 1, 0, 0});
    EXPECT_EQ(sasl.exchanges_completed(), 2u);
    // A wrong password does not complete.
    sasl.run(std::vector<uint8_t>{0, 0, 1, 2, 0, 0});
    EXPECT_EQ(sasl.exchanges_completed(), 2u);
    EXPECT_EQ(sasl.stop(), 0u);
}

TEST(sasl_fuzz_replay, test_random_inputs_are_all_answered) {
    sasl_under_fuzz sasl;
    ASSERT_EQ(sasl.error(), "");
    std::mt19937 rng(32);
    size_t sent = 0;
    for (int i = 0; i < 400; ++i) {
        std::vector<uint8_t> input(rng() % 200);
        for (auto& b : input) {
            b = static_cast<uint8_t>(rng());
        }
        if (!input.empty() && i % 2 == 0) {
            input[0] |= 1;  // connection mode
        }
        sent += sasl.run(input);
    }
    // Connection mode: SaslHandshake v1 PLAIN, SaslAuthenticate v2 alice's right password, then
    // the same again (a re-authentication, KIP-368).
    const std::vector<uint8_t> login{0, 1, 0, 2, 2, 1, 0, 0, 0};
    std::vector<uint8_t> twice{1};
    twice.insert(twice.end(), login.begin(), login.end());
    twice.insert(twice.end(), login.begin(), login.end());
    EXPECT_EQ(sasl.run(twice), 4u);
    EXPECT_GT(sent, 0u);
    EXPECT_EQ(sasl.stop(), 0u) << "requests left unanswered";
}

}  // namespace
}  // namespace spool::tests::fuzz
