#include "protocol/messages/create_topics.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/partition_limits.h"
#include "broker/handlers/topic_ops.h"

#include <fmt/format.h>

#include <set>
#include <string>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::create_topics_response;
using topic_result = response::creatable_topic_result;

// Names that appear more than once in the request. Kafka's ControllerApis creates none of
// their entries and answers one INVALID_REQUEST "Duplicate topic name." for each such name.
std::set<std::string> duplicate_names(const protocol::create_topics_request& req) {
    std::set<std::string> seen;
    std::set<std::string> duplicates;
    for (const auto& t : req.topics) {
        if (!seen.insert(t.name).second) {
            duplicates.insert(t.name);
        }
    }
    return duplicates;
}

// Why a manual assignment is refused (Kafka's ReplicationControlManager messages), or empty:
// partition indexes 0..n-1, each a non-empty list of distinct registered brokers, all of one
// length.
template <class Assignments>
std::string check_manual_assignment(const metadata::cluster_state& state,
                                    const Assignments& assignments) {
    if (assignments.size() > metadata::max_manual_assignment_partitions) {
        return fmt::format("A manual partition assignment may name at most {} partitions",
                           metadata::max_manual_assignment_partitions);
    }
    for (size_t i = 0; i < assignments.size(); ++i) {
        const auto& a = assignments[i];
        if (a.partition_index != static_cast<int32_t>(i)) {
            return fmt::format(
                "The manual partition assignment specifies partition {}, but partitions should "
                "be a consecutive 0-based integer sequence",
                a.partition_index);
        }
        if (a.broker_ids.empty()) {
            return "The manual partition assignment includes an empty replica list.";
        }
        if (a.broker_ids.size() != assignments.front().broker_ids.size()) {
            return "All partitions in the manual partition assignment must have the same number "
                   "of replicas.";
        }
        std::set<int32_t> seen;
        for (int32_t id : a.broker_ids) {
            if (!seen.insert(id).second) {
                return fmt::format(
                    "The manual partition assignment includes the broker {} more than once.", id);
            }
            if (!state.is_live(id)) {
                return fmt::format(
                    "The manual partition assignment includes broker {}, but no such broker is "
                    "registered.",
                    id);
            }
        }
    }
    return {};
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::create_topics_request& req) {
    auto& svc = ctx.svc;
    response resp;
    // Kafka refuses the whole request, before looking at any topic, when it would create more
    // partitions than one request may (counting what each topic asks for, as Kafka does).
    int64_t requested = 0;
    auto default_partitions = svc.config.get(config::keys::num_partitions);
    for (const auto& t : req.topics) {
        if (!t.assignments.empty()) {
            requested += static_cast<int64_t>(t.assignments.size());
        } else if (t.num_partitions == -1) {
            requested += default_partitions;
        } else if (t.num_partitions > 0) {
            requested += t.num_partitions;
        }
    }
    if (auto refused =
            check_request_partitions(requested, configured_partition_limits(svc.config))) {
        for (const auto& t : req.topics) {
            auto& r = resp.topics.emplace_back();
            r.name = t.name;
            r.error_code = code(refused->error);
            r.error_message = refused->message;
        }
        co_return resp;
    }
    std::set<std::string> duplicates = duplicate_names(req);
    std::set<std::string> answered;
    // Kafka: Create on the cluster, or else on each topic.
    auto snap = svc.store.snapshot();
    request_authz authz(ctx, *snap);
    const bool create_any = authz.cluster(security::acl_operation::create);
    for (const auto& t : req.topics) {
        if (duplicates.contains(t.name)) {
            if (answered.insert(t.name).second) {
                auto& r = resp.topics.emplace_back();
                r.name = t.name;
                r.error_code = code(error_code::invalid_request);
                r.error_message = "Duplicate topic name.";
            }
            continue;
        }
        auto& r = resp.topics.emplace_back();
        r.name = t.name;
        if (!create_any && !authz.topic(security::acl_operation::create, t.name)) {
            r.error_code = code(error_code::topic_authorization_failed);
            r.error_message = "Authorization failed.";
            continue;
        }
        metadata::new_topic nt;
        nt.name = t.name;
        if (!t.assignments.empty()) {
            // Manual assignment: partitions from the assignment, checked as Kafka does.
            nt.partitions = static_cast<int32_t>(t.assignments.size());
            nt.replication_factor = static_cast<int16_t>(t.assignments.front().broker_ids.size());
            if (t.num_partitions != -1 || t.replication_factor != -1) {
                r.error_code = code(error_code::invalid_request);
                r.error_message =
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.";
                continue;
            }
            auto refused = check_manual_assignment(*svc.store.snapshot(), t.assignments);
            if (!refused.empty()) {
                r.error_code = code(error_code::invalid_replica_assignment);
                r.error_message = std::move(refused);
                continue;
            }
            for (const auto& a : t.assignments) {
                nt.assignments.push_back(a.broker_ids);
            }
        } else {
            nt.partitions = t.num_partitions == -1 ? svc.config.get(config::keys::num_partitions)
                                                   : t.num_partitions;
            nt.replication_factor =
                t.replication_factor == -1
                    ? static_cast<int16_t>(svc.config.get(config::keys::default_replication_factor))
                    : t.replication_factor;
        }
        bool bad_config = false;
        for (const auto& c : t.configs) {
            if (!c.value) {
                continue;  // null means "use the default"
            }
            if (nt.configs.contains(c.name)) {
                r.error_code = code(error_code::invalid_config);
                r.error_message = "Duplicate config key " + c.name;
                bad_config = true;
                break;
            }
            nt.configs.emplace(c.name, *c.value);
        }
        if (bad_config) {
            continue;
        }
        auto out = co_await create_topic(svc, nt, req.validate_only);
        r.error_code = code(out.error);
        r.error_message = out.message;
        if (out.error != error_code::none) {
            continue;
        }
        r.num_partitions = nt.partitions;
        r.replication_factor = nt.replication_factor;
        if (out.topic) {
            r.topic_id = out.topic->id;
        }
        if (ctx.version() >= 5 &&
            !authz.topic(security::acl_operation::describe_configs, t.name)) {
            // Kafka: the configs only for a caller that may describe them.
            r.topic_config_error_code = code(error_code::topic_authorization_failed);
        } else if (ctx.version() >= 5) {
            // v5+: the topic's resulting configs, as DescribeConfigs would show them.
            std::vector<topic_result::creatable_topic_configs> configs;
            for (const auto& p : config::topic_properties()) {
                auto d = config::describe_topic_key(svc.config, p, nt.configs, false);
                topic_result::creatable_topic_configs c;
                c.name = std::string(p.name);
                c.value = d.value;
                c.config_source = static_cast<int8_t>(d.source);
                configs.push_back(std::move(c));
            }
            r.configs = std::move(configs);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_create_topics(request_ctx& ctx) {
    return typed_handler<protocol::create_topics_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
