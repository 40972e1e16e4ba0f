// A test harness that dies without running its destructors (a crash, SIGKILL, a CTest timeout)
// takes the spool-broker and etcd processes it started with it (child_process.h: the children
// get PR_SET_PDEATHSIG(SIGKILL)), instead of leaving them running with their ports and data.

#include "tests/integration/broker_process.h"
#include "tests/integration/child_process.h"

#ifdef SPOOL_ETCD_BIN
#include "tests/integration/etcd_process.h"
#endif

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace spool::tests {
namespace {

using namespace std::chrono_literals;

// What the harness started, as it reported it through a pipe (fixed size: one write).
struct started_child {
    pid_t pid = -1;
    char data_dir[512] = {};
};

// Gone, or a zombie nobody reaps (an orphan's new parent may be an init that never waits).
bool process_gone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) {
        return true;
    }
    std::string stat = read_text_file("/proc/" + std::to_string(pid) + "/stat");
    auto paren = stat.rfind(')');
    return paren == std::string::npos || (paren + 2 < stat.size() && stat[paren + 2] == 'Z');
}

// Forks a harness process that runs start() (which starts one child process and reports it),
// then SIGKILLs the harness once it reported and reaps it. What the harness started, or pid -1.
template <class Start>
started_child start_in_killed_harness(Start start) {
    int fds[2];
    if (::pipe(fds) != 0) {
        return {};
    }
    pid_t harness = ::fork();
    if (harness == 0) {
        ::close(fds[0]);
        started_child out = start();
        (void)!::write(fds[1], &out, sizeof out);
        std::this_thread::sleep_for(120s);  // killed long before; bounded all the same
        ::_exit(0);
    }
    ::close(fds[1]);
    started_child got;
    pollfd p{fds[0], POLLIN, 0};
    // A sanitizer-built broker or a cold etcd takes seconds to accept.
    if (harness > 0 && ::poll(&p, 1, 90'000) == 1 &&
        ::read(fds[0], &got, sizeof got) != static_cast<ssize_t>(sizeof got)) {
        got = {};
    }
    ::close(fds[0]);
    kill_and_reap(harness);  // SIGKILL: no destructor of the harness runs
    return got;
}

void expect_gone_with_its_harness(const started_child& child, const char* what) {
    ASSERT_GT(child.pid, 0) << "the harness did not start " << what;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!process_gone(child.pid) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    bool gone = process_gone(child.pid);
    if (!gone) {
        ::kill(child.pid, SIGKILL);  // leave nothing behind on failure either
    }
    std::error_code ec;
    std::filesystem::remove_all(child.data_dir, ec);
    EXPECT_TRUE(gone) << what << " (pid " << child.pid << ") outlived its killed harness by 10 s";
}

started_child report(pid_t pid, const std::filesystem::path& dir) {
    started_child out;
    out.pid = pid;
    std::strncpy(out.data_dir, dir.c_str(), sizeof out.data_dir - 1);
    return out;
}

TEST(harness_death, test_a_killed_harness_takes_its_broker_with_it) {
    auto child = start_in_killed_harness([] {
        auto* broker = new broker_process();  // never destroyed: the harness is killed
        return broker->start() ? report(broker->pid(), broker->data_dir()) : started_child{};
    });
    expect_gone_with_its_harness(child, "spool-broker");
}

#ifdef SPOOL_ETCD_BIN
TEST(harness_death, test_a_killed_harness_takes_its_etcd_with_it) {
    auto child = start_in_killed_harness([] {
        auto* etcd = new etcd_process();
        return etcd->start(60s) ? report(etcd->pid(), etcd->data_dir()) : started_child{};
    });
    expect_gone_with_its_harness(child, "etcd");
}
#endif

}  // namespace
}  // namespace spool::tests
