// broker_process fails a test whose broker wrote a sanitizer report to its log, and
// sanitizer_report() recognizes the reports of each runtime but nothing a clean broker logs.

#include "tests/integration/sanitizer_report.h"

#include "tests/integration/broker_process.h"
#include "tests/integration/child_process.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

namespace spool::tests {
namespace {

namespace fs = std::filesystem;

TEST(sanitizer_report, test_finds_each_runtimes_report_and_its_stack) {
    const std::string asan =
        "2026-12-01T10:00:00.000 info [app] serving\n"
        "=================================================================\n"
        "==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010\n"
        "READ of size 8 at 0x602000000010 thread T1 (shard-0)\n"
        "    #0 0x55 in spool::broker::net::connection::close() connection.cc:88\n";
    auto report = sanitizer_report(asan);
    EXPECT_EQ(report.find("==4242==ERROR: AddressSanitizer: heap-use-after-free"), 0u) << report;
    EXPECT_NE(report.find("connection.cc:88"), std::string::npos) << report;

    EXPECT_NE(sanitizer_report("broker/storage/segment.cc:120:17: runtime error: signed integer "
                               "overflow: 2147483647 + 1 cannot be represented in type 'int'\n"),
              "");
    EXPECT_NE(sanitizer_report("WARNING: ThreadSanitizer: data race (pid=7)\n  Write of size 8\n"),
              "");
    EXPECT_NE(sanitizer_report("==9==ERROR: LeakSanitizer: detected memory leaks\n"), "");
}

TEST(sanitizer_report, test_a_clean_broker_log_has_none) {
    const std::string clean =
        "2026-12-01T10:00:00.000 info [app] received SIGTERM, shutting down\n"
        "2026-12-01T10:00:00.100 warn [net] 1 connections still busy after 10000 ms, closing them\n"
        "2026-12-01T10:00:00.200 error [kafka] produce to t-0 failed: runtime error reading\n"
        "2026-12-01T10:00:00.300 info [app] stopped\n";
    EXPECT_EQ(sanitizer_report(clean), "");
}

// A stand-in broker that writes what ASan writes and exits, run through the real fixture.
TEST(sanitizer_report, test_broker_process_fails_the_test_when_its_broker_reported_one) {
    auto dir = make_temp_dir("spool-fake-broker");
    auto script = dir / "fake-broker.sh";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\n"
               "echo '==77==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x1' >&2\n"
               "echo '    #0 0x1 in spool::broker::main main.cc:1' >&2\n"
               "exit 1\n";
    }
    ::chmod(script.c_str(), 0755);
    ::setenv("SPOOL_BROKER_BIN", script.c_str(), 1);
    EXPECT_NONFATAL_FAILURE(
        {
            broker_process broker;
            EXPECT_EQ(broker.run_to_exit(std::chrono::seconds(10)), 1);
            EXPECT_NE(broker.sanitizer_findings(), "");
        },
        "heap-buffer-overflow");
    ::unsetenv("SPOOL_BROKER_BIN");
    std::error_code ec;
    fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace spool::tests
