// Replays fuzz inputs through the in-process broker in every build (no libFuzzer needed): the
// crash inputs the broker fuzzer found (regressions/, one file per fixed bug, named after it)
// and the seeds built from real-client captures. Each input must be answered with well-formed
// responses, without a crash, a sanitizer report or a request left unanswered at shutdown
// (in_process_broker.h aborts on any of those, failing the test).

#include "tests/fuzz/fuzz_session.h"
#include "tests/fuzz/seed_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace spool::tests::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> regression_inputs() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(SPOOL_FUZZ_REGRESSIONS_DIR)) {
        if (e.is_regular_file() && e.path().filename() != "README.md") {
            files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

class regression : public ::testing::TestWithParam<fs::path> {};
// Empty until the fuzzer finds a crash (each fixed one lands in regressions/); the seeds test
// below always runs.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(regression);

TEST_P(regression, test_fuzzer_crash_input_is_answered) {
    auto input = read_bytes(GetParam());
    ASSERT_FALSE(input.empty()) << GetParam();
    broker_under_fuzz broker;
    // Twice: some inputs break only state the first run left behind.
    EXPECT_GT(broker.run(input), 0u);
    EXPECT_GT(broker.run(input), 0u);
    broker.stop();
    EXPECT_GT(broker.totals().responses, 0u);
}

INSTANTIATE_TEST_SUITE_P(broker_fuzz, regression, ::testing::ValuesIn(regression_inputs()),
                         [](const auto& info) {
                             std::string name = info.param.filename().string();
                             for (char& c : name) {
                                 c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                             }
                             return name;
                         });

TEST(broker_fuzz_seeds, test_every_captured_client_frame_gets_a_well_formed_answer) {
    auto seeds = build_seeds(SPOOL_CAPTURES_DIR, SPOOL_GENERATED_FRAMES_DIR);
    ASSERT_GT(seeds.size(), 100u);
    broker_under_fuzz broker;
    size_t sent = 0;
    for (const auto& s : seeds) {
        sent += broker.run(s.input);
        (void)broker.bound_state();
    }
    broker.stop();
    EXPECT_GE(sent, seeds.size());
    // Every request that was not refused at the header got an answer (none parked for good).
    EXPECT_EQ(broker.totals().requests, broker.totals().responses + broker.totals().parked);
    EXPECT_GT(broker.totals().responses, seeds.size() / 2);
}

}  // namespace
}  // namespace spool::tests::fuzz
