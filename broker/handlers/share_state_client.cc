#include "broker/handlers/share_state_client.h"

#include "broker/handlers/share_state_errors.h"
#include "broker/handlers/services.h"
#include "broker/share/share_service.h"
#include "common/log.h"
#include "protocol/messages/read_share_group_state.h"
#include "protocol/messages/write_share_group_state.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <chrono>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;

constexpr std::chrono::milliseconds call_timeout{10000};
constexpr int max_attempts = 15;  // 50 ms doubling to 1 s: about ten seconds

bool retriable(error_code e) {
    return e == error_code::not_coordinator || e == error_code::coordinator_not_available ||
           e == error_code::coordinator_load_in_progress;
}

share::share_key coordinator_key(const std::string& group, const share_state_key& key) {
    return share::share_key{group, key.topic_id, key.tp.partition.value()};
}

// The broker leading the key's __share_group_state partition; -1 when none (the topic is then
// created in the background).
int32_t coordinator_node(services& svc, const share::share_key& key) {
    auto snap = svc.store.snapshot();
    const auto* topic = snap->find(share::share_state_topic);
    if (topic == nullptr) {
        svc.share_state->ensure_topic();
        return -1;
    }
    const int32_t p = svc.share_state->partition_for(key);
    return topic->has_partition(p) ? topic->partitions[static_cast<size_t>(p)].leader : -1;
}

template <class Batches>
std::vector<replication::share_state_batch> batches_from(const Batches& in) {
    std::vector<replication::share_state_batch> out;
    out.reserve(in.size());
    for (const auto& b : in) {
        out.push_back({b.first_offset, b.last_offset, b.delivery_state, b.delivery_count});
    }
    return out;
}

share_read_result read_result_of(const share::share_state& s) {
    share_read_result r;
    r.state_epoch = s.state_epoch;
    if (s.start_offset >= 0) {
        replication::share_persisted p;
        p.state_epoch = s.state_epoch;
        p.start_offset = s.start_offset;
        p.delivery_complete_count = s.delivery_complete_count;
        p.batches = batches_from(s.batches);
        r.state = std::move(p);
    }
    return r;
}

share::share_state state_of(const replication::share_persisted& p, int32_t leader_epoch) {
    share::share_state s;
    s.state_epoch = p.state_epoch;
    s.leader_epoch = leader_epoch;
    s.start_offset = p.start_offset;
    s.delivery_complete_count = p.delivery_complete_count;
    for (const auto& b : p.batches) {
        s.batches.push_back({b.first, b.last, b.state, b.delivery_count});
    }
    return s;
}

boost::asio::awaitable<share_read_result> read_local(services& svc, share::share_key key,
                                                    int32_t leader_epoch) {
    auto r = co_await svc.share_state->read(std::move(key), leader_epoch);
    if (!r) {
        share_read_result out;
        out.error = share_state_error(r.error());
        co_return out;
    }
    co_return read_result_of(r.value());
}

boost::asio::awaitable<error_code> write_local(services& svc, share::share_key key,
                                               share::share_state state) {
    auto ec = co_await svc.share_state->write(std::move(key), std::move(state));
    co_return share_state_error(ec);
}

boost::asio::awaitable<share_read_result> read_remote(services& svc, int32_t node,
                                                     share::share_key key, int32_t leader_epoch) {
    share_read_result out;
    out.error = error_code::coordinator_not_available;
    replication::leader_client client(co_await boost::asio::this_coro::executor,
                                      inter_broker_client_options(svc));
    if (!co_await connect_inter_broker(svc, node, client)) {
        co_return out;
    }
    protocol::read_share_group_state_request req;
    req.group_id = key.group;
    auto& t = req.topics.emplace_back();
    t.topic_id = key.topic_id;
    auto& p = t.partitions.emplace_back();
    p.partition = key.partition;
    p.leader_epoch = leader_epoch;
    auto resp = co_await client.call<protocol::read_share_group_state_response>(req, 0,
                                                                                call_timeout);
    client.close();
    if (!resp || resp.value().body.results.empty() ||
        resp.value().body.results[0].partitions.empty()) {
        co_return out;
    }
    const auto& a = resp.value().body.results[0].partitions[0];
    out.error = static_cast<error_code>(a.error_code);
    if (out.error == error_code::none) {
        out.state_epoch = a.state_epoch;
        if (a.start_offset >= 0) {
            replication::share_persisted s;
            s.state_epoch = a.state_epoch;
            s.start_offset = a.start_offset;
            s.batches = batches_from(a.state_batches);
            out.state = std::move(s);
        }
    }
    co_return out;
}

boost::asio::awaitable<error_code> write_remote(services& svc, int32_t node, share::share_key key,
                                                share::share_state state) {
    replication::leader_client client(co_await boost::asio::this_coro::executor,
                                      inter_broker_client_options(svc));
    if (!co_await connect_inter_broker(svc, node, client)) {
        co_return error_code::coordinator_not_available;
    }
    protocol::write_share_group_state_request req;
    req.group_id = key.group;
    auto& t = req.topics.emplace_back();
    t.topic_id = key.topic_id;
    auto& p = t.partitions.emplace_back();
    p.partition = key.partition;
    p.state_epoch = state.state_epoch;
    p.leader_epoch = state.leader_epoch;
    p.start_offset = state.start_offset;
    p.delivery_complete_count = state.delivery_complete_count;
    for (const auto& b : state.batches) {
        auto& o = p.state_batches.emplace_back();
        o.first_offset = b.first_offset;
        o.last_offset = b.last_offset;
        o.delivery_state = b.delivery_state;
        o.delivery_count = b.delivery_count;
    }
    const int16_t version =
        client.supports(protocol::api_key::write_share_group_state, 1) ? 1 : 0;
    auto resp = co_await client.call<protocol::write_share_group_state_response>(req, version,
                                                                                 call_timeout);
    client.close();
    if (!resp || resp.value().body.results.empty() ||
        resp.value().body.results[0].partitions.empty()) {
        co_return error_code::coordinator_not_available;
    }
    co_return static_cast<error_code>(resp.value().body.results[0].partitions[0].error_code);
}

// Runs `attempt(node)` until it answers something not retriable or the attempts run out.
template <class R, class Attempt, class ErrorOf>
boost::asio::awaitable<R> with_retries(services& svc, const share::share_key& key,
                                       Attempt attempt, ErrorOf error_of) {
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    auto backoff = std::chrono::milliseconds(50);
    R last{};
    for (int i = 0; i < max_attempts; ++i) {
        const int32_t node = coordinator_node(svc, key);
        if (node >= 0) {
            last = co_await attempt(node);
            if (!retriable(error_of(last))) {
                co_return last;
            }
        } else {
            last = R{};
            error_of(last) = error_code::coordinator_not_available;
        }
        timer.expires_after(backoff);
        co_await timer.async_wait(boost::asio::use_awaitable);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
    log::get("share")->warn("share state of {} at its coordinator: {}", key.coordinator_key(),
                            protocol::name(error_of(last)));
    co_return last;
}

}  // namespace

boost::asio::awaitable<share_read_result> read_share_state(services& svc, std::string group,
                                                           share_state_key key,
                                                           int32_t leader_epoch) {
    if (svc.share_state == nullptr) {
        co_return share_read_result{};
    }
    const auto k = coordinator_key(group, key);
    co_return co_await with_retries<share_read_result>(
        svc, k,
        [&](int32_t node) {
            return node == svc.node_id ? read_local(svc, k, leader_epoch)
                                       : read_remote(svc, node, k, leader_epoch);
        },
        [](share_read_result& r) -> error_code& { return r.error; });
}

boost::asio::awaitable<error_code> write_share_state(services& svc, std::string group,
                                                     share_state_key key, int32_t leader_epoch,
                                                     replication::share_persisted state) {
    if (svc.share_state == nullptr) {
        co_return error_code::none;
    }
    const auto k = coordinator_key(group, key);
    const auto s = state_of(state, leader_epoch);
    co_return co_await with_retries<error_code>(
        svc, k,
        [&](int32_t node) {
            return node == svc.node_id ? write_local(svc, k, s) : write_remote(svc, node, k, s);
        },
        [](error_code& e) -> error_code& { return e; });
}

}  // namespace spool::broker::handlers
