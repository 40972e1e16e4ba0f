#pragma once

// What the KIP-848 and KIP-932 group handlers share: calls to the group's coordinator, and the
// common part of a heartbeat's response.

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/groups/group_errors.h"

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace spool::broker::handlers::groups {

// Runs `method` of the group's coordinator with `arg`; NOT_COORDINATOR when this broker does not
// coordinate the group.
template <class Result, class Arg, class Method>
boost::asio::awaitable<Result> on_coordinator(coordinator::coordinator_service& svc,
                                              std::string group_id, Arg arg, Method method) {
    auto shared = std::make_shared<Arg>(std::move(arg));
    typename coordinator::coordinator_service::template call_fn<Result> fn =
        [shared, method](coordinator::group_coordinator* c, std::function<void(Result)> done) {
            if (!c) {
                Result r;
                r.error = coordinator::errc::not_coordinator;
                done(std::move(r));
                return;
            }
            done((c->*method)(std::move(*shared)));
        };
    co_return co_await svc.call<Result>(group_id, std::move(fn));
}

// A heartbeat: the request goes to the coordinator of its group.
template <class Result, class Request, class Method>
boost::asio::awaitable<Result> heartbeat_on_coordinator(coordinator::coordinator_service& svc,
                                                        Request req, Method method) {
    std::string group_id = req.group_id;
    co_return co_await on_coordinator<Result>(svc, std::move(group_id), std::move(req), method);
}

// The error, member id and epoch, heartbeat interval and assignment of a heartbeat's answer.
template <class Response, class Result>
void fill_heartbeat_response(Response& resp, Result& r) {
    resp.error_code = kafka_code(r.error);
    if (r.error) {
        if (!r.error_message.empty()) {
            resp.error_message = std::move(r.error_message);
        }
        return;
    }
    resp.member_id = std::move(r.member_id);
    resp.member_epoch = r.member_epoch;
    resp.heartbeat_interval_ms = r.heartbeat_interval_ms;
    if (r.assignment) {
        auto& a = resp.assignment.emplace();
        for (const auto& [topic, partitions] : *r.assignment) {
            auto& tp = a.topic_partitions.emplace_back();
            tp.topic_id = topic;
            tp.partitions.assign(partitions.begin(), partitions.end());
        }
    }
}

}  // namespace spool::broker::handlers::groups
