#pragma once

// The process plumbing shared by the fixtures that run a real peer for a test (broker_process,
// etcd_process): a temporary data directory, fork+exec with stdout/stderr appended to a log,
// reaping, and killing.
//
// Threading: test thread only.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace spool::tests {

// A new empty directory under the temp dir named <prefix>-<pid>-<random>.
std::filesystem::path make_temp_dir(std::string_view prefix);

// fork + execv(args[0], args) with stdout and stderr appended to log; in_child (may be null)
// runs in the child before exec (only async-signal-safe calls there, e.g. setrlimit).
// The child gets SIGKILL when the thread that called spawn_logged ends (PR_SET_PDEATHSIG), so
// a harness that crashes or is killed leaves no process behind: spawn from the test thread (a
// child spawned from a worker thread dies when that thread exits).
pid_t spawn_logged(std::vector<std::string> args, const std::filesystem::path& log,
                   void (*in_child)(const void*) = nullptr, const void* arg = nullptr);

// True (and pid = -1) when the process has exited and is now reaped; the wait status in status.
bool reap_if_exited(pid_t& pid, int* status = nullptr);

// SIGKILL and reap (a SIGSTOPped process dies too); pid = -1. No-op when pid <= 0.
void kill_and_reap(pid_t& pid);

// The whole file, or "" when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace spool::tests
