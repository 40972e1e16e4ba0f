#include "broker/txn/network_marker_sender.h"

#include "broker/cluster/leader_endpoints.h"
#include "broker/txn/errc.h"
#include "common/log.h"
#include "protocol/errors.h"
#include "protocol/messages/write_txn_markers.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>

#include <map>
#include <set>

namespace spool::broker::txn {

namespace asio = boost::asio;

struct network_marker_sender::job {
    marker_request request;
    std::function<bool()> still_ours;
    std::function<void(std::error_code)> done;
    const metadata::store* store = nullptr;
    replication::leader_client_options options;
    std::string listener;
    std::shared_ptr<std::atomic<bool>> stopped;
};

network_marker_sender::network_marker_sender(const metadata::store& store,
                                             runtime::shard_pool& pool,
                                             replication::leader_client_options options,
                                             std::string listener)
    : _store(store), _pool(pool), _options(std::move(options)), _listener(std::move(listener)) {}

void network_marker_sender::send(marker_request request, std::function<bool()> still_ours,
                                 std::function<void(std::error_code)> done) {
    auto j = std::make_shared<job>();
    j->request = std::move(request);
    j->still_ours = std::move(still_ours);
    j->done = std::move(done);
    j->store = &_store;
    j->options = _options;
    j->listener = _listener;
    j->stopped = _stopped;
    const auto shard = runtime::shard_pool::current_shard();
    asio::co_spawn(_pool.executor(shard.value_or(0)), run(std::move(j)), asio::detached);
}

namespace {

enum class outcome { written, retry, fenced };

outcome of(int16_t code) {
    using protocol::error_code;
    switch (static_cast<error_code>(code)) {
        case error_code::none:
            return outcome::written;
        case error_code::invalid_producer_epoch:
        case error_code::transaction_coordinator_fenced:
            return outcome::fenced;
        default:
            return outcome::retry;
    }
}

protocol::write_txn_markers_request marker_body(const marker_request& r,
                                                const std::vector<txn_partition>& parts) {
    protocol::write_txn_markers_request req;
    auto& m = req.markers.emplace_back();
    m.producer_id = r.producer_id;
    m.producer_epoch = r.producer_epoch;
    m.transaction_result = r.commit;
    m.coordinator_epoch = r.coordinator_epoch;
    std::map<std::string, std::vector<int32_t>> by_topic;
    for (const auto& p : parts) {
        by_topic[p.topic].push_back(p.partition);
    }
    for (auto& [topic, ids] : by_topic) {
        auto& t = m.topics.emplace_back();
        t.name = topic;
        t.partition_indexes = std::move(ids);
    }
    return req;
}

}  // namespace

asio::awaitable<void> network_marker_sender::run(std::shared_ptr<job> j) {
    auto ex = co_await asio::this_coro::executor;
    std::set<txn_partition> left(j->request.partitions.begin(), j->request.partitions.end());
    auto backoff = std::chrono::milliseconds(100);
    asio::steady_timer timer(ex);
    while (!left.empty()) {
        if (j->stopped->load(std::memory_order_acquire) || !j->still_ours()) {
            j->done(make_error_code(errc::not_coordinator));
            co_return;
        }
        auto snap = j->store->snapshot();
        std::map<int32_t, std::vector<txn_partition>> by_leader;
        for (auto it = left.begin(); it != left.end();) {
            const auto* topic = snap->find(it->topic);
            if (topic == nullptr || !topic->has_partition(it->partition)) {
                it = left.erase(it);  // deleted: nothing left to mark
                continue;
            }
            const int32_t leader = topic->partitions[static_cast<size_t>(it->partition)].leader;
            if (leader >= 0) {
                by_leader[leader].push_back(*it);
            }
            ++it;
        }
        for (auto& [leader, parts] : by_leader) {
            auto b = snap->brokers.find(leader);
            auto where = b == snap->brokers.end()
                             ? std::nullopt
                             : cluster::inter_broker_endpoint(b->second, j->listener);
            if (!where) {
                continue;
            }
            replication::leader_client client(ex, j->options);
            if (auto ec = co_await client.connect(*where)) {
                log::get("txn")->debug("markers of '{}': broker {} unreachable: {}",
                                       j->request.transactional_id, leader, ec.message());
                continue;
            }
            const int16_t version =
                client.supports(protocol::api_key::write_txn_markers, 1) ? 1 : 0;
            auto resp = co_await client.call<protocol::write_txn_markers_response>(
                marker_body(j->request, parts), version, std::chrono::milliseconds(30000));
            client.close();
            if (!resp) {
                log::get("txn")->debug("markers of '{}' to broker {} failed: {}",
                                       j->request.transactional_id, leader,
                                       resp.error().message());
                continue;
            }
            for (const auto& m : resp.value().body.markers) {
                for (const auto& t : m.topics) {
                    for (const auto& p : t.partitions) {
                        switch (of(p.error_code)) {
                            case outcome::written:
                                left.erase({t.name, p.partition_index});
                                break;
                            case outcome::fenced:
                                log::get("txn")->warn(
                                    "markers of '{}' refused by {}-{}: a newer producer epoch or "
                                    "coordinator owns the transaction",
                                    j->request.transactional_id, t.name, p.partition_index);
                                j->done(make_error_code(errc::producer_fenced));
                                co_return;
                            case outcome::retry:
                                break;
                        }
                    }
                }
            }
        }
        if (left.empty()) {
            break;
        }
        timer.expires_after(backoff);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
    j->done({});
}

}  // namespace spool::broker::txn
