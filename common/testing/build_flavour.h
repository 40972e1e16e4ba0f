#pragma once

// What kind of build a test runs in, for the few tests that also check a time budget. A
// sanitizer (ASan+UBSan, TSan) or unoptimized build runs the same code many times slower
// (ASan Debug: ~25x on the 100k-partition metadata build), so such a test scales its budget by
// slowdown() rather than fail for a reason that has nothing to do with the code: the scaled
// bound still catches a change in complexity (an O(n) step becoming O(n^2)).
//
// Threading: constants.

namespace spool::testing {

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
