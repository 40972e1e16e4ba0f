#pragma once

// How much a thread doing background work may take from the threads serving requests. On a
// machine with as many cores as shards (the usual deployment, and 2 cores in CI), a cleaner or
// metadata writer at the shards' priority shares a core with a shard: the shard, woken by a
// request, waits for the other thread's time slice to end (measured: the steady producer's p99
// rose from 0.3 ms to 2.1 ms while a 1 GiB partition was cleaned).
//
//   normal      as created
//   background  SCHED_IDLE and the lowest best-effort I/O priority: runs on what the shards
//               leave, yet is never starved outright (SCHED_IDLE still weighs 3 against a
//               shard's 1024; metadata writer, checkpoints, log opens, removals)
//   idle        SCHED_IDLE and the idle I/O class, whose disk time may wait for as long as
//               others keep the disk busy (the log cleaner, whose work is never on a request's
//               path)
//
// Why SCHED_IDLE and not nice 19 for `background`: since EEVDF (Linux 6.6), a running task
// keeps the CPU until its slice ends (RUN_TO_PARITY), whatever its nice value, so a shard or a
// client woken by a request waited up to a slice (0.75-3 ms) behind a nice-19 thread; a waking
// normal task preempts a SCHED_IDLE one at once. Measured (issue #14 item 7, 2 cores): during
// a CreateTopics/DeleteTopics loop, the steady producer's p99 was 2.6-3.3 ms with the storage,
// metadata and checkpoint threads at nice 19 and 1.3-1.7 ms with them SCHED_IDLE (idle
// 0.4-0.6 ms); the test client's own timer woke 1.1-2.3 ms late at p99, then 0.3-0.6 ms.
//
// Linux sets both per thread; elsewhere, or where a sandbox refuses, the thread keeps its
// priority and a warning is logged once per process.
// Threading: affects the calling thread only.

namespace spool {

enum class thread_priority { normal, background, idle };

void set_this_thread_priority(thread_priority p);

}  // namespace spool
