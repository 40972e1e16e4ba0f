// The nemesis soak (issue #31; tests/nemesis/README.md): faults drawn from a seeded PRNG, one
// after another under the same workload, each followed by settle(), then every checker. The
// seed is printed first; SPOOL_NEMESIS_SEED=<seed> replays the same schedule (which faults, on
// the leader or a follower, for how long, and whether the topic is fsynced on every record).
// SPOOL_NEMESIS_SOAK_SECONDS sets how long faults keep coming (default 60): the `nemesis` label
// runs it short, the `soak` label long.

#include "tests/nemesis/nemesis.h"

#include <cinttypes>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace spool::tests::nemesis {
namespace {

uint64_t soak_seed() {
    static const uint64_t seed = [] {
        if (const char* v = std::getenv("SPOOL_NEMESIS_SEED"); v != nullptr && *v != '\0') {
            return static_cast<uint64_t>(std::strtoull(v, nullptr, 10));
        }
        std::random_device rd;
        return (static_cast<uint64_t>(std::time(nullptr)) << 20) ^ rd();
    }();
    return seed;
}

// The faults the soak draws from, by name; SPOOL_NEMESIS_SOAK_EXCLUDE (names, comma-separated)
// leaves some out: a known gap's fault (README.md), until the broker is fixed.
const std::vector<std::string> fault_names = {"kill9",
                                              "sigstop",
                                              "power_cut",
                                              "power_cut",
                                              "replace_volume",
                                              "etcd_pause",
                                              "etcd_kill",
                                              "cut_from_etcd_refused",
                                              "cut_from_etcd_blackholed",
                                              "failing_disk",
                                              "power_cut_all"};

bool excluded(const std::string& name) {
    const char* v = std::getenv("SPOOL_NEMESIS_SOAK_EXCLUDE");
    if (v == nullptr) {
        return false;
    }
    const std::string list = "," + std::string(v) + ",";
    return list.find("," + name + ",") != std::string::npos;
}

long soak_seconds() {
    const char* v = std::getenv("SPOOL_NEMESIS_SOAK_SECONDS");
    return v != nullptr && *v != '\0' ? std::strtol(v, nullptr, 10) : 60;
}

// The schedule's first draw: whether every record is fsynced (then a power cut of all three may
// be drawn too).
bool draws_flushed(uint64_t seed) {
    std::mt19937_64 rng(seed);
    return rng() % 2 == 0;
}

class nemesis_soak : public nemesis_fixture {
protected:
    nemesis_soak() : nemesis_fixture(draws_flushed(soak_seed())) {}
};

TEST_F(nemesis_soak, randomized) {
    const uint64_t seed = soak_seed();
    std::mt19937_64 rng(seed);
    const bool flushed = rng() % 2 == 0;  // draws_flushed's draw
    const char* exclude = std::getenv("SPOOL_NEMESIS_SOAK_EXCLUDE");
    std::printf("[ nemesis ] seed %" PRIu64
                " (%s), faults for %ld s%s%s; replay with "
                "SPOOL_NEMESIS_SEED=%" PRIu64 "\n",
                seed, flushed ? "every record fsynced" : "no flush policy", soak_seconds(),
                exclude != nullptr ? ", leaving out " : "", exclude != nullptr ? exclude : "",
                seed);
    std::fflush(stdout);
    RecordProperty("seed", std::to_string(seed));
    SCOPED_TRACE("replay: SPOOL_NEMESIS_SEED=" + std::to_string(seed) +
                 " ctest --preset release -R nemesis_soak");

    auto between = [&](long lo_ms, long hi_ms) {
        return std::chrono::milliseconds(lo_ms + static_cast<long>(rng() % (hi_ms - lo_ms + 1)));
    };
    const long s = static_cast<long>(session().count());
    const auto deadline = clock_type::now() + std::chrono::seconds(soak_seconds());
    int steps = 0;
    while (clock_type::now() < deadline && !HasFailure()) {
        // power_cut_all (the last) only when every record is fsynced.
        int kind = 0;
        do {
            kind =
                static_cast<int>(rng() % (flushed ? fault_names.size() : fault_names.size() - 1));
        } while (excluded(fault_names[static_cast<size_t>(kind)]));
        const bool on_leader = rng() % 2 == 0;
        const size_t target = on_leader ? leader() : follower();
        const auto quick = between(100, s / 2);
        const auto slow = between(s + 500, s * 2 + 1000);
        const bool fast = rng() % 2 == 0;
        fault_record f;
        switch (kind) {
            case 0:
                f = kill9(target, fast ? quick : slow);
                break;
            case 1:
                f = sigstop(target, fast ? quick : slow);
                break;
            case 2:
            case 3:
                f = power_cut(target, fast ? quick : slow);
                break;
            case 4:
                f = replace_volume(target);
                break;
            case 5:
                f = etcd_pause(fast ? quick : slow);
                break;
            case 6:
                f = etcd_kill(fast ? quick : slow);
                break;
            case 7:
                f = cut_from_etcd(target, etcd_proxy::mode::refuse, slow + 2s);
                break;
            case 8:
                f = cut_from_etcd(target, etcd_proxy::mode::blackhole, slow + 2s);
                break;
            case 9:
                f = failing_disk(target, fast ? quick : slow);
                break;
            default:
                f = power_cut_all(fast ? quick : slow);
                break;
        }
        settle(f);
        ++steps;
    }
    std::printf("[ nemesis ] seed %" PRIu64 ": %d faults\n", seed, steps);
    check_all();
    EXPECT_GT(steps, 0);
}

}  // namespace
}  // namespace spool::tests::nemesis
