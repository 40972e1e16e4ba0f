#include "protocol/messages/metadata.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/topic_ops.h"
#include "broker/metadata/internal_topics.h"

#include <set>
#include <string_view>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::metadata_response;
using response_topic = response::metadata_response_topic;

response_topic describe(const services& svc, const metadata::cluster_state& s,
                        const metadata::topic_metadata& t) {
    response_topic out;
    out.name = t.name;
    out.topic_id = t.id;
    out.is_internal = metadata::is_internal_topic(t.name);
    for (const auto& p : t.partitions) {
        response_topic::metadata_response_partition rp;
        rp.partition_index = p.partition;
        rp.leader_id = p.leader;
        rp.leader_epoch = p.leader_epoch;
        rp.replica_nodes = p.replicas;
        rp.isr_nodes = p.isr;
        rp.offline_replicas = offline_replicas(svc, s, p);
        if (p.leader < 0) {
            // Kafka answers a partition without a live leader so; clients retry it.
            rp.error_code = code(error_code::leader_not_available);
        }
        out.partitions.push_back(std::move(rp));
    }
    return out;
}

response_topic missing(std::optional<std::string> name, const protocol::uuid& id, error_code e) {
    response_topic out;
    out.error_code = code(e);
    out.name = std::move(name);
    out.topic_id = id;
    return out;
}

boost::asio::awaitable<response> answer(request_ctx& ctx, protocol::metadata_request& req) {
    auto& svc = ctx.svc;
    response resp;
    auto snap = svc.store.snapshot();
    for (auto& b : live_brokers(svc, *snap, ctx.net.connection().listener)) {
        resp.brokers.push_back({b.node_id, std::move(b.host), b.port, std::move(b.rack), {}});
    }
    resp.cluster_id = snap->cluster_id;
    resp.controller_id = controller_of(svc, *snap);

    // Kafka's rules: listing all topics leaves out those the caller may not Describe; a named
    // one it may not Describe is TOPIC_AUTHORIZATION_FAILED, existing or not; auto-creating one
    // needs Create on the cluster or on the topic.
    request_authz authz(ctx, *snap);
    using security::acl_operation;
    // v0: an empty list means all topics; v1+: null means all, empty means none.
    bool all = !req.topics.has_value() || (ctx.version() == 0 && req.topics->empty());
    if (all) {
        for (const auto& [name, t] : snap->topics) {
            if (authz.topic(acl_operation::describe, name)) {
                resp.topics.push_back(describe(svc, *snap, t));
            }
        }
        co_return resp;
    }
    const bool may_create_any = !authz.enabled() || authz.cluster(acl_operation::create);
    bool may_create = svc.config.get(config::keys::auto_create_topics_enable) &&
                      (ctx.version() < 4 || req.allow_auto_topic_creation);
    if (!charge_items<response_topic>(ctx, req.topics->size(), 64)) {
        co_return resp;
    }
    // Each topic is described once however often it is named, as Kafka (a set of topics): a
    // repeated name would otherwise copy all its partitions again.
    std::set<std::string_view> seen_names;
    std::set<protocol::uuid> seen_ids;
    for (const auto& rt : *req.topics) {
        // v10+: a topic id names the topic. The Java client's KIP-848 consumer sends the ids of
        // its assigned topics with the name left at its default "" (not null); Kafka then
        // looks them up by id too.
        const bool by_id = !rt.name.has_value() || (rt.name->empty() && !rt.topic_id.is_zero());
        if (!by_id ? !seen_names.insert(*rt.name).second : !seen_ids.insert(rt.topic_id).second) {
            continue;
        }
        if (by_id) {
            const auto* t = snap->find(rt.topic_id);
            if (t != nullptr && !authz.topic(acl_operation::describe, t->name)) {
                resp.topics.push_back(
                    missing(std::nullopt, rt.topic_id, error_code::topic_authorization_failed));
                continue;
            }
            resp.topics.push_back(
                t != nullptr ? describe(svc, *snap, *t)
                             : missing(std::nullopt, rt.topic_id, error_code::unknown_topic_id));
            continue;
        }
        const std::string& name = *rt.name;
        if (!authz.topic(acl_operation::describe, name)) {
            resp.topics.push_back(missing(name, {}, error_code::topic_authorization_failed));
            continue;
        }
        if (const auto* t = snap->find(name)) {
            resp.topics.push_back(describe(svc, *snap, *t));
            continue;
        }
        if (!metadata::valid_topic_name(name)) {
            resp.topics.push_back(missing(name, {}, error_code::invalid_topic_exception));
            continue;
        }
        if (!may_create) {
            resp.topics.push_back(missing(name, {}, error_code::unknown_topic_or_partition));
            continue;
        }
        if (metadata::is_internal_topic(name)) {
            // Never auto-created as an ordinary topic (default.replication.factor, num.partitions,
            // no compaction): the group coordinator creates __consumer_offsets with its own
            // settings once offsets.topic.replication.factor brokers are registered, and Kafka
            // answers LEADER_NOT_AVAILABLE meanwhile. Nothing here creates the other internal
            // topics (no transaction or share coordinator).
            auto topic = missing(name, {},
                                 name == metadata::consumer_offsets_topic
                                     ? error_code::leader_not_available
                                     : error_code::unknown_topic_or_partition);
            topic.is_internal = true;
            resp.topics.push_back(std::move(topic));
            continue;
        }
        if (!may_create_any && !authz.topic(acl_operation::create, name)) {
            resp.topics.push_back(missing(name, {}, error_code::topic_authorization_failed));
            continue;
        }
        metadata::new_topic nt;
        nt.name = name;
        nt.partitions = svc.config.get(config::keys::num_partitions);
        nt.replication_factor =
            static_cast<int16_t>(svc.config.get(config::keys::default_replication_factor));
        auto created = co_await create_topic(svc, nt, false);
        if (created.topic || created.error == error_code::topic_already_exists) {
            // Kafka's AutoTopicCreationManager answers a topic it just asked to create (or that
            // another request is creating) with LEADER_NOT_AVAILABLE and no partitions; the
            // client retries its Metadata and finds the leaders then.
            auto topic = missing(name, {}, error_code::leader_not_available);
            topic.is_internal = metadata::is_internal_topic(name);
            resp.topics.push_back(std::move(topic));
        } else {
            resp.topics.push_back(missing(name, {}, created.error));
        }
    }
    co_return resp;
}

// Kafka's authorized-operations fields, filled only when asked for (v8+): each described
// topic's, and (v8-10) the cluster's, none without Describe on it.
boost::asio::awaitable<response> run(request_ctx& ctx, protocol::metadata_request& req) {
    auto resp = co_await answer(ctx, req);
    const bool topics = ctx.version() >= 8 && req.include_topic_authorized_operations;
    const bool cluster =
        ctx.version() >= 8 && ctx.version() <= 10 && req.include_cluster_authorized_operations;
    if (topics || cluster) {
        auto snap = ctx.svc.store.snapshot();
        request_authz authz(ctx, *snap);
        for (auto& t : resp.topics) {
            if (topics && t.error_code == 0 && t.name) {
                t.topic_authorized_operations =
                    authz.operations(security::resource_type::topic, *t.name);
            }
        }
        if (cluster) {
            resp.cluster_authorized_operations =
                authz.cluster(security::acl_operation::describe)
                    ? authz.operations(security::resource_type::cluster,
                                       security::cluster_resource_name)
                    : 0;
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_metadata(request_ctx& ctx) {
    return typed_handler<protocol::metadata_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
