#pragma once

// How much a thread doing background work may take from the threads serving requests. On a
// machine with as many cores as shards (the usual deployment, and 2 cores in CI), a cleaner or
// metadata writer at the shards' priority shares a core with a shard: the shard, woken by a
// request, waits for the other thread's time slice to end (measured: the steady producer's p99
// rose from 0.3 ms to 2.1 ms while a 1 GiB partition was cleaned).
//
//   normal      as created
//   background  nice 19 and the lowest best-effort I/O priority: runs on what the shards leave,
//               yet is never starved outright (metadata writer, checkpoints, log opens, removals)
//   idle        SCHED_IDLE and the idle I/O class: a waking shard preempts it at once; it may
//               wait for as long as the shards keep the cores busy (the log cleaner, whose work
//               is never on a request's path)
//
// Linux sets both per thread; elsewhere, or where a sandbox refuses, the thread keeps its
// priority and a warning is logged once per process.
// Threading: affects the calling thread only.

namespace spool {

enum class thread_priority { normal, background, idle };

void set_this_thread_priority(thread_priority p);

}  // namespace spool
