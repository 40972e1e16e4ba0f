#include "broker/handlers/share_state_access.h"

#include "broker/cluster/leader_endpoints.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/partition_call.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_partitions.h"
#include "broker/handlers/share_persist.h"
#include "common/log.h"
#include "protocol/messages/delete_share_group_state.h"
#include "protocol/messages/initialize_share_group_state.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/read_share_group_state_summary.h"

#include <boost/asio/this_coro.hpp>

#include <algorithm>
#include <functional>
#include <optional>

namespace spool::broker::handlers {

// Connects `client` to `node`'s inter-broker listener; false when that fails (then its partitions
// answer COORDINATOR_NOT_AVAILABLE, as Kafka's persister reports an unreachable share
// coordinator).
boost::asio::awaitable<bool> connect_inter_broker(const services& svc, int32_t node,
                                                  replication::leader_client& client) {
    if (svc.inter_broker == nullptr) {
        co_return false;
    }
    auto snap = svc.store.snapshot();
    auto b = snap->brokers.find(node);
    auto where = b == snap->brokers.end()
                     ? std::nullopt
                     : cluster::inter_broker_endpoint(b->second, svc.inter_broker->listener);
    if (!where) {
        co_return false;
    }
    if (auto ec = co_await client.connect(*where)) {
        log::get("groups")->debug("share state: broker {} unreachable: {}", node, ec.message());
        co_return false;
    }
    co_return true;
}

replication::leader_client_options inter_broker_client_options(const services& svc) {
    return svc.inter_broker != nullptr ? svc.inter_broker->client
                                       : replication::leader_client_options{};
}

namespace {

using protocol::error_code;

constexpr std::chrono::milliseconds call_timeout{30000};

const share_state_key& item_key(const share_state_key& k) { return k; }
const share_state_key& item_key(const share_start& s) { return s.key; }

// Where each partition's state lives: its leader in the current snapshot (-1: none).
template <class Item>
std::map<int32_t, std::vector<Item>> by_leader(const services& svc,
                                               const std::vector<Item>& items) {
    auto snap = svc.store.snapshot();
    std::map<int32_t, std::vector<Item>> out;
    for (const auto& item : items) {
        const auto& tp = item_key(item).tp;
        const auto* topic = snap->find(tp.topic);
        int32_t leader = -1;
        if (topic != nullptr && topic->has_partition(tp.partition.value())) {
            leader = topic->partitions[static_cast<size_t>(tp.partition.value())].leader;
        }
        out[leader].push_back(item);
    }
    return out;
}

// The one walk of all three operations: `here(item)` (awaited) for each partition led here,
// `there(node, items)` (awaited) once per other leader, `leaderless(item)` for the others.
template <class Item, class Here, class There, class Leaderless>
boost::asio::awaitable<void> per_leader(services& svc, const std::vector<Item>& items,
                                        Here here, There there, Leaderless leaderless) {
    auto grouped = by_leader(svc, items);
    for (const auto& [leader, part] : grouped) {
        if (leader < 0) {
            for (const auto& item : part) {
                leaderless(item);
            }
        } else if (leader == svc.node_id) {
            for (const auto& item : part) {
                co_await here(item);
            }
        } else {
            co_await there(leader, part);
        }
    }
}

// The request's topics, by id, with their partitions: the layout of all three requests.
template <class Topic, class Item, class Fill>
std::vector<Topic> topics_of(const std::vector<Item>& items, Fill fill) {
    std::vector<Topic> out;
    std::map<protocol::uuid, size_t> at;
    for (const auto& item : items) {
        const auto& key = item_key(item);
        auto [it, added] = at.emplace(key.topic_id, out.size());
        if (added) {
            out.emplace_back().topic_id = key.topic_id;
        }
        fill(out[it->second].partitions.emplace_back(), item);
    }
    return out;
}

// The answer's partitions, by (topic id, partition), looked up for each item.
template <class Results>
auto answer_for(const Results& results, const share_state_key& k)
    -> decltype(&results.front().partitions.front()) {
    for (const auto& t : results) {
        if (t.topic_id != k.topic_id) {
            continue;
        }
        for (const auto& p : t.partitions) {
            if (p.partition == k.tp.partition.value()) {
                return &p;
            }
        }
    }
    return nullptr;
}

// ---- ReadShareGroupStateSummary ----

share_partition_summary summary_from(const replication::partition::share_summary& s) {
    share_partition_summary out;
    out.start_offset = s.start_offset;
    out.leader_epoch = s.leader_epoch;
    out.lag = s.high_watermark - s.start_offset - s.delivery_complete_count;
    return out;
}

boost::asio::awaitable<void> summary_here(services& svc, const std::string& group,
                                          const share_state_key& k, share_partition_summary& out) {
    // A group not loaded here since this broker took the partition over: its persisted state.
    co_await share_ensure_state(svc, k, group, false);
    const auto limits = share_limits_of(svc, group);
    std::function<share_partition_summary(replication::partition*)> fn =
        [&](replication::partition* p) {
            share_partition_summary s;
            if (p == nullptr) {
                s.error = error_code::not_leader_or_follower;
                return s;
            }
            auto r = p->share_summary_of(group, limits);
            if (!r) {
                s.error = to_kafka_error(r.error());
            } else if (r.value()) {
                s = summary_from(*r.value());
            }
            return s;
        };
    out = co_await on_partition<share_partition_summary>(svc.partitions, k.tp, fn);
}

// A partition led here: the door's change, persisted (share_persist.h).
boost::asio::awaitable<void> reinitialize_into(services& svc, share_start s, std::string group,
                                               error_code& out) {
    out = co_await share_reinitialize(svc, s.key, std::move(group), s.start_offset);
}

boost::asio::awaitable<void> forget_into(services& svc, share_state_key k, std::string group,
                                         error_code& out) {
    out = co_await share_forget(svc, std::move(k), std::move(group));
}

boost::asio::awaitable<void> summaries_from(services& svc, int32_t node, const std::string& group,
                                            const std::vector<share_state_key>& keys,
                                            share_summaries& out) {
    for (const auto& k : keys) {
        out[k.tp].error = error_code::coordinator_not_available;
    }
    auto ex = co_await boost::asio::this_coro::executor;
    replication::leader_client client(ex, inter_broker_client_options(svc));
    if (!co_await connect_inter_broker(svc, node, client)) {
        co_return;
    }
    const int16_t version =
        client.supports(protocol::api_key::read_share_group_state_summary, 1) ? 1 : 0;
    protocol::read_share_group_state_summary_request req;
    req.group_id = group;
    using read_topic = protocol::read_share_group_state_summary_request::read_state_summary_data;
    req.topics = topics_of<read_topic>(keys, [](auto& p, const share_state_key& k) {
        p.partition = k.tp.partition.value();
        p.leader_epoch = -1;
    });
    auto resp = co_await client.call<protocol::read_share_group_state_summary_response>(
        req, version, call_timeout);
    if (!resp) {
        client.close();
        co_return;
    }
    // The latest offsets for the lag, on the same connection (Kafka's partition metadata
    // client asks ListOffsets too).
    protocol::list_offsets_request latest;
    latest.replica_id = -1;
    latest.isolation_level = 0;
    for (const auto& k : keys) {
        auto it = std::find_if(latest.topics.begin(), latest.topics.end(),
                               [&](const auto& t) { return t.name == k.tp.topic; });
        if (it == latest.topics.end()) {
            it = latest.topics.emplace(latest.topics.end());
            it->name = k.tp.topic;
        }
        auto& p = it->partitions.emplace_back();
        p.partition_index = k.tp.partition.value();
        p.timestamp = -1;
    }
    std::map<model::topic_partition, int64_t> ends;
    if (client.supports(protocol::api_key::list_offsets, 1)) {
        auto offsets = co_await client.call<protocol::list_offsets_response>(latest, 1,
                                                                              call_timeout);
        if (offsets) {
            for (const auto& t : offsets.value().body.topics) {
                for (const auto& p : t.partitions) {
                    if (p.error_code == 0 && p.offset >= 0) {
                        ends[{t.name, model::partition_id{p.partition_index}}] = p.offset;
                    }
                }
            }
        }
    }
    client.close();
    for (const auto& k : keys) {
        auto p = answer_for(resp.value().body.results, k);
        if (!p) {
            continue;
        }
        share_partition_summary s;
        s.error = static_cast<error_code>(p->error_code);
        if (p->error_code == 0) {
            s.start_offset = p->start_offset;
            s.leader_epoch = p->leader_epoch;
            auto end = ends.find(k.tp);
            // Kafka computes no lag without a start offset or a delivery complete count.
            if (p->start_offset >= 0 && p->delivery_complete_count >= 0 && end != ends.end()) {
                s.lag = end->second - p->start_offset - p->delivery_complete_count;
            }
        }
        out[k.tp] = s;
    }
}

// ---- InitializeShareGroupState / DeleteShareGroupState: an error per partition ----

template <class Request, class Response, class Item, class Fill>
boost::asio::awaitable<void> errors_from(services& svc, int32_t node, const std::string& group,
                                         const std::vector<Item>& items, Fill fill,
                                         share_errors& out) {
    for (const auto& item : items) {
        out[item_key(item).tp] = error_code::coordinator_not_available;
    }
    auto ex = co_await boost::asio::this_coro::executor;
    replication::leader_client client(ex, inter_broker_client_options(svc));
    if (!co_await connect_inter_broker(svc, node, client)) {
        co_return;
    }
    Request req;
    req.group_id = group;
    req.topics = topics_of<typename decltype(req.topics)::value_type>(items, fill);
    auto resp = co_await client.template call<Response>(req, 0, call_timeout);
    client.close();
    if (!resp) {
        co_return;
    }
    for (const auto& item : items) {
        if (auto p = answer_for(resp.value().body.results, item_key(item))) {
            out[item_key(item).tp] = static_cast<error_code>(p->error_code);
        }
    }
}

}  // namespace

std::vector<share_state_key> share_keys(const metadata::cluster_state& snap,
                                        const std::map<protocol::uuid, std::set<int32_t>>& parts) {
    std::vector<share_state_key> out;
    for (const auto& [id, indexes] : parts) {
        const auto* topic = snap.find(id);
        if (topic == nullptr) {
            continue;
        }
        for (int32_t i : indexes) {
            if (topic->has_partition(i)) {
                out.push_back({{topic->name, model::partition_id(i)}, id});
            }
        }
    }
    return out;
}

boost::asio::awaitable<share_summaries> read_share_summaries(services& svc, const std::string& group,
                                                             const std::vector<share_state_key>& keys) {
    share_summaries out;
    co_await per_leader(
        svc, keys,
        [&](const share_state_key& k) { return summary_here(svc, group, k, out[k.tp]); },
        [&](int32_t node, const std::vector<share_state_key>& part) {
            return summaries_from(svc, node, group, part, out);
        },
        [&](const share_state_key& k) { out[k.tp].error = error_code::coordinator_not_available; });
    co_return out;
}

boost::asio::awaitable<share_errors> initialize_share_state(services& svc, const std::string& group,
                                                            const std::vector<share_start>& starts) {
    share_errors out;
    co_await per_leader(
        svc, starts,
        [&](const share_start& s) { return reinitialize_into(svc, s, group, out[s.key.tp]); },
        [&](int32_t node, const std::vector<share_start>& part) {
            using request = protocol::initialize_share_group_state_request;
            return errors_from<request, protocol::initialize_share_group_state_response>(
                svc, node, group, part,
                [](auto& p, const share_start& s) {
                    p.partition = s.key.tp.partition.value();
                    p.state_epoch = 0;
                    p.start_offset = s.start_offset;
                },
                out);
        },
        [&](const share_start& s) { out[s.key.tp] = error_code::coordinator_not_available; });
    co_return out;
}

boost::asio::awaitable<share_errors> delete_share_state(services& svc, const std::string& group,
                                                        const std::vector<share_state_key>& keys) {
    share_errors out;
    co_await per_leader(
        svc, keys,
        [&](const share_state_key& k) { return forget_into(svc, k, group, out[k.tp]); },
        [&](int32_t node, const std::vector<share_state_key>& part) {
            using request = protocol::delete_share_group_state_request;
            return errors_from<request, protocol::delete_share_group_state_response>(
                svc, node, group, part,
                [](auto& p, const share_state_key& k) { p.partition = k.tp.partition.value(); },
                out);
        },
        [&](const share_state_key& k) { out[k.tp] = error_code::coordinator_not_available; });
    co_return out;
}

}  // namespace spool::broker::handlers
