#include "broker/coordinator/state_topic_follower.h"

#include "broker/metadata/errc.h"
#include "broker/runtime/asio.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>

namespace spool::broker::coordinator {

namespace asio = boost::asio;

// What the store's listener shares with the follower; shard 0 only but for `stopped`.
struct state_topic_follower::feed {
    feed(metadata::store& st, asio::io_context::executor_type ex, state_topic_names n,
         state_topic_config c, reconcile_fn r)
        : store(st), executor(ex), names(std::move(n)), config(c), reconcile(std::move(r)) {}
    metadata::store& store;
    asio::io_context::executor_type executor;
    const state_topic_names names;
    const state_topic_config config;
    const reconcile_fn reconcile;
    std::atomic<bool> stopped{false};
    bool following = false;
    bool running = false;
    bool creating = false;  // a create_when_replicas() is at work
    metadata::cluster_snapshot applied;
    metadata::cluster_snapshot target;
    std::unique_ptr<asio::steady_timer> idle;
};

void set_broker_keys(state_topic_config& c, const config::broker_config& broker) {
    c.wait_for_replicas = broker.get(config::keys::metadata_store) == "etcd";
    c.node_id = static_cast<int32_t>(broker.node_id());
    c.append_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::offsets_commit_timeout_ms).count());
}

namespace {

// A state topic as this broker creates it: compacted, with exactly the configured replication
// factor in a cluster and 1 replica on the embedded store's single broker (the same rule as
// __consumer_offsets, coordinator_service.cc), and min.insync.replicas capped at the factor so
// the developer broker can write its state.
metadata::new_topic state_topic_request(const std::string& name, const state_topic_config& config) {
    metadata::new_topic t;
    t.name = name;
    t.partitions = config.partitions;
    t.replication_factor = config.wait_for_replicas ? config.replication_factor : int16_t{1};
    t.configs = {
        {std::string(config::topic_keys::cleanup_policy.name), "compact"},
        {std::string(config::topic_keys::segment_bytes.name), std::to_string(config.segment_bytes)},
        {std::string(config::topic_keys::min_insync_replicas.name),
         std::to_string(std::min<int32_t>(config.min_isr, t.replication_factor))}};
    return t;
}

}  // namespace

state_topic_follower::state_topic_follower(metadata::store& store, runtime::shard_pool& pool,
                                           state_topic_names names, state_topic_config config,
                                           reconcile_fn reconcile)
    : _pool(pool),
      _feed(std::make_shared<feed>(store, pool.executor(0), std::move(names), config,
                                   std::move(reconcile))) {
    std::shared_ptr<feed> f = _feed;
    store.subscribe([f, p = &_pool](const metadata::cluster_snapshot&,
                                    const metadata::cluster_snapshot& after) {
        if (f->stopped.load(std::memory_order_acquire)) {
            return;
        }
        p->post(0, [f, after] {
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

state_topic_follower::~state_topic_follower() {
    _feed->stopped = true;
}

asio::awaitable<void> state_topic_follower::follow(std::shared_ptr<feed> f) {
    while (!f->stopped.load(std::memory_order_acquire) &&
           f->target->version > f->applied->version) {
        metadata::cluster_snapshot next = f->target;
        if (auto ec = co_await f->reconcile(*next)) {
            log::get(f->names.logger)
                ->error("following the leadership of {} failed: {}", f->names.topic, ec.message());
        }
        f->applied = next;
    }
    f->running = false;
    if (f->idle) {
        f->idle->cancel();
    }
}

asio::awaitable<void> state_topic_follower::begin_following(metadata::cluster_snapshot applied) {
    co_await runtime::run_on(
        _feed->executor,
        [](std::shared_ptr<feed> f, metadata::cluster_snapshot snap) -> asio::awaitable<void> {
            f->applied = std::move(snap);
            f->following = true;
            if (f->target && f->target->version > f->applied->version && !f->running) {
                f->running = true;
                asio::co_spawn(f->executor, follow(f), asio::detached);
            }
            co_return;
        }(_feed, std::move(applied)));
}

asio::awaitable<void> state_topic_follower::stop_following() {
    co_await runtime::run_on(_feed->executor, [](std::shared_ptr<feed> f) -> asio::awaitable<void> {
        f->stopped = true;
        while (f->running) {
            f->idle = std::make_unique<asio::steady_timer>(f->executor,
                                                           asio::steady_timer::time_point::max());
            boost::system::error_code ec;
            co_await f->idle->async_wait(asio::redirect_error(asio::use_awaitable, ec));
        }
        f->idle.reset();
    }(_feed));
}

// Creates the topic in the background: on the embedded store at once; with a cluster store, as
// coordinator_service::create_when_replicas does, never with fewer replicas than configured,
// however long the brokers take to register. A topic created meanwhile by another broker ends
// it (topic_exists); the leadership feed then loads the partitions led here.
asio::awaitable<void> state_topic_follower::create_when_replicas(std::shared_ptr<feed> f) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    metadata::store& store = f->store;
    const state_topic_config& config = f->config;
    const std::string& topic = f->names.topic;
    while (!f->stopped.load(std::memory_order_acquire) &&
           store.snapshot()->find(topic) == nullptr) {
        if (!config.wait_for_replicas ||
            store.snapshot()->eligible_broker_count() >= config.replication_factor) {
            auto create = store.create_topic(state_topic_request(topic, config));
            auto created = co_await std::move(create);
            if (created || created.error() == metadata::errc::topic_exists) {
                log::get(f->names.logger)->info("{} created", topic);
                break;
            }
            log::get(f->names.logger)
                ->warn("creating {} failed: {}; trying again", topic, created.error().message());
        }
        timer.expires_after(std::chrono::milliseconds(500));
        co_await timer.async_wait(asio::use_awaitable);
    }
    f->creating = false;
}

void state_topic_follower::ensure_topic() {
    std::shared_ptr<feed> f = _feed;
    _pool.post(0, [f] {
        if (f->creating || f->stopped.load(std::memory_order_acquire)) {
            return;
        }
        f->creating = true;
        asio::co_spawn(f->executor, create_when_replicas(f), asio::detached);
    });
}

}  // namespace spool::broker::coordinator
