#pragma once

// Whether a broker that etcd has not renewed for a session timeout may go on leading: only on
// its followers' word.
//
// A broker leads while etcd renewed its session less than a session timeout ago (from the
// renewal's send; metadata::session_lease). After that the controller may already have elected
// someone else in its place, so it stops: a broker cut off from etcd alone must not go on
// answering Produce, Fetch or ListOffsets from a high watermark the new leader has passed.
// But when etcd is down for everyone, nobody can be elected, and stopping every leader would
// turn an etcd outage into a cluster outage (Kafka keeps serving while its controllers are
// down). The followers tell the two apart: a follower that etcd still serves hears of a new
// leader within moments of the old lease running out and fetches from it instead, at the new
// epoch. So once the lease has lapsed for a further session timeout plus a margin (time for
// the controller to elect and for the followers to hear of it), this broker leads again if,
// for every partition it leads, every other member of its ISR and its eligible leader replicas
// (KIP-966: the controller may elect one of those) has fetched at its leader epoch since then,
// and recently (within the follower's fetch wait plus a second). It then re-checks every
// `interval`, and its word lasts two intervals: a follower that stops fetching (it heard of a
// new leader after etcd came back for it) ends it.
//
// Followers are the only witnesses that can tell an outage for everyone from one for this
// broker alone. A partition with no other electable replica (RF=1, or an ISR shrunk to this
// broker) has none, and would vouch for itself. What else must hold is this broker's own view
// of etcd: it stopped answering while the lease still held and still does not answer a renewal
// sent after the lapse (metadata::session_lease::etcd_unreachable_across_lapse). A process
// paused past its lease (SIGSTOP) has no such view: its first renewal after resuming is
// answered "lease not found", so it never leads on a vouch, even where no follower could
// object; it leads again once it registered and the controller gave its partitions back.
//
// So during an etcd outage for everyone leaders pause between one and two session timeouts
// after their last renewal and then serve again; a broker cut off alone never does.
//
// Lifecycle: construct after the partition manager opened its logs; start(); stop() before the
// partition manager closes them (waits for the check in progress). Threading: start/stop from
// the main thread; the checks run on shard 0 and visit the other shards.

#include "broker/cluster/partition_manager.h"
#include "broker/metadata/store.h"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>

namespace spool::broker::cluster {

struct leadership_vouch_options {
    std::chrono::milliseconds interval{250};
    // Added to the session timeout after the lease lapsed before followers may vouch.
    std::chrono::milliseconds margin{1000};
    // How recent each follower's fetch must be (the follower's long-poll wait + a second).
    std::chrono::milliseconds freshness{1500};
};

class leadership_vouch {
public:
    leadership_vouch(metadata::store& store, partition_manager& partitions, int32_t self,
                     leadership_vouch_options options = {});
    ~leadership_vouch();
    leadership_vouch(const leadership_vouch&) = delete;
    leadership_vouch& operator=(const leadership_vouch&) = delete;

    void start();
    void stop();

    // One check now, as the loop does it (tests): whether the followers vouch.
    boost::asio::awaitable<bool> followers_vouch(const metadata::session_lease& lease,
                                                 std::chrono::steady_clock::time_point now);

private:
    struct state;
    static boost::asio::awaitable<void> loop(std::shared_ptr<state> st);
    static boost::asio::awaitable<bool> check(state& st, metadata::session_lease lease,
                                              std::chrono::steady_clock::time_point now);

    std::shared_ptr<state> _state;
};

}  // namespace spool::broker::cluster
