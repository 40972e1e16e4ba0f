#include "broker/txn/txn_coordinator.h"

#include "broker/coordinator/errc.h"
#include "broker/txn/record_codec.h"
#include "common/log.h"

#include <algorithm>

namespace spool::broker::txn {

namespace {

bool is_prepare(txn_state s) {
    return s == txn_state::prepare_commit || s == txn_state::prepare_abort;
}

bool is_complete_or_empty(txn_state s) {
    return s == txn_state::empty || s == txn_state::complete_commit ||
           s == txn_state::complete_abort;
}

// What a failed __transaction_state append tells the client (Kafka's TransactionStateManager):
// a partition led elsewhere now is NOT_COORDINATOR (the client looks again); anything else
// (too few replicas, a timeout) is the retriable COORDINATOR_NOT_AVAILABLE.
std::error_code append_error(std::error_code ec) {
    if (ec == make_error_code(coordinator::errc::not_coordinator)) {
        return make_error_code(errc::not_coordinator);
    }
    return make_error_code(errc::coordinator_not_available);
}

// A TV2 producer told its next producer id (EndTxn on an exhausted epoch) that asks before
// Complete* moved the id to it: the transaction it ended is still being completed.
bool rotating_to(const txn_metadata& m, int64_t producer_id) {
    return producer_id >= 0 && m.next_producer_id == producer_id && is_prepare(m.state);
}

}  // namespace

txn_coordinator::txn_coordinator(int32_t partition, txn_config config,
                                 const coordinator::clock& clk, coordinator::group_log& log,
                                 marker_sender& markers)
    : _partition(partition),
      _config(config),
      _clock(clk),
      _log(log),
      _markers(markers),
      _generation(std::make_shared<uint64_t>(0)) {}

txn_coordinator::~txn_coordinator() = default;

std::error_code txn_coordinator::load(int32_t coordinator_epoch) {
    unload();
    std::map<std::string, entry> loaded;
    auto ec = _log.replay([&](std::span<const uint8_t> key,
                              std::optional<std::span<const uint8_t>> value) {
        auto id = decode_key(key);
        if (!id) {
            return;  // not a transaction record: nothing Kafka writes here either
        }
        if (!value) {
            loaded.erase(id.value());
            return;
        }
        auto meta = decode_value(id.value(), *value);
        if (!meta) {
            log::get("txn")->warn("__transaction_state-{}: undecodable value for '{}' skipped",
                                  _partition, id.value());
            return;
        }
        loaded[id.value()].meta = std::move(meta).value();
    });
    if (ec) {
        return ec;
    }
    std::erase_if(loaded, [](const auto& kv) { return kv.second.meta.state == txn_state::dead; });
    _txns = std::move(loaded);
    _loaded = true;
    for (const auto& [id, e] : _txns) {
        count(std::nullopt, e.meta.state);
    }
    _coordinator_epoch = coordinator_epoch;
    _next_abort_check_ms = now_ms() + _config.abort_check_interval_ms;
    _next_expire_check_ms = now_ms() + _config.expire_check_interval_ms;
    std::vector<std::string> unfinished;
    for (const auto& [id, e] : _txns) {
        if (is_prepare(e.meta.state)) {
            unfinished.push_back(id);
        }
    }
    for (const auto& id : unfinished) {
        send_markers(id);  // a previous coordinator may have died between Prepare and Complete
    }
    return {};
}

void txn_coordinator::unload() {
    if (_loaded) {
        for (const auto& [id, e] : _txns) {
            count(e.meta.state, std::nullopt);
        }
    }
    _loaded = false;
    ++*_generation;
    _txns.clear();
}

void txn_coordinator::write(txn_metadata next, bool tombstone, error_callback done) {
    auto it = _txns.find(next.transactional_id);
    if (it == _txns.end()) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    it->second.pending = true;
    std::vector<coordinator::log_record> records;
    records.push_back({encode_key(next.transactional_id),
                       tombstone ? std::nullopt : std::optional(encode_value(next))});
    std::weak_ptr<uint64_t> alive = _generation;
    _log.append(std::move(records), [this, alive, gen = *_generation, next = std::move(next),
                                     tombstone, done = std::move(done)](std::error_code ec) {
        auto g = alive.lock();
        if (!g || *g != gen) {
            done(make_error_code(errc::not_coordinator));  // unloaded meanwhile
            return;
        }
        auto it = _txns.find(next.transactional_id);
        if (it == _txns.end()) {
            done(make_error_code(errc::not_coordinator));
            return;
        }
        it->second.pending = false;
        if (ec) {
            done(append_error(ec));
            return;
        }
        if (tombstone) {
            count(it->second.meta.state, std::nullopt);
            _txns.erase(it);
        } else {
            count(it->second.meta.state, next.state);
            it->second.meta = next;
        }
        done({});
    });
}

std::error_code txn_coordinator::check(const txn_ref& ref, entry*& out, bool strict_epoch) {
    if (ref.transactional_id.empty()) {
        return make_error_code(errc::invalid_request);
    }
    if (!_loaded) {
        return make_error_code(errc::not_coordinator);
    }
    auto it = _txns.find(ref.transactional_id);
    if (it != _txns.end() && rotating_to(it->second.meta, ref.producer_id)) {
        return make_error_code(errc::concurrent_transactions);
    }
    if (it == _txns.end() || it->second.meta.producer_id != ref.producer_id) {
        return make_error_code(errc::invalid_producer_id_mapping);
    }
    const auto& m = it->second.meta;
    if (strict_epoch ? ref.producer_epoch != m.producer_epoch
                     : ref.producer_epoch < m.producer_epoch) {
        return make_error_code(errc::producer_fenced);
    }
    if (it->second.pending) {
        return make_error_code(errc::concurrent_transactions);
    }
    out = &it->second;
    return {};
}

void txn_coordinator::init_producer_id(init_request req, std::function<void(init_result)> done) {
    auto fail = [&done](errc e) { done(init_result{make_error_code(e)}); };
    if (req.transactional_id.empty()) {
        return fail(errc::invalid_request);
    }
    if (req.timeout_ms <= 0 || req.timeout_ms > _config.max_timeout_ms) {
        return fail(errc::invalid_transaction_timeout);
    }
    if (!_loaded) {
        return fail(errc::not_coordinator);
    }
    auto it = _txns.find(req.transactional_id);
    if (it == _txns.end()) {
        if (req.fresh_producer_id < 0) {
            return fail(errc::coordinator_not_available);
        }
        // Kafka keeps the new id in memory at once with no epoch; the first write gives it 0.
        entry e;
        e.meta.transactional_id = req.transactional_id;
        e.meta.producer_id = req.fresh_producer_id;
        e.meta.timeout_ms = req.timeout_ms;
        e.meta.last_update_ms = now_ms();
        req.fresh_producer_id = no_producer_id;
        it = _txns.emplace(req.transactional_id, std::move(e)).first;
    }
    entry& e = it->second;
    const txn_metadata& m = e.meta;
    if (e.pending) {
        return fail(errc::concurrent_transactions);
    }
    const bool expected = req.producer_id >= 0;
    // KIP-360: a producer naming its id and epoch is fenced unless the id is new, it is the
    // current one, or it is the previous one with an exhausted epoch (a retried rotation).
    if (expected && !(m.producer_epoch == no_producer_epoch || req.producer_id == m.producer_id ||
                      (req.producer_id == m.previous_producer_id &&
                       req.producer_epoch >= INT16_MAX - 1))) {
        return fail(errc::producer_fenced);
    }
    if (m.state == txn_state::ongoing) {
        // A zombie's transaction is aborted under a bumped epoch first; the client retries and
        // then gets the next epoch (or a new producer id if the fence exhausted this one).
        fence_and_abort(e, [done](std::error_code ec) {
            done(init_result{ec ? ec : make_error_code(errc::concurrent_transactions)});
        });
        return;
    }
    if (!is_complete_or_empty(m.state)) {
        return fail(errc::concurrent_transactions);
    }
    txn_metadata next = m;
    if (m.epoch_exhausted() && (!expected || req.producer_epoch == m.producer_epoch)) {
        if (req.fresh_producer_id < 0) {
            return fail(errc::coordinator_not_available);
        }
        next.previous_producer_id = m.producer_id;
        next.producer_id = req.fresh_producer_id;
        next.producer_epoch = 0;
        next.last_producer_epoch = expected ? m.producer_epoch : no_producer_epoch;
    } else if (!expected) {
        if (m.epoch_exhausted()) {
            return fail(errc::producer_fenced);
        }
        next.producer_epoch = static_cast<int16_t>(m.producer_epoch + 1);
        next.last_producer_epoch = no_producer_epoch;
    } else if (m.producer_epoch == no_producer_epoch || req.producer_epoch == m.producer_epoch) {
        next.producer_epoch = static_cast<int16_t>(m.producer_epoch + 1);
        next.last_producer_epoch = m.producer_epoch;
    } else if (req.producer_epoch != m.last_producer_epoch) {
        return fail(errc::producer_fenced);
    }  // else: a retry of a bump whose answer was lost: the same epoch again
    next.state = txn_state::empty;
    next.partitions.clear();
    next.start_ms = -1;
    next.timeout_ms = req.timeout_ms;
    next.last_update_ms = now_ms();
    const int64_t id = next.producer_id;
    const int16_t epoch = next.producer_epoch;
    write(std::move(next), false, [done, id, epoch](std::error_code ec) {
        done(ec ? init_result{ec} : init_result{{}, id, epoch});
    });
}

void txn_coordinator::fence_and_abort(entry& e, error_callback done) {
    txn_metadata next = e.meta;
    // Kafka leaves an epoch at Short.MAX_VALUE as it is: it cannot be bumped.
    if (next.producer_epoch < INT16_MAX) {
        next.producer_epoch = static_cast<int16_t>(next.producer_epoch + 1);
    }
    next.last_producer_epoch = no_producer_epoch;
    next.state = txn_state::prepare_abort;
    next.last_update_ms = now_ms();
    std::string id = next.transactional_id;
    write(std::move(next), false, [this, id, done = std::move(done)](std::error_code ec) {
        if (!ec) {
            send_markers(id);
        }
        done(ec);
    });
}

void txn_coordinator::add_partitions(txn_ref ref, std::vector<txn_partition> partitions,
                                     error_callback done, int16_t client_txn_version) {
    entry* e = nullptr;
    if (auto ec = check(ref, e, true)) {
        return done(ec);
    }
    const txn_metadata& m = e->meta;
    if (is_prepare(m.state) || !(m.state == txn_state::ongoing || is_complete_or_empty(m.state))) {
        return done(make_error_code(errc::concurrent_transactions));
    }
    txn_metadata next = m;
    next.partitions.insert(partitions.begin(), partitions.end());
    if (m.state == txn_state::ongoing && next.partitions.size() == m.partitions.size()) {
        return done({});  // all of them are in the transaction already: nothing to write
    }
    if (m.state != txn_state::ongoing) {
        next.start_ms = now_ms();
        next.client_txn_version = client_txn_version;
    } else {
        next.client_txn_version = std::max(m.client_txn_version, client_txn_version);
    }
    next.state = txn_state::ongoing;
    next.last_update_ms = now_ms();
    write(std::move(next), false, std::move(done));
}

txn_coordinator::verify_result txn_coordinator::verify_partitions(
    const txn_ref& ref, const std::vector<txn_partition>& partitions) {
    // Kafka's handleVerifyPartitionsInTransaction: a write in flight is not waited for (the
    // partition leader's guard is the final check), a transaction being ended is
    // CONCURRENT_TRANSACTIONS, and a partition is in it from its durable add to Complete*.
    verify_result out;
    auto fail = [&out](errc e) {
        out.first = make_error_code(e);
        return out;
    };
    if (ref.transactional_id.empty()) {
        return fail(errc::invalid_request);
    }
    if (!_loaded) {
        return fail(errc::not_coordinator);
    }
    auto it = _txns.find(ref.transactional_id);
    if (it != _txns.end() && rotating_to(it->second.meta, ref.producer_id)) {
        return fail(errc::concurrent_transactions);
    }
    if (it == _txns.end() || it->second.meta.producer_id != ref.producer_id) {
        return fail(errc::invalid_producer_id_mapping);
    }
    const txn_metadata& m = it->second.meta;
    if (ref.producer_epoch != m.producer_epoch) {
        return fail(errc::producer_fenced);
    }
    if (m.state == txn_state::prepare_commit || m.state == txn_state::prepare_abort) {
        return fail(errc::concurrent_transactions);
    }
    for (const auto& p : partitions) {
        out.second[p] = m.partitions.contains(p) ? std::error_code{}
                                                 : make_error_code(errc::invalid_txn_state);
    }
    return out;
}

void txn_coordinator::end_txn(txn_ref ref, bool commit, error_callback done) {
    entry* e = nullptr;
    if (auto ec = check(ref, e, true)) {
        return done(ec);
    }
    const txn_metadata& m = e->meta;
    auto invalid = make_error_code(errc::invalid_txn_state);
    auto concurrent = make_error_code(errc::concurrent_transactions);
    switch (m.state) {
        case txn_state::ongoing:
            break;
        case txn_state::complete_commit:
            return done(commit ? std::error_code{} : invalid);  // a retry of a finished commit
        case txn_state::complete_abort:
            return done(commit ? invalid : std::error_code{});
        case txn_state::prepare_commit:
        case txn_state::prepare_abort:
            // The markers are in flight: Kafka's pending transition to Complete*
            // (prepareComplete), CONCURRENT_TRANSACTIONS whatever the result asked.
            return done(concurrent);
        case txn_state::empty:
            return done(invalid);
        default:
            return done(concurrent);
    }
    txn_metadata next = m;
    next.state = commit ? txn_state::prepare_commit : txn_state::prepare_abort;
    next.last_update_ms = now_ms();
    std::string id = next.transactional_id;
    // Answered once Prepare* is durable, as Kafka does: the outcome is decided from then on.
    write(std::move(next), false, [this, id, done = std::move(done)](std::error_code ec) {
        done(ec);
        if (!ec) {
            send_markers(id);
        }
    });
}

void txn_coordinator::end_txn(end_request req, std::function<void(end_result)> done) {
    if (req.client_txn_version < txn_version_epoch_bump) {
        end_txn(std::move(req.ref), req.commit,
                [done = std::move(done)](std::error_code ec) { done(end_result{ec}); });
        return;
    }
    // Kafka's TransactionCoordinator.endTransaction for a TV2 client: the same epoch ends the
    // transaction, the epoch before the bump (or the exhausted one of the previous producer id)
    // is a retry of an end already decided.
    const txn_ref& ref = req.ref;
    auto fail = [&done](errc e) { done(end_result{make_error_code(e)}); };
    if (ref.transactional_id.empty()) {
        return fail(errc::invalid_request);
    }
    if (!_loaded) {
        return fail(errc::not_coordinator);
    }
    auto it = _txns.find(ref.transactional_id);
    if (it == _txns.end()) {
        return fail(errc::invalid_producer_id_mapping);
    }
    entry& e = it->second;
    const txn_metadata& m = e.meta;
    const bool bumped = m.client_txn_version >= txn_version_epoch_bump;
    const bool retry_on_overflow = bumped && m.previous_producer_id == ref.producer_id &&
                                   ref.producer_epoch == INT16_MAX - 1 && m.producer_epoch == 0;
    const bool retry_on_bump = bumped && m.producer_id == ref.producer_id &&
                               m.producer_epoch == ref.producer_epoch + 1;
    const bool same_epoch = ref.producer_epoch == m.producer_epoch;
    if (rotating_to(m, ref.producer_id)) {
        return fail(errc::concurrent_transactions);
    }
    // Kafka checks a pending transition first (before the producer id and the epoch): a write
    // in flight, or Prepare* whose markers are being written (its pending Complete*). So the
    // abort of the next transaction, sent with the epoch the commit answered before the
    // commit's markers are written, is retried (CONCURRENT_TRANSACTIONS), not fenced.
    if (e.pending || is_prepare(m.state)) {
        return fail(errc::concurrent_transactions);
    }
    if (m.producer_id != ref.producer_id && !retry_on_overflow) {
        return fail(errc::invalid_producer_id_mapping);
    }
    bool valid = false;
    switch (m.state) {
        case txn_state::ongoing:
        case txn_state::empty:
            valid = same_epoch;
            break;
        case txn_state::complete_commit:
        case txn_state::complete_abort:
            valid = retry_on_bump || retry_on_overflow || same_epoch;
            break;
        default:
            break;
    }
    if (!valid) {
        return fail(errc::producer_fenced);
    }
    const bool retry = retry_on_bump || retry_on_overflow;
    const end_result current{{}, m.producer_id, m.producer_epoch};
    switch (m.state) {
        case txn_state::ongoing:
            return prepare_v2(e, req, std::move(done));
        case txn_state::empty:
            // The abort of a transaction whose produce may not have reached its leader: the
            // bump fences such a write. Nothing to commit is an invalid commit (Kafka).
            return req.commit ? fail(errc::invalid_txn_state) : prepare_v2(e, req, std::move(done));
        case txn_state::complete_commit:
        case txn_state::complete_abort: {
            const bool committed = m.state == txn_state::complete_commit;
            if (retry) {
                return req.commit == committed ? done(current) : fail(errc::invalid_txn_state);
            }
            return req.commit ? fail(errc::invalid_txn_state) : prepare_v2(e, req, std::move(done));
        }
        default:
            return fail(errc::concurrent_transactions);
    }
}

void txn_coordinator::prepare_v2(entry& e, const end_request& req,
                                 std::function<void(end_result)> done) {
    const txn_metadata& m = e.meta;
    txn_metadata next = m;
    if (m.epoch_exhausted()) {
        // Kafka's isProducerEpochExhausted: the bump takes the last epoch; Complete* moves the
        // producer to a new id.
        if (req.fresh_producer_id < 0) {
            return done(end_result{make_error_code(errc::coordinator_not_available)});
        }
        next.next_producer_id = req.fresh_producer_id;
    }
    if (next.producer_epoch < INT16_MAX) {
        next.producer_epoch = static_cast<int16_t>(next.producer_epoch + 1);
    }
    next.last_producer_epoch = m.producer_epoch;
    next.client_txn_version = req.client_txn_version;
    if (m.state != txn_state::ongoing) {
        next.partitions.clear();
        next.start_ms = now_ms();
    }
    next.state = req.commit ? txn_state::prepare_commit : txn_state::prepare_abort;
    next.last_update_ms = now_ms();
    end_result answer{{}, next.producer_id, next.producer_epoch};
    if (next.next_producer_id != no_producer_id) {
        answer = end_result{{}, next.next_producer_id, 0};
    }
    std::string id = next.transactional_id;
    write(std::move(next), false,
          [this, id, answer, done = std::move(done)](std::error_code ec) {
              done(ec ? end_result{ec} : answer);
              if (!ec) {
                  send_markers(id);
              }
          });
}

void txn_coordinator::send_markers(const std::string& transactional_id) {
    auto it = _txns.find(transactional_id);
    if (it == _txns.end() || !is_prepare(it->second.meta.state)) {
        return;
    }
    const txn_metadata& m = it->second.meta;
    if (m.partitions.empty()) {
        // A TV2 end with no partition added: no marker to write.
        it->second.markers_done = true;
        complete(transactional_id);
        return;
    }
    marker_request req;
    req.transactional_id = transactional_id;
    req.producer_id = m.producer_id;
    req.producer_epoch = m.producer_epoch;
    req.commit = m.state == txn_state::prepare_commit;
    req.coordinator_epoch = _coordinator_epoch;
    req.partitions.assign(m.partitions.begin(), m.partitions.end());
    std::weak_ptr<uint64_t> alive = _generation;
    const uint64_t gen = *_generation;
    auto ours = [alive, gen] {
        auto g = alive.lock();
        return g && *g == gen;
    };
    _markers.send(std::move(req), ours, [this, ours, transactional_id](std::error_code ec) {
        if (!ours()) {
            return;  // the next coordinator of the partition finishes it
        }
        if (ec) {
            log::get("txn")->warn("markers of '{}' not sent: {}; retried at the next load",
                                  transactional_id, ec.message());
            return;
        }
        if (auto it = _txns.find(transactional_id); it != _txns.end()) {
            it->second.markers_done = true;
        }
        complete(transactional_id);
    });
}

void txn_coordinator::complete(const std::string& transactional_id) {
    auto it = _txns.find(transactional_id);
    if (it == _txns.end() || !is_prepare(it->second.meta.state) || it->second.pending) {
        return;
    }
    txn_metadata next = it->second.meta;
    next.state = next.state == txn_state::prepare_commit ? txn_state::complete_commit
                                                         : txn_state::complete_abort;
    next.partitions.clear();
    next.last_update_ms = now_ms();
    if (next.client_txn_version >= txn_version_epoch_bump &&
        next.next_producer_id != no_producer_id) {
        // TV2 epoch overflow: the markers carried the last epoch of the old id.
        next.previous_producer_id = next.producer_id;
        next.producer_id = next.next_producer_id;
        next.next_producer_id = no_producer_id;
        next.producer_epoch = 0;
        next.last_producer_epoch = no_producer_epoch;
    }
    write(std::move(next), false, [this, transactional_id](std::error_code ec) {
        auto it = _txns.find(transactional_id);
        if (it == _txns.end()) {
            return;
        }
        if (ec) {
            // The markers are written; poll() writes Complete* again (markers_done stays).
            log::get("txn")->warn("completing '{}' failed: {}; retrying", transactional_id,
                                  ec.message());
            return;
        }
        it->second.markers_done = false;
    });
}

result<txn_metadata> txn_coordinator::describe(const std::string& transactional_id) const {
    if (!_loaded) {
        return make_error_code(errc::not_coordinator);
    }
    auto it = _txns.find(transactional_id);
    if (it == _txns.end()) {
        return make_error_code(errc::transactional_id_not_found);
    }
    return it->second.meta;
}

std::vector<txn_metadata> txn_coordinator::list() const {
    std::vector<txn_metadata> out;
    if (_loaded) {
        for (const auto& [id, e] : _txns) {
            out.push_back(e.meta);
        }
    }
    return out;
}

void txn_coordinator::abort_timed_out() {
    const int64_t now = now_ms();
    std::vector<std::string> due;
    for (const auto& [id, e] : _txns) {
        if (e.meta.state == txn_state::ongoing && !e.pending &&
            e.meta.start_ms + e.meta.timeout_ms < now) {
            due.push_back(id);
        }
    }
    for (const auto& id : due) {
        auto it = _txns.find(id);
        if (it == _txns.end()) {
            continue;
        }
        log::get("txn")->info("aborting '{}': open past its timeout of {} ms", id,
                              it->second.meta.timeout_ms);
        fence_and_abort(it->second, [id, counters = _counters](std::error_code ec) {
            if (ec) {
                log::get("txn")->warn("aborting timed-out '{}' failed: {}", id, ec.message());
            } else if (counters != nullptr) {
                counters->timed_out.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
}

void txn_coordinator::count(std::optional<txn_state> from, std::optional<txn_state> to) {
    if (_counters == nullptr) {
        return;
    }
    const auto open = [](std::optional<txn_state> s) {
        return s && (*s == txn_state::ongoing || is_prepare(*s) ||
                     *s == txn_state::prepare_epoch_fence);
    };
    const int64_t delta = int64_t(open(to)) - int64_t(open(from));
    if (delta != 0) {
        _counters->ongoing.fetch_add(delta, std::memory_order_relaxed);
    }
    // A transaction ends when its Complete* state is written (a load finds it already ended).
    if (from && to && *from != *to) {
        if (*to == txn_state::complete_commit) {
            _counters->committed.fetch_add(1, std::memory_order_relaxed);
        } else if (*to == txn_state::complete_abort) {
            _counters->aborted.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

void txn_coordinator::expire_idle() {
    const int64_t now = now_ms();
    std::vector<txn_metadata> due;
    for (const auto& [id, e] : _txns) {
        if (is_complete_or_empty(e.meta.state) && !e.pending &&
            e.meta.last_update_ms + _config.id_expiration_ms <= now) {
            due.push_back(e.meta);
        }
    }
    for (auto& m : due) {
        write(std::move(m), true, [](std::error_code) {});  // kept if the tombstone failed
    }
}

void txn_coordinator::poll() {
    if (!_loaded) {
        return;
    }
    const int64_t now = now_ms();
    if (now >= _next_abort_check_ms) {
        _next_abort_check_ms = now + _config.abort_check_interval_ms;
        abort_timed_out();
        std::vector<std::string> retry;
        for (const auto& [id, e] : _txns) {
            if (e.markers_done && !e.pending && is_prepare(e.meta.state)) {
                retry.push_back(id);
            }
        }
        for (const auto& id : retry) {
            complete(id);
        }
    }
    if (now >= _next_expire_check_ms) {
        _next_expire_check_ms = now + _config.expire_check_interval_ms;
        expire_idle();
    }
}

std::optional<time_ms> txn_coordinator::next_deadline() const {
    if (!_loaded) {
        return std::nullopt;
    }
    return time_ms(std::min(_next_abort_check_ms, _next_expire_check_ms));
}

}  // namespace spool::broker::txn
