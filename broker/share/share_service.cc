#include "broker/share/share_service.h"

#include "broker/metadata/errc.h"
#include "broker/share/errc.h"
#include "broker/share/share_hash.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_future.hpp>

#include <algorithm>

namespace spool::broker::share {

namespace asio = boost::asio;

// What the store's listener shares with the service; shard 0 only but for `stopped`.
struct share_service::feed {
    feed(share_service* s, asio::io_context::executor_type ex) : self(s), executor(ex) {}
    share_service* self;
    asio::io_context::executor_type executor;
    std::atomic<bool> stopped{false};
    bool following = false;
    bool running = false;
    bool creating = false;  // a create_when_replicas() is at work
    metadata::cluster_snapshot applied;
    metadata::cluster_snapshot target;
    std::unique_ptr<asio::steady_timer> idle;
};

share_service_config share_service_config_from(const config::broker_config& broker) {
    share_service_config c;
    c.partitions = broker.get(config::keys::share_coordinator_state_topic_num_partitions);
    c.replication_factor = static_cast<int16_t>(
        broker.get(config::keys::share_coordinator_state_topic_replication_factor));
    c.min_isr = broker.get(config::keys::share_coordinator_state_topic_min_isr);
    c.segment_bytes = broker.get(config::keys::share_coordinator_state_topic_segment_bytes);
    c.wait_for_replicas = broker.get(config::keys::metadata_store) == "etcd";
    c.node_id = static_cast<int32_t>(broker.node_id());
    c.append_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::offsets_commit_timeout_ms).count());
    return c;
}

namespace {

// __share_group_state as this broker creates it: compacted, with exactly the configured
// replication factor in a cluster and 1 replica on the embedded store's single broker (the rule
// of __transaction_state), min.insync.replicas capped at the factor.
metadata::new_topic state_topic_request(const share_service_config& config) {
    metadata::new_topic t;
    t.name = std::string(share_state_topic);
    t.partitions = config.partitions;
    t.replication_factor = config.wait_for_replicas ? config.replication_factor : int16_t{1};
    t.configs = {{std::string(config::topic_keys::cleanup_policy.name), "compact"},
                 {std::string(config::topic_keys::segment_bytes.name),
                  std::to_string(config.segment_bytes)},
                 {std::string(config::topic_keys::min_insync_replicas.name),
                  std::to_string(std::min<int32_t>(config.min_isr, t.replication_factor))}};
    return t;
}

}  // namespace

share_service::share_service(metadata::store& store, cluster::partition_manager& partitions,
                             share_service_config config, const coordinator::clock& clk)
    : _store(store), _partitions(partitions), _config(config), _clock(clk) {
    _slots.resize(static_cast<size_t>(_config.partitions));
    _feed = std::make_shared<feed>(this, _partitions.pool().executor(0));
    std::shared_ptr<feed> f = _feed;
    _store.subscribe([f, pool = &_partitions.pool()](const metadata::cluster_snapshot&,
                                                     const metadata::cluster_snapshot& after) {
        if (f->stopped.load(std::memory_order_acquire)) {
            return;
        }
        pool->post(0, [f, after] {
            if (f->stopped.load(std::memory_order_acquire)) {
                return;
            }
            f->target = after;
            if (f->following && !f->running) {
                f->running = true;
                asio::co_spawn(f->executor, follow(f), asio::detached);
            }
        });
    });
}

share_service::~share_service() {
    _feed->stopped = true;
}

int32_t share_service::partition_for(const share_key& key) const {
    return share_partition_for(key, _config.partitions);
}

share_service::slot* share_service::slot_of(int32_t partition) const {
    return partition >= 0 && static_cast<size_t>(partition) < _slots.size()
               ? _slots[static_cast<size_t>(partition)].get()
               : nullptr;
}

void share_service::run_on_slot(slot* s, std::function<void(share_coordinator*)> work) {
    // A broker that may not lead now coordinates nothing: another may lead its partitions.
    if (!s || !s->coordinator || !_store.may_lead()) {
        work(nullptr);
        return;
    }
    _partitions.pool().post(s->shard, [s, work = std::move(work)] {
        work(s->coordinator->loaded() ? s->coordinator.get() : nullptr);
    });
}

asio::awaitable<void> share_service::follow(std::shared_ptr<feed> f) {
    while (!f->stopped.load(std::memory_order_acquire) &&
           f->target->version > f->applied->version) {
        metadata::cluster_snapshot next = f->target;
        if (auto ec = co_await f->self->reconcile(*next)) {
            log::get("share")->error("following the leadership of {} failed: {}",
                                     share_state_topic, ec.message());
        }
        f->applied = next;
    }
    f->running = false;
    if (f->idle) {
        f->idle->cancel();
    }
}

asio::awaitable<std::error_code> share_service::reconcile(const metadata::cluster_state& s) {
    std::error_code first;
    const auto* topic = s.find(share_state_topic);
    if (topic) {
        metadata::topic_metadata copy = *topic;
        first = co_await _partitions.ensure_topic(copy);
        co_await _partitions.apply_assignments(std::move(copy));
    }
    for (auto& sp : _slots) {
        slot* sl = sp.get();
        const bool ours = topic != nullptr && topic->has_partition(sl->partition) &&
                          topic->partitions[static_cast<size_t>(sl->partition)].leader ==
                              _config.node_id;
        if (ours == sl->leads) {
            continue;
        }
        model::topic_partition tp{std::string(share_state_topic),
                                  model::partition_id{sl->partition}};
        // The replay runs on the owner shard in one go: no request sees a half-loaded partition.
        auto ec = co_await runtime::run_on(
            sl->executor, [](share_service* self, slot* s, model::topic_partition tp,
                             bool load) -> asio::awaitable<std::error_code> {
                if (!load) {
                    s->coordinator->unload();
                    co_return std::error_code{};
                }
                if (self->_partitions.local(tp) == nullptr) {
                    co_return make_error_code(errc::not_coordinator);
                }
                co_return s->coordinator->load();
            }(this, sl, tp, ours));
        if (ec) {
            log::get("share")->error("loading {} failed: {}", tp.dir_name(), ec.message());
            first = first ? first : ec;
            continue;  // tried again at the next change
        }
        log::get("share")->info("{} coordinating the share groups of {}",
                                ours ? "now" : "no longer", tp.dir_name());
        sl->leads = ours;
    }
    co_return first;
}

// As txn_service::create_when_replicas: never with fewer replicas than configured in a cluster.
asio::awaitable<void> share_service::create_when_replicas(std::shared_ptr<feed> f) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    metadata::store& store = f->self->_store;
    const share_service_config config = f->self->_config;
    while (!f->stopped.load(std::memory_order_acquire) &&
           store.snapshot()->find(share_state_topic) == nullptr) {
        if (!config.wait_for_replicas ||
            store.snapshot()->eligible_broker_count() >= config.replication_factor) {
            auto create = store.create_topic(state_topic_request(config));
            auto created = co_await std::move(create);
            if (created || created.error() == metadata::errc::topic_exists) {
                log::get("share")->info("{} created", share_state_topic);
                break;
            }
            log::get("share")->warn("creating {} failed: {}; trying again", share_state_topic,
                                    created.error().message());
        }
        timer.expires_after(std::chrono::milliseconds(500));
        co_await timer.async_wait(asio::use_awaitable);
    }
    f->creating = false;
}

void share_service::ensure_topic() {
    if (!started() || _store.snapshot()->find(share_state_topic) != nullptr) {
        return;
    }
    std::shared_ptr<feed> f = _feed;
    _partitions.pool().post(0, [f] {
        if (f->creating || f->stopped.load(std::memory_order_acquire)) {
            return;
        }
        f->creating = true;
        asio::co_spawn(f->executor, create_when_replicas(f), asio::detached);
    });
}

asio::awaitable<std::error_code> share_service::start() {
    if (const auto* existing = _store.snapshot()->find(share_state_topic);
        existing && static_cast<int32_t>(existing->partitions.size()) != _config.partitions) {
        log::get("share")->error(
            "{} has {} partitions but share.coordinator.state.topic.num.partitions is {}",
            share_state_topic, existing->partitions.size(), _config.partitions);
        co_return make_error_code(errc::not_coordinator);
    }
    for (int32_t p = 0; p < _config.partitions; ++p) {
        auto s = std::make_unique<slot>();
        s->partition = p;
        model::topic_partition tp{std::string(share_state_topic), model::partition_id{p}};
        s->shard = _partitions.shard_of(tp);
        s->executor = _partitions.pool().executor(s->shard);
        coordinator::partition_group_log::commit_options commit;
        commit.timeout = std::chrono::milliseconds(_config.append_timeout_ms);
        commit.min_insync = std::min<int32_t>(
            _config.min_isr, _config.wait_for_replicas ? _config.replication_factor : 1);
        cluster::partition_manager* partitions = &_partitions;
        s->log = std::make_unique<coordinator::partition_group_log>(
            [partitions, tp] { return partitions->partition_here(tp); }, _clock, commit);
        s->coordinator = std::make_unique<share_coordinator>(p, _clock, *s->log);
        _slots[static_cast<size_t>(p)] = std::move(s);
    }
    auto snap = _store.snapshot();
    if (auto ec = co_await reconcile(*snap)) {
        co_return ec;
    }
    co_await runtime::run_on(_feed->executor, [](std::shared_ptr<feed> f,
                                                 metadata::cluster_snapshot applied)
                                                  -> asio::awaitable<void> {
        f->applied = std::move(applied);
        f->following = true;
        if (f->target && f->target->version > f->applied->version && !f->running) {
            f->running = true;
            asio::co_spawn(f->executor, follow(f), asio::detached);
        }
        co_return;
    }(_feed, snap));
    _started.store(true, std::memory_order_release);
    co_return std::error_code{};
}

asio::awaitable<void> share_service::stop() {
    co_await runtime::run_on(_feed->executor,
                             [](std::shared_ptr<feed> f) -> asio::awaitable<void> {
                                 f->stopped = true;
                                 while (f->running) {
                                     f->idle = std::make_unique<asio::steady_timer>(
                                         f->executor, asio::steady_timer::time_point::max());
                                     boost::system::error_code ec;
                                     co_await f->idle->async_wait(
                                         asio::redirect_error(asio::use_awaitable, ec));
                                 }
                                 f->idle.reset();
                             }(_feed));
    _started.store(false, std::memory_order_release);
    for (auto& s : _slots) {
        if (s) {
            co_await runtime::run_on(s->executor, [](slot* sl) -> asio::awaitable<void> {
                sl->coordinator->unload();
                co_return;
            }(s.get()));
        }
    }
}

asio::awaitable<result<share_state>> share_service::read(share_key key, int32_t leader_epoch) {
    using r_t = result<share_state>;
    call_fn<r_t> fn = [key, leader_epoch](share_coordinator* c, std::function<void(r_t)> done) {
        if (c == nullptr) {
            done(make_error_code(errc::not_coordinator));
            return;
        }
        c->read(key, leader_epoch, std::move(done));
    };
    co_return co_await call<r_t>(key, std::move(fn));
}

asio::awaitable<std::error_code> share_service::write(share_key key, share_state state) {
    call_fn<std::error_code> fn = [key, state](share_coordinator* c,
                                               std::function<void(std::error_code)> done) {
        if (c == nullptr) {
            done(make_error_code(errc::not_coordinator));
            return;
        }
        c->write(key, state, std::move(done));
    };
    co_return co_await call<std::error_code>(key, std::move(fn));
}

std::error_code share_service::start_blocking() {
    return asio::co_spawn(_partitions.pool().executor(0), start(), asio::use_future).get();
}

void share_service::stop_blocking() {
    asio::co_spawn(_partitions.pool().executor(0), stop(), asio::use_future).get();
}

}  // namespace spool::broker::share
