#include "broker/replication/replica_fetcher.h"

#include "broker/replication/fetched_records.h"
#include "common/log.h"
#include "protocol/errors.h"
#include "protocol/messages/offset_for_leader_epoch.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace spool::broker::replication {

namespace asio = boost::asio;
using protocol::error_code;
using clock = std::chrono::steady_clock;

namespace {

// The versions REPLICATION.md fixes: Fetch v12 is the last one that names topics (v13+ send
// topic ids) and carries last_fetched_epoch; OffsetForLeaderEpoch v4 carries replica_id.
constexpr int16_t fetch_version = 12;
constexpr int16_t offset_for_leader_epoch_version = 4;

// Headers of a Fetch answer over many partitions, beyond the record bytes it may carry.
constexpr size_t response_header_slack = size_t{1} << 20;

size_t response_bound(const fetcher_options& o) {
    // Kafka's leader sends the first batch whole even past max_bytes (KIP-74).
    return static_cast<size_t>(o.response_max_bytes) +
           static_cast<size_t>(std::max(o.max_batch_bytes, o.partition_max_bytes)) +
           response_header_slack;
}

std::shared_ptr<spdlog::logger> logger() {
    return log::get("replication");
}

// The request entry of tp, in its topic's entry (tps come in order, so a topic's partitions are
// consecutive).
template <class Topics>
auto& add_partition(Topics& topics, const model::topic_partition& tp) {
    if (topics.empty() || topics.back().topic != tp.topic) {
        topics.emplace_back().topic = tp.topic;
    }
    auto& part = topics.back().partitions.emplace_back();
    part.partition = tp.partition.value();
    return part;
}

std::string name_of(const model::topic_partition& tp) {
    return tp.dir_name();
}

}  // namespace

replica_fetcher::replica_fetcher(asio::io_context::executor_type shard, int32_t leader,
                                 fetcher_options options, partition_lookup lookup,
                                 endpoint_resolver resolve,
                                 std::shared_ptr<metrics::replica_fetcher_probe::fetcher> probe)
    : _shard(shard),
      _leader(leader),
      _options(options),
      _lookup(std::move(lookup)),
      _resolve(std::move(resolve)),
      _probe(probe ? std::move(probe)
                   : std::make_shared<metrics::replica_fetcher_probe::fetcher>()),
      _client(shard, leader_client_options{.self = options.self,
                                           .connect_timeout = options.connect_timeout,
                                           .max_response_bytes = response_bound(options),
                                           .security = options.security}),
      _wake(shard),
      _exited(shard) {}

replica_fetcher::~replica_fetcher() = default;

void replica_fetcher::start() {
    if (_running || _stopping) {
        return;
    }
    _running = true;
    asio::co_spawn(_shard, run(this), asio::detached);
}

void replica_fetcher::follow(const model::topic_partition& tp, int32_t leader_epoch) {
    if (_stopping) {
        return;
    }
    auto& f = _partitions[tp];
    f.leader_epoch = leader_epoch;
    f.st = state::truncating;
    f.retry_at = {};
    ++f.generation;
    update_gauges();
    _wake.cancel();
}

void replica_fetcher::drop(const model::topic_partition& tp) {
    if (_partitions.erase(tp) > 0) {
        update_gauges();
        _wake.cancel();
    }
}

asio::awaitable<void> replica_fetcher::stop() {
    _stopping = true;
    _client.close();
    _wake.cancel();
    while (_running) {
        co_await _exited.wait();
    }
}

asio::awaitable<void> replica_fetcher::run(replica_fetcher* self) {
    while (!self->_stopping) {
        auto next = self->next_work();
        if (!next) {
            // Nothing to follow: hold no connection until something is.
            self->_client.close();
            co_await self->sleep_until(steady_time::max());
            continue;
        }
        if (*next > clock::now()) {
            co_await self->sleep_until(*next);
            continue;
        }
        if (!co_await self->ensure_connected()) {
            continue;
        }
        if (!self->due_in(state::truncating).empty()) {
            co_await self->truncate_round();
        } else {
            co_await self->fetch_round();
        }
    }
    self->_running = false;
    self->_exited.notify();
}

std::optional<steady_time> replica_fetcher::next_work() const {
    std::optional<steady_time> next;
    for (const auto& [tp, f] : _partitions) {
        if (f.st != state::paused && (!next || f.retry_at < *next)) {
            next = f.retry_at;
        }
    }
    if (next && !_client.connected() && _connect_after > *next) {
        next = _connect_after;
    }
    return next;
}

std::vector<model::topic_partition> replica_fetcher::due_in(state st) const {
    const auto now = clock::now();
    std::vector<model::topic_partition> due;
    for (const auto& [tp, f] : _partitions) {
        if (f.st == st && f.retry_at <= now) {
            due.push_back(tp);
        }
    }
    return due;
}

asio::awaitable<void> replica_fetcher::sleep_until(steady_time t) {
    if (_stopping) {
        co_return;
    }
    boost::system::error_code ignored;
    _wake.expires_at(t);
    co_await _wake.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<bool> replica_fetcher::ensure_connected() {
    if (_client.connected()) {
        co_return true;
    }
    auto where = _resolve ? _resolve(_leader) : std::nullopt;
    std::error_code ec = make_error_code(client_errc::unreachable);
    if (where) {
        ec = co_await _client.connect(*where);
    }
    if (!ec && (!_client.supports(protocol::api_key::fetch, fetch_version) ||
                !_client.supports(protocol::api_key::offset_for_leader_epoch,
                                  offset_for_leader_epoch_version))) {
        ec = make_error_code(client_errc::unsupported_version);
    }
    if (ec) {
        request_failed(ec, where ? "connect" : "endpoint lookup");
        co_return false;
    }
    logger()->info("replica fetcher: connected to leader {} at {}:{} for {} partitions", _leader,
                   where->host, where->port, _partitions.size());
    co_return true;
}

void replica_fetcher::request_failed(std::error_code ec, const char* what) {
    _client.close();
    _connect_after = clock::now() + _options.backoff;
    if (ec == client_errc::stopped) {
        return;
    }
    _probe->request_failed();
    if (_options.leader_lost) {
        _options.leader_lost(_leader);
    }
    logger()->warn("replica fetcher for leader {}: {} failed: {}; retrying in {} ms", _leader, what,
                   ec.message(), _options.backoff.count());
}

void replica_fetcher::log_partition_error(const model::topic_partition& tp, const char* what,
                                          error_code code) {
    // A refused authorization does not heal by retrying: the leader's ACLs must grant this
    // broker's principal ClusterAction on the cluster (or list it in super.users). Said at warn
    // level, as Kafka's fetcher logs it at error; the rest are transient.
    if (code == error_code::topic_authorization_failed ||
        code == error_code::cluster_authorization_failed) {
        logger()->warn("{}: {} from leader {} refused: {} (this broker's principal needs "
                       "ClusterAction on the cluster, or to be in super.users, on the leader)",
                       name_of(tp), what, _leader, protocol::name(code));
        return;
    }
    logger()->debug("{}: {} from leader {}: {}", name_of(tp), what, _leader, protocol::name(code));
}

void replica_fetcher::retry_later(followed& f) {
    f.retry_at = clock::now() + _options.backoff;
}

partition* replica_fetcher::usable(const model::topic_partition& tp) {
    partition* p = _lookup ? _lookup(tp) : nullptr;
    if (p == nullptr || p->role() != partition_role::follower || p->leader_id() != _leader) {
        // Removed, now the leader, or following someone else (the role listener moves it).
        if (_partitions.erase(tp) > 0) {
            update_gauges();
        }
        return nullptr;
    }
    return p;
}

void replica_fetcher::update_gauges() {
    int64_t lag = 0;
    for (const auto& [tp, f] : _partitions) {
        if (f.leader_hw < 0) {
            continue;
        }
        partition* p = _lookup ? _lookup(tp) : nullptr;
        if (p != nullptr) {
            lag = std::max(lag, f.leader_hw - p->log().log_end_offset().value());
        }
    }
    _probe->set_max_lag(lag);
    _probe->set_partitions(static_cast<int64_t>(_partitions.size()));
}

void replica_fetcher::truncate_to(partition& p, followed& f, leader_epoch_end answer) {
    const auto log_end = p.log().log_end_offset();
    const auto decision =
        decide_truncation(p.log().epochs(), p.log().log_start_offset(), log_end, answer);
    if (truncate_at(p, f, decision) && decision.offset != log_end) {
        // partition::truncated() logs the cut itself at info; this says why.
        logger()->debug(
            "{}: truncated from {} to {} (leader {} at epoch {} answered epoch {} ending at {})",
            name_of(p.ntp()), log_end.value(), decision.offset.value(), _leader, f.leader_epoch,
            answer.epoch, answer.end_offset);
    }
}

bool replica_fetcher::truncate_at(partition& p, followed& f, truncation_decision decision) {
    if (auto r = p.truncated(decision.offset); !r) {
        _probe->request_failed();
        logger()->warn("{}: truncating to {} failed: {}", name_of(p.ntp()), decision.offset.value(),
                       r.error().message());
        retry_later(f);
        return false;
    }
    f.st = decision.complete ? state::fetching : state::truncating;
    return true;
}

asio::awaitable<void> replica_fetcher::truncate_round() {
    const auto due = due_in(state::truncating);
    protocol::offset_for_leader_epoch_request req;
    req.replica_id = _options.self;
    std::map<model::topic_partition, uint64_t> asked;  // -> the follow() generation asked at
    for (const auto& tp : due) {
        partition* p = usable(tp);
        if (p == nullptr) {
            continue;
        }
        auto& f = _partitions.at(tp);
        auto latest = p->log().epochs().latest_epoch();
        if (!latest) {
            // No batch of ours carries an epoch: an empty log has nothing to compare, and a log
            // older than epoch tracking truncates to its high watermark, as Kafka does.
            const auto& log = p->log();
            truncate_at(*p, f,
                        {log.log_end_offset() == log.log_start_offset() ? log.log_end_offset()
                                                                        : p->high_watermark(),
                         true});
            continue;
        }
        auto& part = add_partition(req.topics, tp);
        part.current_leader_epoch = f.leader_epoch;
        part.leader_epoch = latest->value();
        asked[tp] = f.generation;
    }
    if (asked.empty()) {
        co_return;
    }
    _probe->request_sent();
    auto resp = co_await _client.call<protocol::offset_for_leader_epoch_response>(
        req, offset_for_leader_epoch_version, _options.socket_timeout);
    if (!resp) {
        request_failed(resp.error(), "OffsetForLeaderEpoch");
        co_return;
    }
    for (const auto& t : resp.value().body.topics) {
        for (const auto& e : t.partitions) {
            model::topic_partition tp{t.topic, model::partition_id(e.partition)};
            auto a = asked.find(tp);
            if (a == asked.end()) {
                continue;
            }
            const uint64_t generation = a->second;
            asked.erase(a);
            auto it = _partitions.find(tp);
            if (it == _partitions.end() || it->second.generation != generation ||
                it->second.st != state::truncating) {
                continue;  // dropped or followed again while we waited
            }
            partition* p = usable(tp);
            if (p == nullptr) {
                continue;
            }
            auto& f = _partitions.at(tp);
            const auto code = static_cast<error_code>(e.error_code);
            if (code == error_code::none) {
                truncate_to(*p, f, {e.leader_epoch, e.end_offset});
                continue;
            }
            _probe->request_failed();
            if (code == error_code::fenced_leader_epoch) {
                logger()->info("{}: leader {} is at a newer epoch than {}: waiting for metadata",
                               name_of(tp), _leader, f.leader_epoch);
                f.st = state::paused;
            } else {
                log_partition_error(tp, "OffsetForLeaderEpoch", code);
                retry_later(f);
            }
        }
    }
    for (const auto& [tp, generation] : asked) {  // not answered: ask again later
        auto it = _partitions.find(tp);
        if (it != _partitions.end() && it->second.generation == generation) {
            retry_later(it->second);
        }
    }
}

asio::awaitable<void> replica_fetcher::fetch_round() {
    const auto due = due_in(state::fetching);
    protocol::fetch_request req;
    req.replica_id = _options.self;
    req.max_wait_ms = static_cast<int32_t>(_options.max_wait.count());
    req.min_bytes = _options.min_bytes;
    req.max_bytes = _options.response_max_bytes;
    req.isolation_level = 0;
    req.session_id = 0;
    req.session_epoch = -1;  // a full fetch, no session (KIP-227)
    struct sent {
        uint64_t generation;
        model::offset fetch_offset;
    };
    std::map<model::topic_partition, sent> asked;
    for (const auto& tp : due) {
        partition* p = usable(tp);
        if (p == nullptr) {
            continue;
        }
        auto& f = _partitions.at(tp);
        if (p->needs_truncation()) {
            f.st = state::truncating;
            continue;
        }
        auto& part = add_partition(req.topics, tp);
        part.current_leader_epoch = f.leader_epoch;
        part.fetch_offset = p->log().log_end_offset().value();
        part.last_fetched_epoch =
            p->log().epochs().latest_epoch().value_or(model::no_leader_epoch).value();
        part.log_start_offset = p->log().log_start_offset().value();
        part.partition_max_bytes = _options.partition_max_bytes;
        asked[tp] = {f.generation, p->log().log_end_offset()};
    }
    if (asked.empty()) {
        co_return;
    }
    _probe->request_sent();
    auto resp = co_await _client.call<protocol::fetch_response>(
        req, fetch_version, _options.socket_timeout + _options.max_wait);
    if (!resp) {
        request_failed(resp.error(), "Fetch");
        co_return;
    }
    auto& answer = resp.value();
    if (answer.body.error_code != 0) {
        _probe->request_failed();
        logger()->warn("replica fetcher: leader {} answered Fetch with {}", _leader,
                       protocol::name(static_cast<error_code>(answer.body.error_code)));
        for (const auto& [tp, s] : asked) {
            if (auto it = _partitions.find(tp); it != _partitions.end()) {
                retry_later(it->second);
            }
        }
        co_return;
    }
    for (const auto& t : answer.body.responses) {
        for (const auto& data : t.partitions) {
            model::topic_partition tp{t.topic, model::partition_id(data.partition_index)};
            auto a = asked.find(tp);
            if (a == asked.end()) {
                continue;
            }
            auto it = _partitions.find(tp);
            if (it != _partitions.end() && it->second.generation == a->second.generation &&
                it->second.st == state::fetching) {
                apply_fetched(answer, tp, data, a->second.fetch_offset);
            }
            asked.erase(a);
        }
    }
    // flush.messages: what the leader reads as our log end at the next fetch must be synced.
    auto syncs = std::exchange(_sync_before_fetch, {});
    for (const auto& [tp, end] : syncs) {
        co_await wait_until_synced(tp, end);
    }
    update_gauges();
}

asio::awaitable<void> replica_fetcher::wait_until_synced(model::topic_partition tp,
                                                         model::offset end) {
    partition* p = usable(tp);
    if (p == nullptr) {
        co_return;
    }
    // Bounded: a log closed meanwhile may never call back; the next fetch then reports an end
    // the policy did not sync, as it would after a failed sync (the log goes offline then).
    auto timer = std::make_shared<asio::steady_timer>(co_await asio::this_coro::executor);
    timer->expires_after(_options.socket_timeout);
    auto synced = std::make_shared<bool>(false);
    p->log().flush_async(end, [timer, synced](const result<model::offset>&) {
        *synced = true;
        timer->cancel();
    });
    if (!*synced) {
        boost::system::error_code ignored;
        co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    }
}

void replica_fetcher::apply_fetched(fetch_answer& resp, const model::topic_partition& tp,
                                    const fetched_partition& data, model::offset fetch_offset) {
    partition* p = usable(tp);
    if (p == nullptr || p->log().log_end_offset() != fetch_offset) {
        return;  // gone, or its log moved while we waited: the next round asks again
    }
    auto& f = _partitions.at(tp);
    const auto code = static_cast<error_code>(data.error_code);
    if (code == error_code::none) {
        if (data.diverging_epoch.epoch >= 0 || data.diverging_epoch.end_offset >= 0) {
            // The leader found our last fetched epoch diverging (KIP-320): the same answer as
            // OffsetForLeaderEpoch's.
            truncate_to(*p, f, {data.diverging_epoch.epoch, data.diverging_epoch.end_offset});
            return;
        }
        auto bytes = data.records.bytes();
        const size_t whole = whole_batches_size(bytes);
        if (whole > 0) {
            auto r = p->append_from_leader(resp.writable(bytes.first(whole)));
            if (!r) {
                _probe->request_failed();
                if (r.error() == errc::offset_out_of_range) {
                    f.st = state::truncating;
                } else if (r.error() == errc::not_leader_or_follower) {
                    drop(tp);
                    return;
                } else {
                    logger()->warn("{}: appending {} bytes from leader {} failed: {}", name_of(tp),
                                   whole, _leader, r.error().message());
                    retry_later(f);
                }
                return;
            }
            _probe->bytes_appended(whole);
            if (r.value()) {
                _sync_before_fetch.emplace_back(tp, p->log().log_end_offset());
            }
        } else if (!bytes.empty()) {
            // Not even one whole batch: a leader cutting its first batch, or a corrupt length.
            _probe->request_failed();
            logger()->warn("{}: leader {} sent {} record bytes without a whole batch at {}",
                           name_of(tp), _leader, bytes.size(), fetch_offset.value());
            retry_later(f);
        }
        f.leader_hw = data.high_watermark;
        p->follow_high_watermark(model::offset(data.high_watermark));
        return;
    }
    _probe->request_failed();
    switch (code) {
        case error_code::offset_out_of_range:
            if (data.log_start_offset >= 0 && fetch_offset.value() < data.log_start_offset) {
                // The leader's retention or DeleteRecords moved past us: start at its start.
                if (auto r = p->restart_at(model::offset(data.log_start_offset)); !r) {
                    logger()->warn("{}: restarting at {} failed: {}", name_of(tp),
                                   data.log_start_offset, r.error().message());
                    retry_later(f);
                    return;
                }
                logger()->info("{}: below leader {}'s log start {}: log restarted there",
                               name_of(tp), _leader, data.log_start_offset);
            } else {
                f.st = state::truncating;  // past the leader's end: we diverged
            }
            return;
        case error_code::fenced_leader_epoch:
            logger()->info("{}: leader {} is at a newer epoch than {}: waiting for metadata",
                           name_of(tp), _leader, f.leader_epoch);
            f.st = state::paused;
            return;
        default:
            log_partition_error(tp, "Fetch", code);
            retry_later(f);
            return;
    }
}

}  // namespace spool::broker::replication
