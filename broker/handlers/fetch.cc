#include "protocol/messages/fetch.h"

#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/metadata/fetch_wakeups.h"
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
    int32_t leader_epoch = 0;  // ours, from metadata
    bool known = true;         // topic/partition exist in metadata
    error_code unknown_error = error_code::unknown_topic_or_partition;
    // Outputs of the last read.
    error_code error = error_code::none;
    int64_t high_watermark = -1;
    int64_t log_start = -1;
    std::vector<file_slice> slices;
    uint32_t bytes = 0;
    uint64_t records = 0;
};

struct read_budget {
    int64_t left = 0;        // response bytes still allowed
    bool have_data = false;  // some partition returned data (min-one applies only before)
    int64_t total = 0;
};

boost::asio::awaitable<int> read_on_shard(metadata::partition_manager* pm,
                                          std::vector<fetch_item*> items, read_budget* budget) {
    for (auto* it : items) {
        it->slices.clear();
        it->bytes = 0;
        it->records = 0;
        it->error = error_code::none;
        if (!it->known) {
            it->error = it->unknown_error;
            continue;
        }
        auto* plog = pm->local(it->tp);
        if (plog == nullptr) {
            it->error = error_code::unknown_topic_or_partition;
            continue;
        }
        if (it->current_leader_epoch >= 0 && it->current_leader_epoch != it->leader_epoch) {
            it->error = it->current_leader_epoch > it->leader_epoch
                            ? error_code::unknown_leader_epoch
                            : error_code::fenced_leader_epoch;
            continue;
        }
        // Without transactions the last stable offset is the high watermark, for read_committed
        // and read_uncommitted alike.
        auto hw = plog->high_watermark();
        it->high_watermark = hw.value();
        it->log_start = plog->log_start_offset().value();
        if (it->offset == hw.value()) {
            continue;  // caught up: nothing to read (also when offset == LEO)
        }
        int64_t limit = std::min<int64_t>(it->max_bytes, budget->left);
        if (limit <= 0 && budget->have_data) {
            continue;
        }
        auto r =
            plog->read(model::offset(it->offset),
                       static_cast<uint32_t>(std::max<int64_t>(limit, 0)), hw, !budget->have_data);
        if (!r) {
            it->error = to_kafka_error(r.error());
            continue;
        }
        it->slices = std::move(r.value().slices);
        it->bytes = r.value().bytes;
        it->records = r.value().records;
        if (it->bytes > 0) {
            budget->have_data = true;
            budget->left -= it->bytes;
            budget->total += it->bytes;
        }
    }
    co_return 0;
}

// News for an incremental session: data, an error, or moved offsets.
bool has_news(const fetch_item& it, session_partition& sp) {
    bool news = it.bytes > 0 || it.error != error_code::none ||
                it.high_watermark != sp.last_high_watermark || it.log_start != sp.last_log_start;
    sp.last_high_watermark = it.high_watermark;
    sp.last_log_start = it.log_start;
    return news;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::fetch_request& req) {
    auto& svc = ctx.svc;
    const int16_t v = ctx.version();
    const bool by_id = v >= 13;
    response resp;
    auto snap = svc.store.snapshot();

    // Resolve the session (KIP-227).
    std::shared_ptr<fetch_session> session;
    bool incremental = false;
    if (v >= 7) {
        if (req.session_epoch == 0) {
            // A full fetch that opens a session; a client resetting its session (franz-go after
            // a rebalance) names the old one, which is closed first.
            if (req.session_id != 0) {
                svc.fetch_sessions.remove(req.session_id);
            }
            session = svc.fetch_sessions.create();
        } else if (req.session_id != 0 && req.session_epoch == -1) {
            svc.fetch_sessions.remove(req.session_id);
        } else if (req.session_id != 0) {
            session = svc.fetch_sessions.find(req.session_id);
            if (!session) {
                resp.error_code = code(error_code::fetch_session_id_not_found);
                co_return resp;
            }
            if (session->next_epoch != req.session_epoch) {
                resp.error_code = code(error_code::invalid_fetch_session_epoch);
                co_return resp;
            }
            incremental = true;
        } else if (req.session_epoch != -1) {
            resp.error_code = code(error_code::invalid_fetch_session_epoch);
            co_return resp;
        }
    }

    // The partitions to read: the request's, or for an incremental fetch the session's after
    // applying the request's changes and forgotten partitions.
    auto topic_name = [&](const std::string& name, const protocol::uuid& id) -> std::string {
        if (!by_id) {
            return name;
        }
        const auto* t = snap->find(id);
        return t != nullptr ? t->name : std::string();
    };
    std::map<partition_key, session_partition> wanted;
    std::vector<partition_key> order;
    std::map<std::string, protocol::uuid> ids;
    std::map<partition_key, int32_t> leader_epochs;
    if (incremental) {
        wanted = session->partitions;
        for (const auto& ft : req.forgotten_topics_data) {
            std::string name = topic_name(ft.topic, ft.topic_id);
            for (int32_t p : ft.partitions) {
                wanted.erase({name, p});
            }
        }
    }
    std::vector<std::pair<partition_key, protocol::uuid>> unknown_ids;
    for (const auto& t : req.topics) {
        std::string name = topic_name(t.topic, t.topic_id);
        if (by_id && name.empty()) {
            for (const auto& p : t.partitions) {
                unknown_ids.push_back({{"", p.partition}, t.topic_id});
            }
            continue;
        }
        ids[name] = t.topic_id;
        for (const auto& p : t.partitions) {
            auto& sp = wanted[{name, p.partition}];
            sp.fetch_offset = p.fetch_offset;
            sp.max_bytes = p.partition_max_bytes;
            leader_epochs[{name, p.partition}] = p.current_leader_epoch;
        }
    }
    if (session) {
        session->partitions = wanted;
        session->next_epoch = session->next_epoch == INT32_MAX ? 1 : session->next_epoch + 1;
        resp.session_id = session->id;
    }

    std::vector<std::unique_ptr<fetch_item>> items;
    std::map<size_t, std::vector<fetch_item*>> by_shard;
    for (const auto& [key, sp] : wanted) {
        auto it = std::make_unique<fetch_item>();
        it->tp = {key.topic, model::partition_id(key.partition)};
        it->offset = sp.fetch_offset;
        it->max_bytes = sp.max_bytes;
        if (auto e = leader_epochs.find(key); e != leader_epochs.end()) {
            it->current_leader_epoch = e->second;
        }
        const auto* t = snap->find(key.topic);
        if (t == nullptr || !t->has_partition(key.partition)) {
            it->known = false;
        } else {
            it->topic_id = t->id;
            it->leader_epoch = t->partitions[key.partition].leader_epoch;
        }
        by_shard[svc.partitions.shard_of(it->tp)].push_back(it.get());
        items.push_back(std::move(it));
    }

    // Read, and long-poll until min_bytes arrive or max_wait passes.
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, req.max_wait_ms));
    const int64_t max_bytes = v >= 3 ? std::max(0, req.max_bytes) : INT32_MAX;
    metadata::data_waiter waiter(svc.partitions.fetch_wakeups_here());
    // A client that goes away mid-poll must not keep the wait (and its memory) for max_wait_ms.
    net::cancel_hook on_close(ctx.net.cancellation(), [&waiter] { waiter.interrupt(); });
    for (;;) {
        waiter.mark();
        read_budget budget{max_bytes, false, 0};
        for (auto& [shard, list] : by_shard) {
            co_await net::run_on(svc.shards.executor(shard),
                                 read_on_shard(&svc.partitions, list, &budget));
        }
        bool errors = false;
        for (const auto& it : items) {
            errors = errors || it->error != error_code::none;
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
    // Build the response, topics in first-seen order.
    std::map<std::string, size_t> topic_index;
    for (auto& it : items) {
        partition_key key{it->tp.topic, it->tp.partition.value()};
        if (incremental && !has_news(*it, session->partitions[key])) {
            continue;
        }
        if (!incremental && session) {
            has_news(*it, session->partitions[key]);
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
        pd.last_stable_offset = it->high_watermark;
        pd.log_start_offset = it->log_start;
        pd.aborted_transactions = std::vector<partition_data::aborted_transaction>{};
        for (const auto& s : it->slices) {
            pd.records.append_slice(s);
        }
        if (svc.topic_traffic != nullptr && it->bytes > 0) {
            svc.topic_traffic->cached(it->tp.topic).fetched(it->bytes, it->records);
        }
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
