#include "broker/metadata/etcd/broker_session.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "common/log.h"
#include "protocol/wire/uuid.h"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

namespace spool::broker::metadata {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view dir_id_file = "spool-dir-id";

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::string trimmed(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

}  // namespace

result<std::string> load_log_dir_id(const fs::path& log_dir) {
    auto path = log_dir / dir_id_file;
    auto existing = storage::read_file(path);
    if (existing) {
        const auto& bytes = existing.value();
        auto text =
            trimmed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        auto id = protocol::uuid::parse(text);
        if (!id || id->to_string() != text) {
            log::get("metadata")
                ->error(
                    "{} does not hold a directory id; remove it only if this directory "
                    "belongs to no other broker",
                    path.string());
            return std::make_error_code(std::errc::bad_message);
        }
        return text;
    }
    if (existing.error() != storage::errc::not_found) {
        return existing.error();
    }
    std::error_code ec;
    fs::create_directories(log_dir, ec);
    if (ec) {
        return ec;
    }
    auto id = protocol::uuid::random().to_string();
    SPOOL_TRY(storage::write_file_atomic(storage::file_ops::posix(), path, id + "\n"));
    log::get("metadata")->info("created directory id {} in {}", id, path.string());
    return id;
}

broker_session::broker_session(etcd::client& client, asio::any_io_executor ex,
                               etcd_layout::keys keys, broker_session_options options)
    : _client(client),
      _ex(std::move(ex)),
      _keys(std::move(keys)),
      _options(std::move(options)),
      _self(_options.self),
      _timer(_ex) {
    if (_self.incarnation_id.empty()) {
        _self.incarnation_id = protocol::uuid::random().to_string();
    }
    if (_options.start_fenced) {
        _self.fenced = true;
        _self.recovered = false;
        _self.unclean_shutdown = _options.unclean_shutdown;
        _unfenced.store(false, std::memory_order_release);
    }
}

bool broker_session::may_lead() const {
    if (!registered() || !unfenced()) {
        return false;
    }
    const int64_t now = now_ns();
    if (now - _last_renewed.load(std::memory_order_acquire) <
        std::chrono::nanoseconds(_options.session_timeout).count()) {
        return true;
    }
    return now < _followers_vouch_until.load(std::memory_order_acquire);
}

session_lease broker_session::lease() const {
    session_lease l;
    l.standing = registered() && unfenced();
    l.renewed_at = std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(_last_renewed.load(std::memory_order_acquire)));
    l.timeout = _options.session_timeout;
    const auto at = [](int64_t ns) {
        return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
    };
    int64_t since = _unanswered_since.load(std::memory_order_acquire);
    int64_t last = since == 0 ? 0 : _last_unanswered.load(std::memory_order_acquire);
    const int64_t in_flight = _in_flight_sent.load(std::memory_order_acquire);
    if (in_flight != 0 && now_ns() - in_flight >=
                              std::chrono::nanoseconds(_options.heartbeat_interval).count()) {
        since = since == 0 ? in_flight : since;
        last = std::max(last, in_flight);
    }
    if (since != 0) {
        l.unanswered_since = at(since);
        l.last_unanswered = at(last);
    }
    return l;
}

void broker_session::vouched_until(std::chrono::steady_clock::time_point until) {
    _followers_vouch_until.store(
        std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count(),
        std::memory_order_release);
}

void broker_session::mark_renewed(int64_t sent_ns) {
    // From when the request was sent, not answered: etcd extended the lease at some moment in
    // between, so only the send time bounds it from below.
    _last_renewed.store(sent_ns, std::memory_order_release);
    _unanswered_since.store(0, std::memory_order_release);
}

void broker_session::report(std::error_code e) const {
    if (_outcome_listener) {
        _outcome_listener(e);
    }
}

void broker_session::set_lease(int64_t id) {
    if (_lease.exchange(id, std::memory_order_acq_rel) == id) {
        return;
    }
    if (id != 0 && _options.start_fenced && _unfenced.load(std::memory_order_acquire)) {
        // A new registration is fenced (registered fenced, as after an expiry) until the
        // controller unfences it, and observe() hears of that only from a snapshot showing
        // this lease. Until then the old registration's unfencing must not count: with a
        // snapshot that has not caught up either (the resumed process of a SIGSTOP past its
        // session), may_lead() would let it write at the epoch it led before.
        _unfenced.store(false, std::memory_order_release);
        log::get("metadata")
            ->info("node {} fenced until the controller unfences its new registration",
                   _self.node_id);
    }
    _registered.store(id != 0, std::memory_order_release);
    for (const auto& l : _lease_listeners) {
        l(id);
    }
}

std::string broker_session::refusal(const std::optional<broker_registration>& holder) const {
    std::string who = "an unreadable registration";
    if (holder) {
        std::string at = "no endpoint";
        if (!holder->endpoints.empty()) {
            at = fmt::format("{}:{}", holder->endpoints.front().host,
                             holder->endpoints.front().port);
        }
        who = fmt::format("incarnation {} at {}", holder->incarnation_id, at);
    }
    return fmt::format(
        "node.id {} is already registered by a live broker ({}); each broker needs its own "
        "node.id",
        _self.node_id, who);
}

asio::awaitable<broker_session::outcome> broker_session::register_once(std::string* why,
                                                                       std::error_code* error) {
    auto ttl_s = (_options.session_timeout.count() + 999) / 1000;
    const int64_t sent = now_ns();
    auto granted_op = _client.grant_lease(std::chrono::seconds(std::max<int64_t>(1, ttl_s)));
    auto granted = co_await std::move(granted_op);
    if (!granted) {
        *error = granted.error();
        co_return outcome::failed;
    }
    const int64_t lease = granted.value().id;
    const std::string key = _keys.broker(_self.node_id);
    const std::string value = etcd_layout::encode(_self);
    // A few rounds: the key may change between our compare and our read of it.
    for (int round = 0; round < 5; ++round) {
        etcd::txn_request create;
        create.compares.push_back(etcd::compare::absent(key));
        create.success.emplace_back(etcd::put_op{key, value, lease});
        create.failure.emplace_back(etcd::range_op{key, {}, 0});
        auto created_op = _client.txn(std::move(create));
        auto created = co_await std::move(created_op);
        if (!created) {
            *error = created.error();
            break;
        }
        if (created.value().succeeded) {
            mark_renewed(sent);
            set_lease(lease);
            co_return outcome::registered;
        }
        const auto& ranges = created.value().ranges;
        if (ranges.empty() || ranges.front().kvs.empty()) {
            continue;  // deleted since the compare: try to create it again
        }
        const auto& held = ranges.front().kvs.front();
        auto holder = etcd_layout::decode_broker(held.value);
        const bool ours = holder && (holder.value().log_dir_id == _self.log_dir_id ||
                                     holder.value().incarnation_id == _self.incarnation_id);
        if (!ours) {
            *why = refusal(holder ? std::optional(holder.value()) : std::nullopt);
            *error = std::make_error_code(std::errc::address_in_use);
            auto ignored = _client.revoke_lease(lease);
            (void)co_await std::move(ignored);
            co_return outcome::refused;
        }
        // A previous life of this data directory: take its place, and end its lease so nothing
        // else it held (a controller key) outlives it.
        etcd::txn_request replace;
        replace.compares.push_back(etcd::compare::modified_at(key, held.mod_revision));
        replace.success.emplace_back(etcd::put_op{key, value, lease});
        auto replaced_op = _client.txn(std::move(replace));
        auto replaced = co_await std::move(replaced_op);
        if (!replaced) {
            *error = replaced.error();
            break;
        }
        if (replaced.value().succeeded) {
            if (held.lease != 0 && held.lease != lease) {
                auto ignored = _client.revoke_lease(held.lease);
                (void)co_await std::move(ignored);
            }
            log::get("metadata")
                ->info(
                    "node {}: replaced the stale registration of incarnation {} (same log "
                    "directory)",
                    _self.node_id, holder.value().incarnation_id);
            mark_renewed(sent);
            set_lease(lease);
            co_return outcome::registered;
        }
    }
    if (!*error) {
        *error = etcd::make_error_code(etcd::errc::request_failed);
    }
    auto ignored = _client.revoke_lease(lease);
    (void)co_await std::move(ignored);
    co_return outcome::failed;
}

asio::awaitable<result<void>> broker_session::start(std::string* why) {
    if (_self.log_dir_id.empty()) {
        auto id = load_log_dir_id(_options.log_dir);
        if (!id) {
            *why = fmt::format("cannot read or create the directory id in {}: {}",
                               _options.log_dir.string(), id.error().message());
            co_return id.error();
        }
        _self.log_dir_id = std::move(id).value();
    }
    std::error_code error;
    if (_options.start_fenced) {
        // Which directory this node id registered with last: a different one is a replaced
        // volume (KIP-858), whose replicas hold nothing they held before.
        auto known_op = _client.range(_keys.broker_dir(_self.node_id));
        auto known = co_await std::move(known_op);
        if (!known) {
            *why = fmt::format("cannot read {} from etcd: {}", _keys.broker_dir(_self.node_id),
                               known.error().message());
            co_return known.error();
        }
        if (!known.value().kvs.empty() && known.value().kvs.front().value != _self.log_dir_id) {
            _self.directory_changed = true;
            log::get("metadata")
                ->warn(
                    "node {}: log directory {} (id {}) is not the one this node registered with "
                    "before (id {}): its replicas rejoin only by copying from the others",
                    _self.node_id, _options.log_dir.string(), _self.log_dir_id,
                    known.value().kvs.front().value);
        }
    }
    auto out = co_await register_once(why, &error);
    if (out == outcome::registered) {
        log::get("metadata")
            ->info("node {} registered in etcd (incarnation {}, lease {:x}{}{})", _self.node_id,
                   _self.incarnation_id, lease_id(), _self.fenced ? ", fenced" : "",
                   _self.unclean_shutdown ? ", after an unclean shutdown" : "");
        if (_options.start_fenced) {
            co_await note_directory();
        }
        co_return success();
    }
    if (why->empty()) {
        *why = fmt::format("cannot register node {} in etcd: {}", _self.node_id, error.message());
    }
    co_return error;
}

asio::awaitable<void> broker_session::note_directory() {
    // Best effort: a failure only means the next start cannot tell a replaced directory.
    auto put_op = _client.put(_keys.broker_dir(_self.node_id), _self.log_dir_id);
    auto put = co_await std::move(put_op);
    if (!put) {
        log::get("metadata")
            ->warn("node {}: cannot record its log directory id in etcd: {}", _self.node_id,
                   put.error().message());
    }
}

asio::awaitable<void> broker_session::mark_recovered() {
    if (_self.recovered) {
        co_return;
    }
    _self.recovered = true;  // a registration from now on says so
    const std::string key = _keys.broker(_self.node_id);
    for (int round = 0; round < 5 && !_stopping; ++round) {
        auto read_op = _client.range(key);
        auto read = co_await std::move(read_op);
        if (!read || read.value().kvs.empty()) {
            // Not registered now: the next registration carries recovered.
            co_return;
        }
        const auto& kv = read.value().kvs.front();
        auto held = etcd_layout::decode_broker(kv.value);
        if (!held || held.value().incarnation_id != _self.incarnation_id ||
            kv.lease != lease_id()) {
            co_return;
        }
        auto next = std::move(held).value();
        next.recovered = true;
        etcd::txn_request update;
        update.compares.push_back(etcd::compare::modified_at(key, kv.mod_revision));
        update.success.emplace_back(etcd::put_op{key, etcd_layout::encode(next), kv.lease});
        auto updated_op = _client.txn(std::move(update));
        auto updated = co_await std::move(updated_op);
        if (updated && updated.value().succeeded) {
            log::get("metadata")
                ->info("node {}: logs recovered; waiting to be unfenced", _self.node_id);
            co_return;
        }
    }
    log::get("metadata")
        ->warn("node {}: could not mark its registration recovered; the next registration will",
               _self.node_id);
}

void broker_session::observe(const cluster_state& state) {
    if (!_options.start_fenced) {
        return;
    }
    auto it = state.brokers.find(_self.node_id);
    const bool unfenced = it != state.brokers.end() &&
                          it->second.incarnation_id == _self.incarnation_id &&
                          it->second.lease == lease_id() && lease_id() != 0 && !it->second.fenced;
    if (unfenced == _unfenced.load(std::memory_order_acquire)) {
        return;
    }
    _unfenced.store(unfenced, std::memory_order_release);
    if (unfenced) {
        // What this incarnation lost at its start is settled now: a later registration (after
        // an expiry) is fenced again, but this process has not lost anything since.
        _self.unclean_shutdown = false;
        _self.directory_changed = false;
        log::get("metadata")->info("node {} unfenced by the controller", _self.node_id);
    } else {
        log::get("metadata")
            ->info("node {} fenced until the controller unfences it", _self.node_id);
    }
}

void broker_session::run() {
    if (_loop_running) {
        return;
    }
    _loop_running = true;
    asio::co_spawn(_ex, keep_alive_loop(this), asio::detached);
}

asio::awaitable<void> broker_session::keep_alive_once() {
    const int64_t sent = now_ns();
    _in_flight_sent.store(sent, std::memory_order_release);
    auto renewed_op = _client.keep_alive_once(lease_id());
    auto renewed = co_await std::move(renewed_op);
    _in_flight_sent.store(0, std::memory_order_release);
    if (_stopping) {
        co_return;
    }
    report(renewed ? std::error_code{} : renewed.error());
    if (renewed || renewed.error() == etcd::errc::lease_not_found) {
        _unanswered_since.store(0, std::memory_order_release);  // etcd answers
    }
    if (renewed) {
        mark_renewed(sent);
        co_return;
    }
    if (renewed.error() != etcd::errc::lease_not_found) {
        // etcd unreachable from here: the lease runs out at the last renewal + the session
        // timeout, and this broker leads after that only while its followers vouch for it
        // (vouched_until, cluster::leadership_vouch), which needs this run of unanswered
        // renewals (session_lease::etcd_unreachable_across_lapse).
        _last_unanswered.store(sent, std::memory_order_release);
        int64_t none = 0;
        _unanswered_since.compare_exchange_strong(none, sent, std::memory_order_acq_rel);
        co_return;
    }
    log::get("metadata")
        ->warn(
            "node {}: etcd expired this broker's session (lease {:x}); not leading until "
            "registered again",
            _self.node_id, lease_id());
    _expired.store(true, std::memory_order_relaxed);
    set_lease(0);
}

asio::awaitable<void> broker_session::keep_alive_loop(broker_session* self) {
    bool logged_failure = false;
    while (!self->_stopping) {
        if (self->registered()) {
            boost::system::error_code ec;
            self->_timer.expires_after(self->_options.heartbeat_interval);
            co_await self->_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
            if (self->_stopping) {
                break;
            }
            co_await self->keep_alive_once();
            continue;
        }
        std::string why;
        std::error_code error;
        auto out = co_await self->register_once(&why, &error);
        if (self->_stopping) {
            break;
        }
        self->report(error);
        if (out == outcome::registered) {
            self->_expired.store(false, std::memory_order_relaxed);
            self->_reregistrations.fetch_add(1, std::memory_order_relaxed);
            log::get("metadata")
                ->info("node {} registered again (lease {:x})", self->_self.node_id,
                       self->lease_id());
            logged_failure = false;
            continue;
        }
        if (!logged_failure) {
            log::get("metadata")
                ->error("node {}: cannot register again yet, retrying: {}", self->_self.node_id,
                        why.empty() ? error.message() : why);
            logged_failure = true;
        }
        boost::system::error_code ec;
        self->_timer.expires_after(self->_options.heartbeat_interval);
        co_await self->_timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    self->_loop_running = false;
}

asio::awaitable<void> broker_session::stop() {
    _stopping = true;
    _timer.cancel();
    if (auto lease = lease_id(); lease != 0) {
        set_lease(0);
        auto ignored = _client.revoke_lease(lease);
        (void)co_await std::move(ignored);
    }
}

}  // namespace spool::broker::metadata
