#include "broker/metadata/etcd/etcd_store.h"

#include "broker/metadata/errc.h"
#include "common/log.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <pthread.h>

#include <future>

namespace spool::broker::metadata {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// ---- configuration ----

etcd_store_options etcd_store_options::from_config(const config::broker_config& c) {
    etcd_store_options o;
    o.client.endpoints = c.get(config::keys::etcd_endpoints);
    o.client.request_timeout = c.get(config::keys::etcd_request_timeout_ms);
    o.client.connect_timeout = c.get(config::keys::etcd_connect_timeout_ms);
    o.prefix = c.get(config::keys::etcd_prefix);
    o.change_timeout = c.get(config::keys::metadata_change_timeout_ms);
    return o;
}

broker_session_options session_options_from_config(const config::broker_config& c,
                                                   std::vector<broker_endpoint> endpoints) {
    broker_session_options o;
    o.self.node_id = static_cast<int32_t>(c.node_id());
    if (auto rack = c.get(config::keys::broker_rack)) {
        o.self.rack = std::move(*rack);
    }
    o.self.endpoints = std::move(endpoints);
    auto dirs = c.get(config::keys::log_dirs);
    if (!dirs.empty()) {
        o.log_dir = dirs.front();
    }
    o.session_timeout = c.get(config::keys::broker_session_timeout_ms);
    o.heartbeat_interval = c.get(config::keys::broker_heartbeat_interval_ms);
    return o;
}

namespace {

std::string without_trailing_slashes(std::string p) {
    while (!p.empty() && p.back() == '/') {
        p.pop_back();
    }
    return p;
}

bool connectivity_error(std::error_code e) {
    return e == etcd::errc::unavailable || e == etcd::errc::timed_out;
}

}  // namespace

// ---- lifecycle ----

// The client options with the store's tap as observer, forwarding to the one given.
static etcd::client_options tapped(etcd::client_options o, std::shared_ptr<etcd_request_tap> tap) {
    o.observer = std::move(tap);
    return o;
}

etcd_store::etcd_store(etcd_store_options options)
    : _options(std::move(options)),
      _tap(std::make_shared<etcd_request_tap>(_stats, _options.client.observer)),
      _keys{without_trailing_slashes(_options.prefix)},
      _work(asio::make_work_guard(_io)),
      _client(etcd::client::make(_io.get_executor(), tapped(_options.client, _tap))),
      _state(_keys) {}

void etcd_store::observe_requests(std::shared_ptr<etcd::client_observer> observer) {
    asio::post(_io, [tap = _tap, observer = std::move(observer)]() mutable {
        tap->set_next(std::move(observer));
    });
}

template <class T>
T etcd_store::block_on(asio::awaitable<T> work) {
    std::promise<box<T>> done;
    auto f = done.get_future();
    asio::co_spawn(_io, boxed(std::move(work)), [&done](std::exception_ptr e, box<T> out) {
        if (e) {
            done.set_exception(e);
        } else {
            done.set_value(std::move(out));
        }
    });
    return std::move(*f.get().value);
}

result<std::unique_ptr<etcd_store>> etcd_store::open(etcd_store_options options) {
    std::unique_ptr<etcd_store> st(new etcd_store(std::move(options)));
    st->_thread = std::thread([io = &st->_io] {
        pthread_setname_np(pthread_self(), "etcd-client");
        io->run();
    });
    st->_thread_started = true;
    auto loaded = st->block_on(load(st.get()));
    // The caller's string outlives only this call: nothing after open() may write through it.
    st->_options.refusal = nullptr;
    if (!loaded) {
        log::get("metadata")
            ->error("cannot load the cluster metadata from etcd ({}): {}",
                    fmt::join(st->_options.client.endpoints, ","), loaded.error().message());
        st->stop();
        return loaded.error();
    }
    asio::co_spawn(st->_io, watch_loop(st.get()), asio::detached);
    return st;
}

etcd_store::~etcd_store() {
    stop();
}

asio::awaitable<int> etcd_store::attach_here(etcd_store* self, runtime::shard_pool* pool) {
    // Here, so no publication runs while the shard copies are set up.
    self->_publisher.attach(*pool, asio::any_io_executor(self->_io.get_executor()));
    co_return 0;
}

void etcd_store::attach(runtime::shard_pool& pool) {
    block_on(attach_here(this, &pool));
}

asio::awaitable<result<void>> etcd_store::start_session_here(etcd_store* self,
                                                             broker_session_options o,
                                                             std::string* why) {
    if (self->_session) {
        co_return std::make_error_code(std::errc::operation_in_progress);
    }
    // What this binary supports, for UpdateFeatures' check of every live broker; before the
    // registration, so a live registration of this incarnation always has it (the session
    // keeps the incarnation id it is given).
    if (o.self.incarnation_id.empty()) {
        o.self.incarnation_id = protocol::uuid::random().to_string();
    }
    broker_features mine{o.self.incarnation_id, supported_by_this_binary()};
    auto advertised_op = self->_client->put(self->_keys.supported_features(o.self.node_id),
                                            etcd_layout::encode(mine));
    if (auto advertised = co_await std::move(advertised_op); !advertised) {
        co_return self->failed(advertised.error()) == errc::unavailable ? errc::unavailable
                                                                         : advertised.error();
    }
    auto session = std::make_unique<broker_session>(*self->_client, self->_io.get_executor(),
                                                    self->_keys, std::move(o));
    session->on_lease_change([self](int64_t lease) { self->lease_changed(lease); });
    session->on_request_outcome([self](std::error_code e) {
        if (e) {
            self->failed(e);
        } else {
            self->note_reachable();
        }
    });
    // Installed before it registers, so lease listeners already see may_lead() answer from it.
    self->_session = std::move(session);
    auto r = co_await self->_session->start(why);
    if (!r) {
        self->_session.reset();
        co_return self->failed(r.error()) == errc::unavailable ? errc::unavailable : r.error();
    }
    self->note_reachable();
    self->_session->run();
    co_return success();
}

result<void> etcd_store::start_session(broker_session_options options, std::string* why) {
    return block_on(start_session_here(this, std::move(options), why));
}

asio::awaitable<int> etcd_store::shutdown(etcd_store* self) {
    if (self->_session) {
        co_await self->_session->stop();
    }
    self->_stopping = true;
    self->_backoff_timer.cancel();
    if (self->_watch != nullptr) {
        self->_watch->cancel();
    }
    for (auto* w : self->_waiters) {
        w->timer.cancel();
    }
    self->_client->cancel();
    co_return 0;
}

void etcd_store::stop() {
    if (_stopped.exchange(true)) {
        return;
    }
    if (_thread_started) {
        block_on(shutdown(this));
    }
    // Whatever still runs there was cancelled above and finishes on its own; then run() returns.
    _work.reset();
    if (_thread.joinable()) {
        _thread.join();
    }
}

void etcd_store::end_session() {
    if (_stopped.load() || !_thread_started) {
        return;
    }
    block_on([](etcd_store* self) -> asio::awaitable<int> {
        if (self->_session) {
            co_await self->_session->stop();  // stop() again later finds no lease to revoke
        }
        co_return 0;
    }(this));
}

void etcd_store::spawn(asio::awaitable<void> work) {
    asio::co_spawn(_io, std::move(work), asio::detached);
}

int64_t etcd_store::lease_id() const {
    return _session ? _session->lease_id() : 0;
}

void etcd_store::on_lease_change(broker_session::lease_listener l) {
    std::lock_guard lock(_lease_listeners_mutex);
    _lease_listeners.push_back(std::move(l));
}

void etcd_store::lease_changed(int64_t lease) {
    std::vector<broker_session::lease_listener> listeners;
    {
        std::lock_guard lock(_lease_listeners_mutex);
        listeners = _lease_listeners;
    }
    for (const auto& l : listeners) {
        l(lease);
    }
}

bool etcd_store::may_lead() const {
    return _session && _session->may_lead();
}

std::optional<session_lease> etcd_store::lease() const {
    if (!_session) {
        session_lease none;
        none.standing = false;
        return none;
    }
    return _session->lease();
}

void etcd_store::vouched_until(std::chrono::steady_clock::time_point until) {
    if (_session) {
        _session->vouched_until(until);
    }
}

namespace {
asio::awaitable<void> mark_recovered_on(broker_session* session) {
    co_await session->mark_recovered();
}
}  // namespace

void etcd_store::logs_recovered() {
    if (_session) {
        spawn(mark_recovered_on(_session.get()));
    }
}

cluster_snapshot etcd_store::snapshot() const {
    return _publisher.snapshot();
}

// ---- health ----

std::error_code etcd_store::failed(std::error_code e) {
    if (e == etcd::errc::cancelled) {
        return errc::unavailable;  // stopping
    }
    if (!connectivity_error(e)) {
        // etcd answered but refused or garbled it: nothing changed, not retriable as such.
        return e.category() == etcd::error_category() ? make_error_code(errc::persist_failed) : e;
    }
    std::lock_guard lock(_health_mutex);
    if (!_unreachable_since) {
        _unreachable_since = std::chrono::system_clock::now();
        log::get("metadata")
            ->warn("etcd unreachable ({}): {}; serving the last metadata seen",
                   fmt::join(_options.client.endpoints, ","), e.message());
    }
    _unreachable_error = e.message();
    return errc::unavailable;
}

void etcd_store::note_reachable(bool from_watch) {
    {
        std::lock_guard lock(_health_mutex);
        if (!_unreachable_since) {
            return;
        }
        auto down = std::chrono::system_clock::now() - *_unreachable_since;
        log::get("metadata")
            ->info("etcd reachable again after {} ms",
                   std::chrono::duration_cast<milliseconds>(down).count());
        _unreachable_since.reset();
    }
    if (!from_watch && _watch != nullptr) {
        _restart_watch = true;
        _watch->cancel();
    }
}

std::optional<std::string> etcd_store::unready_reason() const {
    if (_session && _session->registered() && !_session->unfenced()) {
        // A new incarnation: it serves nothing until the controller has moved what it led.
        return std::string("fenced: waiting for the controller to unfence this broker");
    }
    std::lock_guard lock(_health_mutex);
    if (!_unreachable_since) {
        return std::nullopt;
    }
    auto since = std::chrono::time_point_cast<std::chrono::seconds>(*_unreachable_since);
    return fmt::format("etcd unreachable since {:%Y-%m-%dT%H:%M:%SZ}: {}", since,
                       _unreachable_error);
}

// ---- propagation ----

void etcd_store::publish_state() {
    auto before = _published;
    _published = _state.build();
    _stats->applied_revision.store(_published->version, std::memory_order_relaxed);
    _publisher.publish(_published);
    if (_session) {
        _session->observe(*_published);
    }
    if (before) {
        notify_listeners(before, _published);
    }
    for (auto* w : _waiters) {
        if (w->ready(*_published)) {
            w->timer.cancel();
        }
    }
}

asio::awaitable<result<int64_t>> etcd_store::reload() {
    auto all_op = _client->get_prefix(_keys.all());
    auto all = co_await std::move(all_op);
    if (!all) {
        co_return all.error();
    }
    _state.reset(all.value().kvs, all.value().revision);
    publish_state();
    co_return all.value().revision;
}

asio::awaitable<result<void>> etcd_store::load(etcd_store* self) {
    // The first broker of a cluster names it and finalizes its metadata.version at the highest
    // level this binary supports (features.h); the others find both there. A cluster named by
    // a broker from before metadata.version has no P/features: level 32.
    etcd::txn_request name;
    name.compares.push_back(etcd::compare::absent(self->_keys.cluster_id()));
    name.success.emplace_back(
        etcd::put_op{self->_keys.cluster_id(), protocol::uuid::random().to_string(), 0});
    name.success.emplace_back(
        etcd::put_op{self->_keys.features(), etcd_layout::encode(bootstrap_features()), 0});
    auto named_op = self->_client->txn(std::move(name));
    auto named = co_await std::move(named_op);
    if (!named) {
        co_return self->failed(named.error());
    }
    auto rev = co_await self->reload();
    if (!rev) {
        co_return self->failed(rev.error());
    }
    if (self->_published->cluster_id.empty()) {
        log::get("metadata")->error("{} does not hold a cluster id", self->_keys.cluster_id());
        co_return std::make_error_code(std::errc::bad_message);
    }
    if (auto why = unsupported_reason(self->_published->features); !why.empty()) {
        log::get("metadata")->error("refusing to start: {}", why);
        if (self->_options.refusal != nullptr) {
            *self->_options.refusal = why;
        }
        co_return errc::unsupported_feature_level;
    }
    self->_watch_from = rev.value() + 1;
    log::get("metadata")
        ->info("cluster {} loaded from etcd at revision {}: {} topics, {} brokers, "
               "metadata.version {} ({})",
               self->_published->cluster_id, rev.value(), self->_published->topics.size(),
               self->_published->brokers.size(), self->_published->features.metadata_version,
               metadata_version_name(self->_published->features.metadata_version));
    co_return success();
}

asio::awaitable<void> etcd_store::backoff() {
    boost::system::error_code ec;
    _backoff_timer.expires_after(milliseconds(250));
    co_await _backoff_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> etcd_store::watch_loop(etcd_store* self) {
    bool must_reload = false;
    while (!self->_stopping) {
        if (must_reload) {
            auto rev = co_await self->reload();
            if (!rev) {
                self->failed(rev.error());
                co_await self->backoff();
                continue;
            }
            self->_stats->reloads.fetch_add(1, std::memory_order_relaxed);
            log::get("metadata")->info("reloaded the cluster metadata at revision {}", rev.value());
            self->_watch_from = rev.value() + 1;
            must_reload = false;
        }
        auto all = self->_keys.all();
        auto opened_op = self->_client->watch(all, etcd::prefix_end(all), self->_watch_from);
        auto opened = co_await std::move(opened_op);
        if (!opened) {
            if (opened.error() == etcd::errc::compacted) {
                must_reload = true;
                continue;
            }
            self->failed(opened.error());
            co_await self->backoff();
            continue;
        }
        auto stream = std::move(opened).value();
        self->_watch = stream.get();
        self->_restart_watch = false;
        self->note_reachable(/*from_watch=*/true);
        while (!self->_stopping) {
            auto batch = co_await stream->next();
            if (!batch) {
                if (self->_restart_watch && batch.error() == etcd::errc::cancelled) {
                    break;  // restarted after an outage (note_reachable): re-watch at once
                }
                if (batch.error() == etcd::errc::compacted) {
                    log::get("metadata")
                        ->warn("etcd compacted past revision {} (now {}): reloading everything",
                               self->_watch_from, stream->compact_revision());
                    must_reload = true;
                } else if (!self->_stopping) {
                    self->failed(batch.error());
                }
                break;
            }
            self->note_reachable(/*from_watch=*/true);
            self->_stats->answered();  // the watch's answers count as etcd answering
            auto& b = batch.value();
            if (!b.events.empty()) {
                self->_stats->watch_events.fetch_add(b.events.size(), std::memory_order_relaxed);
                self->_state.apply(b.events);
                self->publish_state();
                self->_watch_from =
                    std::max(self->_watch_from, b.events.back().kv.mod_revision + 1);
            } else if (b.progress_notify) {
                self->_watch_from = std::max(self->_watch_from, b.revision + 1);
            }
        }
        self->_watch = nullptr;
        if (!must_reload && !self->_stopping && !std::exchange(self->_restart_watch, false)) {
            co_await self->backoff();
        }
    }
}

asio::awaitable<cluster_snapshot> etcd_store::wait_until(predicate ready,
                                                         clock::time_point deadline) {
    if (ready(*_published)) {
        co_return _published;
    }
    waiter w{std::move(ready), asio::steady_timer(_io, deadline)};
    auto it = _waiters.insert(_waiters.end(), &w);
    boost::system::error_code ec;
    co_await w.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    _waiters.erase(it);
    co_return w.ready(*_published) ? _published : nullptr;
}

asio::awaitable<etcd_store::committed<std::monostate>> etcd_store::visible_at(
    int64_t revision, clock::time_point deadline) {
    predicate seen_it = [revision](const cluster_state& s) { return s.version >= revision; };
    auto wait = wait_until(std::move(seen_it), deadline);
    auto seen = co_await std::move(wait);
    if (!seen) {
        co_return committed<std::monostate>{errc::timed_out, nullptr};
    }
    co_return committed<std::monostate>{std::monostate{}, seen};
}

// Turns a write that reports its revision into one that waits for that revision to be seen.
asio::awaitable<etcd_store::committed<std::monostate>> etcd_store::lift(
    asio::awaitable<result<int64_t>> write, etcd_store* self) {
    auto deadline = clock::now() + self->_options.change_timeout;
    auto rev = co_await std::move(write);
    if (!rev) {
        co_return committed<std::monostate>{rev.error(), nullptr};
    }
    if (rev.value() == 0) {  // nothing was written: nothing to wait for
        co_return committed<std::monostate>{std::monostate{}, nullptr};
    }
    co_return co_await self->visible_at(rev.value(), deadline);
}

}  // namespace spool::broker::metadata
