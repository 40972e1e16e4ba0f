#include "tests/integration/sanitizer_report.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace spool::tests {

namespace {

// The line each runtime starts a report with. UBSan's is "<file>:<line>:<col>: runtime error:"
// (with -fno-sanitize-recover the process aborts right after it).
constexpr std::array<std::string_view, 5> report_markers = {
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "WARNING: ThreadSanitizer",
    ": runtime error: ",
    "SUMMARY: UndefinedBehaviorSanitizer",
};

// A stack of the first report is enough to act on; the whole log is in the test's output
// directory anyway.
constexpr size_t report_lines = 40;

}  // namespace

std::string sanitizer_report(std::string_view log) {
    size_t first = std::string_view::npos;
    for (auto marker : report_markers) {
        first = std::min(first, log.find(marker));
    }
    if (first == std::string_view::npos) {
        return {};
    }
    size_t begin = log.rfind('\n', first);
    begin = begin == std::string_view::npos ? 0 : begin + 1;
    size_t end = begin;
    for (size_t lines = 0; lines < report_lines && end < log.size(); ++lines) {
        size_t nl = log.find('\n', end);
        end = nl == std::string_view::npos ? log.size() : nl + 1;
    }
    return std::string(log.substr(begin, end - begin));
}

}  // namespace spool::tests
