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
// Why not SCHED_IDLE for `background` (tried in session 14): under EEVDF a running nice-19
// thread keeps its core until its slice ends, and a SCHED_IDLE one is preempted at once (during
// a CreateTopics/DeleteTopics loop the test client's own timer woke 0.46-0.48 ms late at p99
// instead of 0.72-1.28 ms), but SCHED_IDLE weighs 3 against every normal thread of the machine,
// not only the shards: with three busy loops on the two cores a broker did not finish starting
// (its log opens starved) within a test fixture's timeout, 2 runs of 2; at nice 19 it did.
//
// Linux sets both per thread; elsewhere, or where a sandbox refuses, the thread keeps its
// priority and a warning is logged once per process.
// Threading: affects the calling thread only.

namespace spool {

enum class thread_priority { normal, background, idle };

void set_this_thread_priority(thread_priority p);

}  // namespace spool
