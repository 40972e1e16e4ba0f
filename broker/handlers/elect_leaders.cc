// ElectLeaders (API 43, v0-2; KIP-183, KIP-460): preferred and unclean leader elections, as
// Apache Kafka 4.x answers them. Any broker accepts the request; only the controller changes
// leaders. Each partition is checked on this broker's snapshot first
// (metadata::check_election): unknown ones answer UNKNOWN_TOPIC_OR_PARTITION, ones that need no
// election ELECTION_NOT_NEEDED (with topic_partitions null, Kafka leaves those out), ones nobody
// can win PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE. The rest go to the
// controller in one request (store::elect_leaders) and are answered from the snapshot in which it
// handled them: NONE where the election shows, else the not-available error. Kafka answers a
// request its controller did not carry out within timeout_ms, and an unknown election type, with
// the error at the top level and on every partition named (REQUEST_TIMED_OUT, INVALID_REQUEST).

#include "protocol/messages/elect_leaders.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/metadata/controller/plan/controller_elections.h"

#include <chrono>
#include <string>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::elect_leaders_response;
using partition_result = response::replica_election_result::partition_result_type;
using metadata::election_outcome;
using metadata::election_type;

// Kafka's default messages of the errors (Errors.java), as KRaft's controller sends them.
std::optional<std::string> default_message(error_code e) {
    switch (e) {
        case error_code::election_not_needed:
            return "Leader election not needed for topic partition.";
        case error_code::preferred_leader_not_available:
            return "The preferred leader was not available.";
        case error_code::eligible_leaders_not_available:
            return "Eligible topic partition leaders are not available.";
        default:
            return std::nullopt;
    }
}

error_code not_available(election_type type) {
    return type == election_type::unclean ? error_code::eligible_leaders_not_available
                                          : error_code::preferred_leader_not_available;
}

partition_result result_of(int32_t partition, error_code e,
                           std::optional<std::string> message = std::nullopt) {
    partition_result r;
    r.partition_id = partition;
    r.error_code = code(e);
    r.error_message = message ? std::move(message) : default_message(e);
    return r;
}

using named_partitions = std::vector<std::pair<std::string, std::vector<int32_t>>>;

// Kafka's ElectLeadersRequest.getErrorResponse: the error at the top level and on every
// partition the request named (none when it named all).
response error_response(const named_partitions& named, error_code e, const std::string& message) {
    response resp;
    resp.error_code = code(e);
    for (const auto& [topic, partitions] : named) {
        auto& out = resp.replica_election_results.emplace_back();
        out.topic = topic;
        for (int32_t p : partitions) {
            out.partition_result.push_back(result_of(p, e, message));
        }
    }
    return resp;
}

// The topics and partitions a request names (topic_partitions null: every partition known).
named_partitions partitions_of(protocol::elect_leaders_request& req,
                               const metadata::cluster_state& state) {
    named_partitions out;
    if (!req.topic_partitions) {
        out.reserve(state.topics.size());
        for (const auto& [name, t] : state.topics) {
            auto& [topic, partitions] = out.emplace_back(name, std::vector<int32_t>{});
            partitions.reserve(t.partitions.size());
            for (const auto& p : t.partitions) {
                partitions.push_back(p.partition);
            }
        }
        return out;
    }
    out.reserve(req.topic_partitions->size());
    for (auto& t : *req.topic_partitions) {
        out.emplace_back(std::move(t.topic), std::move(t.partitions));
    }
    return out;
}

// Where one partition's answer is in the response.
struct pending {
    size_t topic_index;
    size_t result_index;
};

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::elect_leaders_request& req) {
    // v0 has no election type: it asks for the preferred leader.
    const int8_t raw_type = ctx.version() >= 1 ? req.election_type : int8_t{0};
    const bool all = !req.topic_partitions;
    auto snapshot = ctx.svc.store.snapshot();
    uint64_t count = 0;
    if (all) {
        for (const auto& [name, t] : snapshot->topics) {
            count += t.partitions.size() + 1;
        }
    } else {
        count = partitions_named(*req.topic_partitions) + req.topic_partitions->size();
    }
    if (!charge_items<partition_result>(ctx, count, sizeof(std::pair<std::string, int32_t>))) {
        co_return response{};
    }
    if (raw_type != 0 && raw_type != 1) {
        log::get("kafka")->info("ElectLeaders from {}: unknown election type {}",
                                ctx.net.connection().peer, static_cast<int>(raw_type));
        co_return error_response(all ? named_partitions{} : partitions_of(req, *snapshot),
                                 error_code::invalid_request,
                                 "Unknown election type " + std::to_string(raw_type));
    }
    // Kafka: Alter on the cluster.
    if (!request_authz(ctx, *snapshot).cluster(security::acl_operation::alter)) {
        co_return error_response(all ? named_partitions{} : partitions_of(req, *snapshot),
                                 error_code::cluster_authorization_failed, {});
    }
    const auto type = static_cast<election_type>(raw_type);
    if (!all && req.topic_partitions->empty()) {
        co_return response{};  // Kafka: nothing to do
    }
    const auto named = partitions_of(req, *snapshot);

    response resp;
    metadata::election_request to_controller;
    to_controller.type = type;
    std::vector<pending> waiting;
    resp.replica_election_results.reserve(named.size());
    for (size_t ti = 0; ti < named.size(); ++ti) {
        const auto& [topic, partitions] = named[ti];
        auto& out = resp.replica_election_results.emplace_back();
        out.topic = topic;
        for (int32_t p : partitions) {
            auto c = metadata::check_election(*snapshot, topic, p, type);
            switch (c.outcome) {
                case election_outcome::unknown_partition:
                    out.partition_result.push_back(
                        result_of(p, error_code::unknown_topic_or_partition,
                                  snapshot->find(std::string_view(topic)) == nullptr
                                      ? "No such topic as " + topic
                                      : "No such partition as " + topic + "-" + std::to_string(p)));
                    break;
                case election_outcome::not_needed:
                    if (!all) {  // Kafka leaves these out when it elects for every partition
                        out.partition_result.push_back(
                            result_of(p, error_code::election_not_needed));
                    }
                    break;
                case election_outcome::not_available:
                    out.partition_result.push_back(result_of(p, not_available(type)));
                    break;
                case election_outcome::elect:
                    waiting.push_back({ti, out.partition_result.size()});
                    out.partition_result.push_back(result_of(p, error_code::none));
                    to_controller.partitions[topic].push_back(p);
                    break;
            }
        }
    }
    if (waiting.empty()) {
        co_return resp;
    }

    auto elected_op = ctx.svc.store.elect_leaders(std::move(to_controller),
                                                  std::chrono::milliseconds(req.timeout_ms));
    auto elected = co_await std::move(elected_op);
    if (!elected) {
        // The whole request failed, as a Kafka controller that did not get to it in time.
        auto failure = from_store(elected.error());
        std::string message = elected.error() == metadata::errc::timed_out
                                  ? "The controller did not carry out the election within " +
                                        std::to_string(req.timeout_ms) + " ms"
                                  : failure.message.value_or(elected.error().message());
        log::get("kafka")->info("ElectLeaders from {}: {}", ctx.net.connection().peer, message);
        co_return error_response(all ? named_partitions{} : named, error_code::request_timed_out,
                                 message);
    }
    const auto& after = *elected.value();
    for (const auto& w : waiting) {
        auto& topic = resp.replica_election_results[w.topic_index];
        auto& r = topic.partition_result[w.result_index];
        auto c = metadata::check_election(after, topic.topic, r.partition_id, type);
        if (c.outcome != election_outcome::not_needed) {
            // The controller could not (the preferred replica left the ISR meanwhile).
            r = result_of(r.partition_id, not_available(type));
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_elect_leaders(request_ctx& ctx) {
    return typed_handler<protocol::elect_leaders_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
