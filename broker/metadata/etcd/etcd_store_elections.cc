// The etcd store's ElectLeaders call (etcd_store.h): the broker that received the request hands
// it to the controller through P/elections/<id> (etcd_layout.h) and waits on its own snapshot
// for the controller to handle it (controller_elections.h). The request key lives under this
// broker's session lease: if the broker dies while waiting, nobody is left to answer, and the
// request goes with the lease.

#include "broker/metadata/errc.h"
#include "broker/metadata/etcd/controller_txn.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "common/log.h"
#include "protocol/wire/uuid.h"

#include <algorithm>

namespace spool::broker::metadata {

namespace asio = boost::asio;

namespace {

std::shared_ptr<spdlog::logger> logger() {
    static auto l = log::get("metadata");
    return l;
}

// The request cut into records of at most max_partitions_per_election partitions each.
std::vector<election_request> split(const election_request& request) {
    std::vector<election_request> out;
    size_t in_last = etcd_layout::max_partitions_per_election;
    for (const auto& [topic, partitions] : request.partitions) {
        for (int32_t p : partitions) {
            if (in_last == etcd_layout::max_partitions_per_election) {
                out.push_back(election_request{request.type, {}});
                in_last = 0;
            }
            out.back().partitions[topic].push_back(p);
            ++in_last;
        }
    }
    return out;
}

}  // namespace

asio::awaitable<etcd_store::committed<cluster_snapshot>> etcd_store::elect_leaders_here(
    etcd_store* self, election_request request, std::chrono::milliseconds timeout) {
    using out = committed<cluster_snapshot>;
    const auto deadline = clock::now() + std::max(timeout, std::chrono::milliseconds(0));
    const int64_t lease = self->lease_id();
    if (!self->_session || lease == 0) {
        co_return out{errc::unavailable, nullptr};  // not registered: cannot put under a lease
    }
    auto records = split(request);
    if (records.empty()) {
        co_return out{self->_published, nullptr};
    }
    std::vector<std::string> ids;
    ids.reserve(records.size());
    int64_t revision = 0;
    // At most max_txn_ops puts per txn; a txn that fails leaves the earlier ones to the
    // controller (each record is a request of its own) and the caller answers an error.
    for (size_t first = 0; first < records.size(); first += max_txn_ops) {
        etcd::txn_request t;
        const size_t end = std::min(records.size(), first + max_txn_ops);
        for (size_t i = first; i < end; ++i) {
            ids.push_back(protocol::uuid::random().to_string());
            t.success.emplace_back(etcd::put_op{self->_keys.election(ids.back()),
                                                etcd_layout::encode(records[i]), lease});
        }
        auto done_op = self->_client->txn(std::move(t));
        auto done = co_await std::move(done_op);
        if (!done) {
            co_return out{self->failed(done.error()), nullptr};
        }
        self->note_reachable();
        revision = done.value().revision;
    }
    predicate handled = [ids, revision](const cluster_state& s) {
        return s.version >= revision && std::none_of(ids.begin(), ids.end(), [&s](const auto& id) {
                   return s.elections.contains(id);
               });
    };
    auto wait = self->wait_until(std::move(handled), deadline);
    auto seen = co_await std::move(wait);
    if (seen) {
        co_return out{seen, seen};
    }
    // Withdrawn, as Kafka's controller drops an event whose deadline passed before it ran; a
    // controller that carried out part of it meanwhile has changed those leaders, as in Kafka.
    logger()->info("ElectLeaders request not handled by the controller within {} ms; withdrawn",
                   timeout.count());
    etcd::txn_request withdraw;
    for (const auto& id : ids) {
        withdraw.success.emplace_back(etcd::delete_op{self->_keys.election(id), {}});
    }
    auto gone_op = self->_client->txn(std::move(withdraw));
    auto gone = co_await std::move(gone_op);
    if (!gone) {
        logger()->warn("could not withdraw the ElectLeaders request: {} (it goes with the session)",
                       gone.error().message());
    }
    co_return out{errc::timed_out, nullptr};
}

store::op<cluster_snapshot> etcd_store::elect_leaders(election_request request,
                                                      std::chrono::milliseconds timeout) {
    auto op = finish(elect_leaders_here(this, std::move(request), timeout));
    co_return co_await std::move(op);
}

}  // namespace spool::broker::metadata
