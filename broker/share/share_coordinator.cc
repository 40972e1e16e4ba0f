#include "broker/share/share_coordinator.h"

#include "broker/coordinator/errc.h"
#include "broker/share/errc.h"
#include "broker/share/record_codec.h"
#include "common/log.h"

namespace spool::broker::share {

namespace {

// What a failed append tells the data partition's leader (Kafka's ShareCoordinatorService): a
// partition led elsewhere now is NOT_COORDINATOR (it looks again); anything else (too few
// replicas, a timeout) is the retriable COORDINATOR_NOT_AVAILABLE.
std::error_code append_error(std::error_code ec) {
    if (ec == make_error_code(coordinator::errc::not_coordinator)) {
        return make_error_code(errc::not_coordinator);
    }
    return make_error_code(errc::coordinator_not_available);
}

}  // namespace

std::error_code share_coordinator::load() {
    unload();
    std::map<share_key, share_state> loaded;
    auto ec = _log.replay([&](std::span<const uint8_t> key,
                              std::optional<std::span<const uint8_t>> value) {
        auto k = decode_key(key);
        if (!k) {
            return;  // not a share-state record
        }
        if (!value) {
            loaded.erase(k.value().key);
            return;
        }
        if (k.value().type == record_type::snapshot) {
            auto s = decode_snapshot(*value);
            if (s) {
                loaded[k.value().key] = std::move(s).value();
                return;
            }
        } else if (auto it = loaded.find(k.value().key); it != loaded.end()) {
            if (!apply_update(it->second, *value)) {
                return;
            }
        } else {
            return;  // an update without its snapshot: Kafka skips it too
        }
        log::get("share")->warn("__share_group_state-{}: undecodable value for '{}' skipped",
                                _partition, k.value().key.coordinator_key());
    });
    if (ec) {
        return ec;
    }
    _states = std::move(loaded);
    _loaded = true;
    return {};
}

void share_coordinator::unload() {
    _loaded = false;
    ++*_generation;
    _states.clear();
}

const share_state* share_coordinator::find(const share_key& key) const {
    auto it = _states.find(key);
    return it == _states.end() ? nullptr : &it->second;
}

void share_coordinator::append(const share_key& key, std::optional<share_state> next,
                               done_fn done) {
    if (!_loaded) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    if (next) {
        const auto now = _clock.now().count();
        const auto* prev = find(key);
        next->create_timestamp = prev != nullptr ? prev->create_timestamp : now;
        next->write_timestamp = now;
        next->snapshot_epoch = prev != nullptr ? prev->snapshot_epoch + 1 : 0;
    }
    std::vector<coordinator::log_record> records;
    records.push_back({encode_key(key), next ? std::optional(encode_snapshot(*next))
                                             : std::nullopt});
    std::weak_ptr<uint64_t> alive = _generation;
    _log.append(std::move(records), [this, alive, gen = *_generation, key, next = std::move(next),
                                     done = std::move(done)](std::error_code ec) {
        auto g = alive.lock();
        if (!g || *g != gen) {
            done(make_error_code(errc::not_coordinator));  // unloaded meanwhile
            return;
        }
        if (ec) {
            done(append_error(ec));
            return;
        }
        if (next) {
            _states[key] = *next;
        } else {
            _states.erase(key);
        }
        done({});
    });
}

void share_coordinator::write(const share_key& key, share_state next, done_fn done) {
    if (!_loaded) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    if (const auto* cur = find(key)) {
        if (next.leader_epoch < cur->leader_epoch) {
            done(make_error_code(errc::fenced_leader_epoch));
            return;
        }
        if (next.state_epoch < cur->state_epoch) {
            done(make_error_code(errc::fenced_state_epoch));
            return;
        }
    }
    append(key, std::move(next), std::move(done));
}

void share_coordinator::read(const share_key& key, int32_t leader_epoch, read_fn done) {
    if (!_loaded) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    const auto* cur = find(key);
    if (cur == nullptr) {
        share_state none;  // start offset -1: not initialized
        done(none);
        return;
    }
    if (leader_epoch < cur->leader_epoch) {
        done(make_error_code(errc::fenced_leader_epoch));
        return;
    }
    if (leader_epoch == cur->leader_epoch) {
        done(*cur);
        return;
    }
    share_state next = *cur;
    next.leader_epoch = leader_epoch;
    append(key, next, [this, key, done = std::move(done)](std::error_code ec) {
        if (ec) {
            done(ec);
            return;
        }
        const auto* s = find(key);
        done(s != nullptr ? *s : share_state{});
    });
}

void share_coordinator::initialize(const share_key& key, int32_t state_epoch,
                                   int64_t start_offset, done_fn done) {
    share_state next;
    if (const auto* cur = find(key)) {
        next.leader_epoch = cur->leader_epoch;
    }
    next.state_epoch = state_epoch;
    next.start_offset = start_offset;
    append(key, std::move(next), std::move(done));
}

void share_coordinator::remove(const share_key& key, done_fn done) {
    if (_loaded && find(key) == nullptr) {
        done({});
        return;
    }
    append(key, std::nullopt, std::move(done));
}

}  // namespace spool::broker::share
