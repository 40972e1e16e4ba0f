// ShareFetch v1 (KIP-932): a share-group member's fetch. The request's share session
// (share_sessions.h) says which partitions to fetch; its piggybacked acknowledgements are applied
// first; then each partition's door (replication::partition::share_fetch) acquires records for
// the member, and the response carries their whole batches with the acquired offset ranges
// (the client delivers only those). With nothing acquired the request waits up to MaxWaitMs,
// looking again every share_poll_interval.

#include "protocol/messages/share_fetch.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/partition_call.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_partitions.h"
#include "broker/handlers/share_persist.h"

#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <map>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::share_fetch_response;
using request = protocol::share_fetch_request;

constexpr auto share_poll_interval = std::chrono::milliseconds(50);

struct fetched {
    error_code error = error_code::none;
    error_code ack_error = error_code::none;
    bool acked = false;
    replication::partition::share_fetch_outcome data;
};

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto& svc = ctx.svc;
    const auto limits = share_limits_of(svc, req.group_id.value_or(""));
    resp.acquisition_lock_timeout_ms = static_cast<int32_t>(limits.lock_duration_ms);
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    if (auto e = share_request_error(svc, authz, req.group_id, req.member_id);
        e != error_code::none) {
        resp.error_code = code(e);
        co_return resp;
    }
    const std::string group = *req.group_id;
    const std::string member = *req.member_id;
    std::vector<share_tip> added;
    std::map<share_tip, std::vector<replication::share_ack_batch>> acks;
    for (const auto& t : req.topics) {
        for (const auto& p : t.partitions) {
            added.emplace_back(t.topic_id, p.partition_index);
            if (!p.acknowledgement_batches.empty()) {
                acks[{t.topic_id, p.partition_index}] = to_ack_batches(p.acknowledgement_batches);
            }
        }
    }
    std::vector<share_tip> forgotten;
    for (const auto& t : req.forgotten_topics_data) {
        for (int32_t p : t.partitions) {
            forgotten.emplace_back(t.topic_id, p);
        }
    }
    // Kafka: acknowledgements on a session-opening fetch are refused (INVALID_REQUEST).
    if (req.share_session_epoch == 0 && !acks.empty()) {
        resp.error_code = code(error_code::invalid_request);
        co_return resp;
    }
    auto step = svc.share_sessions->fetch(group, member, req.share_session_epoch, added,
                                          forgotten);
    if (step.error != error_code::none) {
        resp.error_code = code(step.error);
        co_return resp;
    }
    std::map<share_tip, fetched> out;
    for (auto& [tip, batches] : acks) {
        auto target = resolve_share_target(*snap, tip);
        auto& f = out[tip];
        f.acked = true;
        f.ack_error = co_await share_acknowledge_on(svc, target, group, member, std::move(batches));
    }
    if (!step.released.empty()) {
        co_await share_release_on(svc, *snap, step.released, group, member);
    }
    if (!step.closed) {
        std::vector<share_target> targets;
        for (const auto& tip : step.partitions) {
            auto target = resolve_share_target(*snap, tip);
            if (target.known && !authz.topic(security::acl_operation::read, target.tp.topic)) {
                out[tip].error = error_code::topic_authorization_failed;
                continue;
            }
            if (target.known) {
                // A group's first fetch of a partition here restores its persisted state.
                share_state_key key{target.tp, tip.first};
                auto e = co_await share_ensure_state(svc, std::move(key), group, true);
                if (e != error_code::none) {
                    out[tip].error = e;
                    continue;
                }
            }
            targets.push_back(std::move(target));
        }
        const auto deadline = std::chrono::steady_clock::now() +
                              std::chrono::milliseconds(std::max(req.max_wait_ms, 0));
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
        for (;;) {
            bool any = false;
            int32_t records_left = req.max_records > 0 ? req.max_records : 500;
            int64_t bytes_left = req.max_bytes > 0 ? req.max_bytes : INT32_MAX;
            for (const auto& target : targets) {
                auto& f = out[target.tip];
                if (!target.known) {
                    f.error = error_code::unknown_topic_id;
                    any = true;
                    continue;
                }
                if (records_left <= 0 || bytes_left <= 0) {
                    continue;
                }
                replication::partition::share_fetch_request fr;
                fr.group = group;
                fr.member = member;
                fr.max_records = records_left;
                fr.max_bytes = static_cast<uint32_t>(bytes_left);
                fr.limits = limits;
                std::function<fetched(replication::partition*)> fn =
                    [&fr](replication::partition* p) {
                        fetched r;
                        if (p == nullptr) {
                            r.error = error_code::not_leader_or_follower;
                            return r;
                        }
                        auto got = p->share_fetch(fr);
                        if (!got) {
                            r.error = to_kafka_error(got.error());
                        } else {
                            r.data = std::move(got).value();
                        }
                        return r;
                    };
                auto r = co_await on_partition<fetched>(svc.partitions, target.tp, fn);
                f.error = r.error;
                f.data = std::move(r.data);
                if (f.error != error_code::none || !f.data.acquired.empty()) {
                    any = true;
                }
                for (const auto& a : f.data.acquired) {
                    records_left -= static_cast<int32_t>(a.last - a.first + 1);
                }
                bytes_left -= f.data.bytes;
            }
            const auto now = std::chrono::steady_clock::now();
            if (any || now >= deadline) {
                break;
            }
            timer.expires_after(std::min<std::chrono::steady_clock::duration>(
                share_poll_interval, deadline - now));
            boost::system::error_code ec;
            co_await timer.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
        }
        // What the fetch changed that is persisted (released expired locks, a moved start
        // offset; acquisitions are not), written before the answer.
        for (const auto& target : targets) {
            if (target.known && out[target.tip].error == error_code::none) {
                share_state_key key{target.tp, target.tip.first};
                co_await share_persist(svc, std::move(key), group);
            }
        }
    }
    // One entry per partition with news: acquired records, an error or an acknowledgement result.
    std::map<protocol::uuid, size_t> topic_index;
    for (auto& [tip, f] : out) {
        if (!f.acked && f.error == error_code::none && f.data.acquired.empty()) {
            continue;
        }
        auto ti = topic_index.find(tip.first);
        if (ti == topic_index.end()) {
            ti = topic_index.emplace(tip.first, resp.responses.size()).first;
            resp.responses.emplace_back().topic_id = tip.first;
        }
        auto& pd = resp.responses[ti->second].partitions.emplace_back();
        pd.partition_index = tip.second;
        pd.error_code = code(f.error);
        pd.acknowledge_error_code = code(f.ack_error);
        auto target = resolve_share_target(*snap, tip);
        pd.current_leader.leader_id = target.leader;
        pd.current_leader.leader_epoch = target.leader_epoch;
        for (const auto& s : f.data.slices) {
            pd.records.append_slice(s);
        }
        for (const auto& a : f.data.acquired) {
            auto& ar = pd.acquired_records.emplace_back();
            ar.first_offset = a.first;
            ar.last_offset = a.last;
            ar.delivery_count = a.delivery_count;
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_share_fetch(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
