#pragma once

// How many shards the broker runs and on which CPUs their threads run.
//
// Shard count (spool.cores=0): one shard per CPU the process may actually use: the CPUs of its
// affinity mask (a container's cpuset, `taskset`), capped by its cgroup's CPU limit rounded up
// (a Kubernetes `resources.limits.cpu`). std::thread::hardware_concurrency() counts the node's
// cores, so a pod limited to 2 CPUs on a 32-core node would run 32 shards that the quota then
// throttles.
//
// Pinning (spool.cpu.pinning, off by default): shard i's thread is bound to the i-th CPU of the
// affinity mask. Unpinned, two busy shards can share one core while the other core runs short
// client or background work: the kernel does not pull a runnable thread onto a core whose idle
// periods are shorter than its migration cost (0.5 ms), so they stay stacked and a request for
// the shard that is not running waits whole time slices. Pinned, a shard cannot leave a core that
// a client or another process keeps busy. Measured on the 2-core CI machine, client and broker on
// the same cores:
//   - InitProducerId flood (tests/latency): the steady producer's p99 was 12-26 ms unpinned and
//     2.8-4.6 ms pinned; unpinned, the two shards shared CPU 1 for 15 ms while CPU 0 was idle 60%
//     of the time (perf sched timehist). Idle, pinning cost: in alternating blocks the idle p99
//     was 0.75 ms unpinned and 2.5 ms pinned (a hop to the other shard must wake that one CPU,
//     where unpinned the woken shard may run on the waker's);
//   - bench/compare.sh, pinned against unpinned (bench/results/20261202T0625Z-compare-pinning):
//     produce 0.69-0.89x, consume 0.32-1.14x with up to 4x the broker CPU, produce p99 1.95x.
// So it is for a broker that has its CPUs to itself (an exclusive cpuset, a dedicated machine),
// not for one whose clients or neighbours share its cores.
//
// Threading: everything here is pure except read_cpu_budget() (reads /proc and /sys) and
// pin_this_thread() (affects the calling thread).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::runtime {

struct cpu_budget {
    std::vector<int> allowed;          // CPUs of the process's affinity mask, ascending
    std::optional<double> limit_cpus;  // the cgroup CPU limit (quota / period), if any
};

// The calling process's affinity mask and the lowest CPU limit of its cgroup and the cgroups
// above it (cgroup v2 cpu.max, or v1 cpu.cfs_quota_us / cpu.cfs_period_us).
cpu_budget read_cpu_budget();

// The same limit read below `root` (a test's copy of /proc/self/cgroup at root/proc/self/cgroup
// and of the cgroup file system at root/sys/fs/cgroup); "/" reads this process's.
std::optional<double> read_cgroup_cpu_limit(const std::string& root);

// A cgroup v2 cpu.max ("max 100000", "150000 100000"): quota / period, or nullopt for no limit
// or text that is not cpu.max.
std::optional<double> parse_cpu_max(std::string_view text);

// Shards for spool.cores=0: the allowed CPUs, capped by the limit rounded up; at least 1.
size_t default_shard_count(const cpu_budget& budget);

struct shard_placement {
    std::vector<int> cpus;  // shard i runs on cpus[i]; empty: not pinned
    std::string reason;     // for the start-up log line
};

// pin: spool.cpu.pinning. Pinned when asked and there are at least as many allowed CPUs as shards.
shard_placement place_shards(size_t shards, const cpu_budget& budget, bool pin);

// Binds the calling thread to one CPU; false (errno set) when the kernel refuses.
bool pin_this_thread(int cpu);

}  // namespace spool::broker::runtime
