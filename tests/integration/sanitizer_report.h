#pragma once

// Finds what a sanitizer runtime (ASan, LSan, UBSan, TSan) wrote into a child process's log, so a
// test that runs a real spool-broker built with a sanitizer preset fails on a finding the
// broker made, not only on one made in the test's own process. broker_process checks its log
// with it when the process is gone (broker_process.h).
//
// Threading: pure functions.

#include <string>
#include <string_view>

namespace spool::tests {

// The first sanitizer report in `log`, from its first line up to a bounded number of lines
// (enough for the stack that says where), or "" when the log holds none.
std::string sanitizer_report(std::string_view log);

}  // namespace spool::tests
