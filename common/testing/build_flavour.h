#pragma once

// What kind of build a test runs in, for the few tests that also check a time budget. A
// sanitizer (ASan+UBSan, TSan) or unoptimized build runs the same code many times slower
// (ASan Debug: ~25x on the 100k-partition metadata build), so such a test scales its budget by
// slowdown() rather than fail for a reason that has nothing to do with the code: the scaled
// bound still catches a change in complexity (an O(n) step becoming O(n^2)).
//
// Such a budget gates only the `timing` label's entries (SPOOL_ASSERT_TIMING_BOUNDS=1), which the
// full run leaves out: on a loaded CI machine a 50 ms budget measured 54 ms and failed a run that
// had nothing wrong with it. The full run prints the figure instead.
//
// Threading: constants, and an environment read.

#include <cstdlib>
#include <string_view>

namespace spool::testing {

// Whether time budgets are asserted (SPOOL_ASSERT_TIMING_BOUNDS=1).
inline bool timing_bounds_asserted() {
    const char* v = std::getenv("SPOOL_ASSERT_TIMING_BOUNDS");
    return v != nullptr && std::string_view(v) == "1";
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
inline constexpr bool instrumented_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool instrumented_build = true;
#else
inline constexpr bool instrumented_build = false;
#endif
#else
inline constexpr bool instrumented_build = false;
#endif

// The factor a time budget is multiplied by in this build.
inline constexpr double slowdown() {
    return instrumented_build ? 40.0 : 1.0;
}

}  // namespace spool::testing
