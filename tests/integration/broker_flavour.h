#pragma once

// What kind of spool-broker binary a process test starts, for the bounds such a test checks.
// The harness may be a release build driving a sanitizer-built broker (SPOOL_BROKER_BIN: a
// TSan-built harness crashes in uninstrumented librdkafka), so the harness's own build flavour
// (common/testing/build_flavour.h) does not tell how slow the broker under test runs.
//
// Threading: any thread (the answer is computed once).

#include <string>

namespace spool::tests {

// $SPOOL_BROKER_BIN when set and not empty, else the spool-broker this build made.
std::string broker_binary();

// True when broker_binary() is built with ASan or TSan (it links the runtime's __asan_init or
// __tsan_init: read from its ELF dynamic symbol names), or when this test binary itself is an
// instrumented build (then so is the broker it made).
bool broker_instrumented();

// The factor a time bound on the broker under test is multiplied by: testing::slowdown() of
// an instrumented build when broker_instrumented(), else 1. The scaled bound still catches a
// change in complexity; only sanitizer or unoptimized runs get it.
double broker_slowdown();

}  // namespace spool::tests
