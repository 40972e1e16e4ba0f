#include "protocol/messages/fetch.h"

#include "broker/cluster/fetch_wakeups.h"
#include "broker/config/broker_config.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/metrics/topic_probe.h"

#include <chrono>
#include <map>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::fetch_response;
using topic_response = response::fetchable_topic_response;
using partition_data = topic_response::partition_data;

// One partition of the fetch: what to read, and what the read found.
struct fetch_item {
    model::topic_partition tp;
    protocol::uuid topic_id;
    int64_t offset = 0;
    int32_t max_bytes = 0;
    int32_t current_leader_epoch = -1;
    int32_t replica = -1;         // a follower's replica fetch: its broker id
    bool read_committed = false;  // a consumer's isolation_level 1
    bool any_replica = false;     // KIP-392: a consumer with client metadata (v11+)
    // KIP-392: replicas in the consumer's rack this leader may send it to (same_rack_replicas).
    std::vector<int32_t> same_rack;
    bool known = true;            // topic/partition exist in metadata
    error_code unknown_error = error_code::unknown_topic_or_partition;
    // The partition's leader per metadata, told to a client this broker cannot serve (KIP-951).
    int32_t current_leader = -1;
    int32_t current_leader_epoch_hint = -1;
    // Outputs of the last read.
    error_code error = error_code::none;
    int32_t preferred_read_replica = -1;  // KIP-392: read there instead; no records then
    int64_t high_watermark = -1;
    int64_t last_stable_offset = -1;
    int64_t log_start = -1;
    std::vector<storage::aborted_txn> aborted;
    std::vector<file_slice> slices;
    uint32_t bytes = 0;
    uint64_t records = 0;
};

struct read_budget {
    int64_t left = 0;        // response bytes still allowed
    bool have_data = false;  // some partition returned data (min-one applies only before)
    int64_t total = 0;
};

boost::asio::awaitable<int> read_on_shard(cluster::partition_manager* pm,
                                          std::vector<fetch_item*> items, read_budget* budget) {
    for (auto* it : items) {
        it->slices.clear();
        it->aborted.clear();
        it->bytes = 0;
        it->records = 0;
        it->error = error_code::none;
        it->preferred_read_replica = -1;
        if (!it->known) {
            it->error = it->unknown_error;
            continue;
        }
        auto* part = pm->partition_here(it->tp);
        if (part == nullptr) {
            // Led here per metadata, but the log is not open yet (or is being removed).
            it->error = error_code::not_leader_or_follower;
            continue;
        }
        // The partition's door owns the bounds: a follower reads to our log end offset (and
        // tells us how far it got, which moves the high watermark), a consumer below the high
        // watermark; an empty answer when caught up or when the response has no room left.
        int64_t limit = std::min<int64_t>(it->max_bytes, budget->left);
        replication::partition::read_request req;
        req.offset = model::offset(it->offset);
        req.max_bytes = static_cast<uint32_t>(std::max<int64_t>(limit, 0));
        req.min_one = !budget->have_data;
        req.replica = it->replica;
        req.current_leader_epoch = it->current_leader_epoch;
        req.read_committed = it->read_committed;
        req.any_replica = it->any_replica;
        if (!it->same_rack.empty()) {
            // As Kafka: a consumer sent elsewhere gets the bounds and no records.
            if (auto there = part->preferred_read_replica(req.offset, it->same_rack)) {
                it->preferred_read_replica = *there;
                req.max_bytes = 0;
                req.min_one = false;
            }
        }
        auto r = part->read(req);
        if (!r) {
            it->error = to_kafka_error(r.error());
            continue;
        }
        it->high_watermark = r.value().high_watermark.value();
        it->last_stable_offset = r.value().last_stable_offset.value();
        it->log_start = r.value().log_start.value();
        it->aborted = std::move(r.value().aborted);
        it->slices = std::move(r.value().data.slices);
        it->bytes = r.value().data.bytes;
        it->records = r.value().data.records;
        if (it->bytes > 0) {
            budget->have_data = true;
            budget->left -= it->bytes;
            budget->total += it->bytes;
        }
    }
    co_return 0;
}

// The hops to the partitions' shards for one read, in order. Kafka spends the request's
// max_bytes in request order (the first partition with data also gets a first batch bigger than
// the limits, later ones do not), so when the partitions' own limits could together pass it, the
// hops follow the request order, consecutive partitions of one shard sharing a hop. Otherwise the
// order changes nothing but that oversized-first-batch case, and one hop per shard is enough.
std::vector<std::pair<size_t, std::vector<fetch_item*>>> plan_reads(
    cluster::partition_manager& pm, const std::vector<std::unique_ptr<fetch_item>>& items,
    int64_t max_bytes) {
    int64_t wanted = 0;
    for (const auto& it : items) {
        wanted += std::max(0, it->max_bytes);
    }
    const bool in_order = wanted > max_bytes;
    std::vector<std::pair<size_t, std::vector<fetch_item*>>> hops;
    std::map<size_t, size_t> hop_of_shard;
    for (const auto& it : items) {
        size_t shard = pm.shard_of(it->tp);
        if (in_order) {
            if (hops.empty() || hops.back().first != shard) {
                hops.emplace_back(shard, std::vector<fetch_item*>{});
            }
            hops.back().second.push_back(it.get());
            continue;
        }
        auto [at, fresh] = hop_of_shard.emplace(shard, hops.size());
        if (fresh) {
            hops.emplace_back(shard, std::vector<fetch_item*>{});
        }
        hops[at->second].second.push_back(it.get());
    }
    return hops;
}

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The session steps, each run on the session's owner shard (fetch_sessions.h).
boost::asio::awaitable<int> close_on_owner(fetch_session_shard* shard, int32_t id) {
    shard->remove(id);
    co_return 0;
}

boost::asio::awaitable<incremental_start> start_on_owner(
    fetch_session_shard* shard, int32_t id, int32_t epoch, bool uses_topic_ids,
    const std::vector<session_update>* updates, const std::vector<partition_key>* forgotten) {
    co_return start_incremental(*shard, id, epoch, uses_topic_ids, *updates, *forgotten, now_ms());
}

// Decides which partitions the incremental response carries (include[i] for items[i]) and
// remembers what it tells the client; 0 when another fetch used the session meanwhile.
boost::asio::awaitable<int> finish_on_owner(fetch_session* session, int32_t request_epoch,
                                            const std::vector<std::unique_ptr<fetch_item>>* items,
                                            std::vector<char>* include) {
    if (!session_still_expects(*session, request_epoch)) {
        co_return 0;
    }
    include->assign(items->size(), 1);
    for (size_t i = 0; i < items->size(); ++i) {
        const auto& it = *(*items)[i];
        partition_key key{it.tp.topic, it.tp.partition.value()};
        if (auto* sp = session->partitions.find(key)) {
            (*include)[i] = record_partition_response(
                *sp, it.bytes > 0, it.error != error_code::none, it.high_watermark, it.log_start);
        }
        if (it.bytes > 0) {
            session->partitions.move_to_back(key);
        }
    }
    co_return 1;
}

int32_t replica_of(const protocol::fetch_request& req, int16_t v) {
    return v >= 15 ? req.replica_state.replica_id : req.replica_id;
}

bool is_follower(const protocol::fetch_request& req, int16_t v) {
    return replica_of(req, v) >= 0;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::fetch_request& req) {
    auto& svc = ctx.svc;
    auto& sessions = svc.fetch_sessions;
    const int16_t v = ctx.version();
    const bool by_id = v >= 13;
    response resp;
    auto snap = svc.store.snapshot();
    // Replica fetches are the followers' (replication answers them); clients are served by the
    // leader, or, sending client metadata (v11+, KIP-392), by any replica.
    const bool consumer = !is_follower(req, v);
    const bool client_metadata = consumer && v >= 11;
    const bool may_lead = svc.store.may_lead();
    // KIP-392: with replica.selector.class set, a leader sends a consumer that names its rack to
    // an in-sync replica in that rack.
    const bool select_replica = client_metadata && !req.rack_id.empty() &&
                                svc.config.get(config::keys::replica_selector_class).has_value();
    leader_hints hints;

    auto topic_name = [&](const std::string& name, const protocol::uuid& id) -> std::string {
        if (!by_id) {
            return name;
        }
        const auto* t = snap->find(id);
        return t != nullptr ? t->name : std::string();
    };
    // The request's partitions, in request order (a repeated one counts once, its last entry).
    std::vector<session_update> updates;
    std::map<partition_key, size_t> update_index;
    std::map<partition_key, int32_t> leader_epochs;
    std::vector<std::pair<partition_key, protocol::uuid>> unknown_ids;
    for (const auto& t : req.topics) {
        std::string name = topic_name(t.topic, t.topic_id);
        for (const auto& p : t.partitions) {
            if (by_id && name.empty()) {
                unknown_ids.push_back({{"", p.partition}, t.topic_id});
                continue;
            }
            partition_key key{name, p.partition};
            session_update u{key, p.fetch_offset, p.partition_max_bytes};
            if (auto [at, fresh] = update_index.emplace(key, updates.size()); fresh) {
                updates.push_back(std::move(u));
            } else {
                updates[at->second] = std::move(u);
            }
            leader_epochs[key] = p.current_leader_epoch;
        }
    }

    // Resolve the session (KIP-227, fetch_sessions.h).
    std::shared_ptr<fetch_session> session;  // incremental fetches only
    bool open_session = false;
    std::vector<session_partitions::entry> wanted;
    const bool full = v < 7 || req.session_epoch == 0 || req.session_epoch == -1;
    if (full) {
        if (v >= 7 && req.session_id != 0) {
            // A client resetting its session (franz-go after a rebalance) names the old one.
            size_t owner = sessions.owner_of(req.session_id);
            co_await runtime::run_on(svc.shards.executor(owner),
                                     close_on_owner(&sessions.shard(owner), req.session_id));
        }
        open_session = v >= 7 && req.session_epoch == 0;
        for (const auto& u : updates) {
            wanted.emplace_back(u.key, session_partition{u.fetch_offset, u.max_bytes});
        }
    } else {
        std::vector<partition_key> forgotten;
        for (const auto& ft : req.forgotten_topics_data) {
            std::string name = topic_name(ft.topic, ft.topic_id);
            for (int32_t p : ft.partitions) {
                forgotten.push_back({name, p});
            }
        }
        size_t owner = sessions.owner_of(req.session_id);
        auto start = co_await runtime::run_on(
            svc.shards.executor(owner),
            start_on_owner(&sessions.shard(owner), req.session_id, req.session_epoch, by_id,
                           &updates, &forgotten));
        if (start.error != error_code::none) {
            auto& counter = start.error == error_code::fetch_session_id_not_found
                                ? sessions.counters().not_found
                                : sessions.counters().invalid_epoch;
            if (start.error != error_code::fetch_session_topic_id_error) {
                counter.fetch_add(1, std::memory_order_relaxed);
            }
            resp.error_code = code(start.error);
            co_return resp;
        }
        session = std::move(start.session);
        wanted = std::move(start.partitions);
        if (session) {
            resp.session_id = session->id;
        }
    }
    const bool incremental = session != nullptr;

    // Kafka's handleFetchRequest: a follower needs ClusterAction on the cluster, a consumer Read
    // on each topic; a denied partition is TOPIC_AUTHORIZATION_FAILED whether it exists or not.
    // Asked once per topic (the session's partitions come grouped by topic).
    request_authz authz(ctx, *snap);
    const bool follower_denied =
        !consumer && !authz.cluster(security::acl_operation::cluster_action);
    std::string_view last_topic;
    bool last_denied = false;
    auto denied = [&](std::string_view topic) {
        if (!consumer || !authz.enabled()) {
            return follower_denied;
        }
        if (last_topic.data() == nullptr || topic != last_topic) {
            last_topic = topic;
            last_denied = !authz.topic(security::acl_operation::read, topic);
        }
        return last_denied;
    };

    std::vector<std::unique_ptr<fetch_item>> items;
    for (const auto& [key, sp] : wanted) {
        auto it = std::make_unique<fetch_item>();
        it->tp = {key.topic, model::partition_id(key.partition)};
        it->offset = sp.fetch_offset;
        it->max_bytes = sp.max_bytes;
        it->replica = consumer ? -1 : replica_of(req, v);
        // Kafka's FetchIsolation: a replica reads to the log end whatever it asks.
        it->read_committed = consumer && v >= 4 && req.isolation_level == 1;
        it->any_replica = client_metadata;
        if (auto e = leader_epochs.find(key); e != leader_epochs.end()) {
            it->current_leader_epoch = e->second;
        }
        const auto* t = snap->find(key.topic);
        if (denied(key.topic)) {
            it->known = false;
            it->unknown_error = error_code::topic_authorization_failed;
            if (t != nullptr) {
                it->topic_id = t->id;
            }
        } else if (t == nullptr || !t->has_partition(key.partition)) {
            it->known = false;
        } else {
            const auto& partition = t->partitions[key.partition];
            it->topic_id = t->id;
            auto e = client_metadata ? replica_read_error(svc, may_lead, partition)
                                     : leadership_error(svc, may_lead, partition);
            if (consumer && e != error_code::none) {
                it->known = false;
                it->unknown_error = e;
                it->current_leader = partition.leader;
                it->current_leader_epoch_hint = partition.leader_epoch;
                if (partition.leader != svc.node_id) {
                    hints.add(partition.leader);
                }
            } else if (select_replica && partition.leader == svc.node_id) {
                it->same_rack = same_rack_replicas(svc, *snap, partition, req.rack_id,
                                                   ctx.net.connection().listener);
            }
        }
        items.push_back(std::move(it));
    }
    const int64_t max_bytes = v >= 3 ? std::max(0, req.max_bytes) : INT32_MAX;
    auto hops = plan_reads(svc.partitions, items, max_bytes);

    // Read, and long-poll until min_bytes arrive or max_wait passes.
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, req.max_wait_ms));
    cluster::data_waiter waiter(svc.partitions.fetch_wakeups_here(/*replica=*/!consumer));
    // A client that goes away mid-poll must not keep the wait (and its memory) for max_wait_ms.
    runtime::cancel_hook on_close(ctx.net.cancellation(), [&waiter] { waiter.interrupt(); });
    for (;;) {
        waiter.mark();
        read_budget budget{max_bytes, false, 0};
        for (auto& [shard, list] : hops) {
            co_await runtime::run_on(svc.shards.executor(shard),
                                     read_on_shard(&svc.partitions, list, &budget));
        }
        // Kafka answers at once when a partition has an error or a preferred read replica.
        bool errors = false;
        for (const auto& it : items) {
            errors = errors || it->error != error_code::none || it->preferred_read_replica >= 0;
        }
        auto now = std::chrono::steady_clock::now();
        if (budget.total >= req.min_bytes || errors || now >= deadline || items.empty() ||
            svc.partitions.stopping() || ctx.net.cancelled()) {
            break;
        }
        // Later requests on this connection may go ahead while this one waits.
        ctx.net.mark_ordered();
        co_await waiter.wait_until(deadline);
    }

    if (ctx.net.cancelled()) {
        co_return resp;  // nobody reads it
    }

    // Which partitions the answer carries: all of a full fetch's, an incremental's with news.
    std::vector<char> include(items.size(), 1);
    if (incremental) {
        size_t owner = sessions.owner_of(session->id);
        int ok = co_await runtime::run_on(
            svc.shards.executor(owner),
            finish_on_owner(session.get(), req.session_epoch, &items, &include));
        if (ok == 0) {
            sessions.counters().invalid_epoch.fetch_add(1, std::memory_order_relaxed);
            response dup;
            dup.error_code = code(error_code::invalid_fetch_session_epoch);
            co_return dup;
        }
    } else if (open_session) {
        // The answer opens the session on this connection's shard, remembering what it tells.
        session_partitions parts;
        for (const auto& it : items) {
            auto& sp = parts.upsert({it->tp.topic, it->tp.partition.value()});
            sp.fetch_offset = it->offset;
            sp.max_bytes = it->max_bytes;
            record_partition_response(sp, false, it->error != error_code::none, it->high_watermark,
                                      it->log_start);
        }
        auto opened = sessions.shard(ctx.net.connection().shard)
                          .create(now_ms(), is_follower(req, v), by_id, std::move(parts));
        resp.session_id = opened ? opened->id : 0;
    }

    // Build the response, topics in first-seen order.
    std::map<std::string, size_t> topic_index;
    for (size_t i = 0; i < items.size(); ++i) {
        auto& it = items[i];
        if (include[i] == 0) {
            continue;
        }
        auto [pos, inserted] = topic_index.emplace(it->tp.topic, resp.responses.size());
        if (inserted) {
            auto& tr = resp.responses.emplace_back();
            tr.topic = it->tp.topic;
            tr.topic_id = it->topic_id;
        }
        auto& pd = resp.responses[pos->second].partitions.emplace_back();
        pd.partition_index = it->tp.partition.value();
        pd.error_code = code(it->error);
        pd.high_watermark = it->high_watermark;
        pd.last_stable_offset = it->last_stable_offset;
        pd.log_start_offset = it->log_start;
        pd.preferred_read_replica = it->preferred_read_replica;
        // Kafka's read_committed answer: the aborted transactions of the records returned, by
        // producer and first offset (the client drops their batches until the ABORT marker).
        pd.aborted_transactions = std::vector<partition_data::aborted_transaction>{};
        pd.aborted_transactions->reserve(it->aborted.size());
        for (const auto& a : it->aborted) {
            auto& at = pd.aborted_transactions->emplace_back();
            at.producer_id = a.pid.value();
            at.first_offset = a.first_offset.value();
        }
        if (it->error == error_code::not_leader_or_follower && it->current_leader_epoch_hint >= 0) {
            pd.current_leader.leader_id = it->current_leader;
            pd.current_leader.leader_epoch = it->current_leader_epoch_hint;
        }
        for (const auto& s : it->slices) {
            pd.records.append_slice(s);
        }
        if (svc.topic_traffic != nullptr && it->bytes > 0) {
            svc.topic_traffic->cached(it->tp.topic).fetched(it->bytes, it->records);
        }
    }
    if (v >= 16) {
        resp.node_endpoints =
            hints.endpoints<response::node_endpoint>(svc, *snap, ctx.net.connection().listener);
    }
    for (const auto& [key, id] : unknown_ids) {
        auto& tr = resp.responses.emplace_back();
        tr.topic_id = id;
        auto& pd = tr.partitions.emplace_back();
        pd.partition_index = key.partition;
        pd.error_code = code(error_code::unknown_topic_id);
    }
    co_return resp;
}

}  // namespace

handler_result handle_fetch(request_ctx& ctx) {
    return typed_handler<protocol::fetch_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
