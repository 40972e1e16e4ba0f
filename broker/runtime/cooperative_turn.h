#pragma once

// A shard thread's turn on its core: after running handlers for `turn` without waiting for work,
// a shard yields its core (sched_yield) to whatever else is runnable there, then goes on.
//
// Why: unpinned (spool.cpu.pinning=false, the default; cpu_placement.h), the kernel sometimes
// stacks both shards on one core for tens of milliseconds while the other core runs a client.
// Two busy shards on one core then take turns at the scheduler tick, 4 ms at HZ=250, and a
// PREEMPT_NONE kernel preempts nothing sooner. A request that hops between shards (a Produce
// whose connection and partition live on different shards) waits a tick for each hop, and a
// connection's requests are answered in order, so a steady producer's requests queue behind
// each other: with both shards held on one CPU (taskset) during an InitProducerId flood, its
// p99 was 1.4 s. An unpinned CI run failed tests/latency's flood bound at 4.35x that way, with
// one 2 s block at 32 ms. Yielding every `turn` makes the shards alternate at that granularity
// instead of the tick's.
//
// sched_yield with nothing else runnable on the core returns at once (one system call per
// turn); with EEVDF (Linux 6.6+) it moves the yielding thread's deadline back by one slice, so
// an eligible waiting thread runs next.
//
// Threading: the state is the calling thread's (thread_local); only threads that called
// enable() ever yield, so code shared with background threads (shard_mailbox) may call
// after_work() unconditionally.

#include <chrono>

namespace spool::broker::runtime::cooperative_turn {

// The calling thread yields after `turn` of running without a wait (zero: never).
void enable(std::chrono::microseconds turn);

// The calling thread has just woken for work: its turn starts now.
void start();

// The calling thread finished one piece of work: yields and starts a new turn if its turn is up.
// Cheap when it is not (one clock read); a no-op on threads that did not enable().
void after_work();

// Yields taken by the calling thread so far (tests).
unsigned long yields();

}  // namespace spool::broker::runtime::cooperative_turn
