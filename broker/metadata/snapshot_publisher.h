#pragma once

// How a store hands its immutable cluster_state snapshots to readers on every shard without a
// lock on the hot path. Each shard of the attached pool reads its own copy (snapshot() on a
// shard touches only that shard's cache line); other threads (HTTP, main, the store's own) read
// `latest` under a mutex held only to copy a pointer.
//
// Publication is two steps, so a mutation can answer "every shard sees it":
//   publish(s)      from the store's thread: s becomes latest and is posted to every shard;
//   wait_visible(s) from the mutating coroutine: visits every shard in turn (after the posts, or
//                   installing s itself if the post has not run yet) and returns once each
//                   shard's copy is s or newer.
// A shard never goes back to an older version: installs compare versions, so posts may arrive
// in any order. Posts go through the shards' mailboxes (runtime/shard_mailbox.h), a queue apart
// from asio's: a shard's snapshot() that finds its copy older than the latest version takes the
// latest state at once, so a read never misses a state published before it.
//
// Lifecycle: construct with the first state; attach() before pool.start(); publish() any time.
// Destroyed after the pool has stopped (posted installs reference the publisher).
// Threading: publish() from one thread at a time (the store's writer); everything else from any
// thread.

#include "broker/metadata/cluster_state.h"
#include "broker/runtime/shard_pool.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

namespace spool::broker::metadata {

class snapshot_publisher {
public:
    explicit snapshot_publisher(cluster_snapshot initial) : _latest(std::move(initial)) {}
    snapshot_publisher(const snapshot_publisher&) = delete;
    snapshot_publisher& operator=(const snapshot_publisher&) = delete;

    // Every shard starts from the latest state; later publications reach each shard's copy.
    // With release_on, a shard hands the copy it replaces to that executor to be dropped there:
    // freeing a big state (about 9 ms at 100,000 partitions) then stalls the store's thread,
    // not a shard serving requests.
    void attach(runtime::shard_pool& pool,
                std::optional<boost::asio::any_io_executor> release_on = std::nullopt);

    // The calling shard's copy on a shard of the attached pool, else latest.
    cluster_snapshot snapshot() const;
    cluster_snapshot latest() const;

    // Makes s the latest and posts it to every shard. Without a pool, only the latest.
    void publish(cluster_snapshot s);
    // Returns once every shard's snapshot() shows s (or a newer state). From any coroutine.
    boost::asio::awaitable<void> wait_visible(cluster_snapshot s);

private:
    // On `shard` only: installs s unless that shard already has a newer copy.
    void install(size_t shard, const cluster_snapshot& s);
    static boost::asio::awaitable<int> install_on_shard(snapshot_publisher* self, size_t shard,
                                                        cluster_snapshot s);

    mutable std::mutex _latest_mutex;
    cluster_snapshot _latest;  // under _latest_mutex
    // The version of _latest, set after it: a shard whose copy is older than this (its install
    // still queued in its mailbox) takes latest() itself, so a state published before a shard's
    // read is what that read sees, whichever queue the reader's own work came through. Read on
    // every snapshot(), written once per publication: its cache line stays shared.
    alignas(64) std::atomic<int64_t> _latest_version{-1};
    runtime::shard_pool* _pool = nullptr;
    std::optional<boost::asio::any_io_executor> _release_on;
    struct alignas(64) shard_copy {
        cluster_snapshot state;  // read and written by its shard only
    };
    std::unique_ptr<shard_copy[]> _shard_copies;
};

}  // namespace spool::broker::metadata
