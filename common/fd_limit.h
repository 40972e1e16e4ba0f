#pragma once

// The process's open-file budget (RLIMIT_NOFILE). Every partition keeps a few descriptors open
// (one .log, .index and .timeindex per segment) on top of the sockets, so the broker raises its
// soft limit to the hard limit at start, as Kafka's packaging and Redpanda do, and checks a
// CreateTopics/CreatePartitions against what is left before creating anything.
//
// Threading: free functions; safe from any thread (they read /proc and call getrlimit).

#include <cstdint>

namespace spool {

struct fd_limit {
    uint64_t soft = 0;  // RLIM_INFINITY is reported as UINT64_MAX
    uint64_t hard = 0;
};

// Current RLIMIT_NOFILE.
fd_limit current_fd_limit();

// Sets the soft limit to the hard limit (capped at what the kernel accepts, fs.nr_open) and
// returns the limits before and after. Never lowers anything.
struct fd_limit_change {
    fd_limit before;
    fd_limit after;
};
fd_limit_change raise_fd_limit_to_hard();

// Descriptors open in this process now (entries of /proc/self/fd), or 0 when unreadable.
uint64_t open_fd_count();

}  // namespace spool
