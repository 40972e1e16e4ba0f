#include "broker/replication/share_partition.h"

#include <algorithm>

namespace spool::broker::replication {

void share_partition::release(record& r, const share_limits& limits) {
    ++_version;
    if (r.state == share_record_state::acquired) {
        --_acquired;
    }
    if (r.delivery_count >= limits.delivery_count_limit) {
        r.state = share_record_state::archived;
        ++_counters.delivery_limit_archived;
    } else {
        r.state = share_record_state::available;
    }
    r.member.clear();
    r.lock_deadline = 0;
}

void share_partition::advance_start(bool changes) {
    while (!_in_flight.empty()) {
        auto it = _in_flight.begin();
        if (it->first > _start) {
            _start = it->first;  // a gap
        }
        if ((it->second.state != share_record_state::acknowledged &&
             it->second.state != share_record_state::archived) ||
            it->second.pending != 0) {
            return;  // unfinished, or finished by an acknowledgement a write may roll back
        }
        _start = it->first + 1;
        _in_flight.erase(it);
        if (changes) {
            ++_version;
        }
    }
    _start = _end;
}

void share_partition::expire_locks(int64_t now_ms, const share_limits& limits) {
    if (_acquired == 0) {
        return;
    }
    for (auto& [o, r] : _in_flight) {
        if (r.state == share_record_state::acquired && r.lock_deadline <= now_ms) {
            ++_counters.lock_expiries;
            release(r, limits);
        }
    }
    advance_start();
}

void share_partition::log_start_moved(int64_t log_start) {
    if (log_start <= _start) {
        return;
    }
    for (auto it = _in_flight.begin(); it != _in_flight.end() && it->first < log_start;) {
        if (it->second.state == share_record_state::acquired) {
            --_acquired;
        }
        if (it->second.pending != 0) {
            --_pending;
        }
        it = _in_flight.erase(it);
    }
    _start = log_start;
    _end = std::max(_end, log_start);
    ++_version;
    advance_start();
}

std::optional<int64_t> share_partition::next_fetch_offset(const share_limits& limits) const {
    if (static_cast<int64_t>(_acquired) >= limits.max_record_locks) {
        return std::nullopt;
    }
    for (const auto& [o, r] : _in_flight) {
        if (r.state == share_record_state::available) {
            return o;
        }
    }
    return _end;
}

int32_t share_partition::acquire_batch(int64_t first, int64_t last, bool control,
                                       const std::string& member, int64_t now_ms,
                                       const share_limits& limits, int32_t budget,
                                       std::vector<share_acquired>& out) {
    int32_t taken = 0;
    auto take = [&](int64_t o, record& r) {
        r.state = share_record_state::acquired;
        ++r.delivery_count;
        ++_counters.deliveries;
        if (r.delivery_count > 1) {
            ++_counters.redeliveries;
        }
        r.member = member;
        r.lock_deadline = now_ms + limits.lock_duration_ms;
        ++_acquired;
        ++taken;
        if (!out.empty() && out.back().last + 1 == o && out.back().delivery_count == r.delivery_count) {
            out.back().last = o;
        } else {
            out.push_back({o, o, r.delivery_count});
        }
    };
    for (int64_t o = std::max(first, _start); o <= last; ++o) {
        const bool room = taken < budget &&
                          static_cast<int64_t>(_acquired) < limits.max_record_locks;
        if (o >= _end) {
            if (control) {
                _end = o + 1;  // never delivered: a gap
                continue;
            }
            if (!room) {
                break;
            }
            _end = o + 1;
            take(o, _in_flight[o]);
            continue;
        }
        auto it = _in_flight.find(o);
        if (it != _in_flight.end() && it->second.state == share_record_state::available && room) {
            take(o, it->second);
        }
    }
    advance_start();
    return taken;
}

std::optional<uint64_t> share_partition::acknowledge(const std::string& member,
                                                     std::span<const share_ack_batch> batches,
                                                     const share_limits& limits) {
    for (const auto& b : batches) {
        if (b.last < b.first || b.types.empty() ||
            (b.types.size() != 1 && static_cast<int64_t>(b.types.size()) != b.last - b.first + 1)) {
            return std::nullopt;
        }
        for (size_t i = 0; i < b.types.size(); ++i) {
            if (b.types[i] < 0 || b.types[i] > 3) {
                return std::nullopt;
            }
        }
        for (int64_t o = b.first; o <= b.last; ++o) {
            auto it = _in_flight.find(o);
            if (it == _in_flight.end()) {
                // A gap the client acknowledges as one is fine; a record it never held is not.
                const auto t = b.types.size() == 1 ? b.types[0]
                                                   : b.types[static_cast<size_t>(o - b.first)];
                if (t == static_cast<int8_t>(share_ack_type::gap) && o >= _start && o < _end) {
                    continue;
                }
                return std::nullopt;
            }
            if (it->second.state != share_record_state::acquired || it->second.member != member) {
                return std::nullopt;
            }
        }
    }
    const uint64_t version = ++_version;
    for (const auto& b : batches) {
        for (int64_t o = b.first; o <= b.last; ++o) {
            auto it = _in_flight.find(o);
            if (it == _in_flight.end()) {
                continue;
            }
            const auto t = static_cast<share_ack_type>(
                b.types.size() == 1 ? b.types[0] : b.types[static_cast<size_t>(o - b.first)]);
            auto& r = it->second;
            if (r.state != share_record_state::acquired) {
                continue;  // named twice in one request: the first type holds
            }
            if (t == share_ack_type::release) {
                ++_counters.released;
                release(r, limits);
                continue;
            }
            // ACCEPT, REJECT, GAP: finished, pending until a write carries it (the holder and
            // its lock kept for a rollback).
            --_acquired;
            ++_pending;
            r.state = t == share_ack_type::accept ? share_record_state::acknowledged
                                                   : share_record_state::archived;
            r.pending = version;
            r.pending_type = t;
        }
    }
    advance_start();
    return version;
}

void share_partition::persist_ended(uint64_t v, int16_t error) {
    const bool ok = error == 0;
    if (ok) {
        _durable = std::max(_durable, v);
    }
    if (_pending != 0) {
        bool rolled_back = false;
        for (auto& [o, r] : _in_flight) {
            if (r.pending == 0 || r.pending > v) {
                continue;
            }
            r.pending = 0;
            --_pending;
            if (ok) {
                if (r.pending_type == share_ack_type::accept) {
                    ++_counters.accepted;
                } else if (r.pending_type == share_ack_type::reject) {
                    ++_counters.rejected;
                }
                r.member.clear();
                r.lock_deadline = 0;
            } else {
                r.state = share_record_state::acquired;
                ++_acquired;
                rolled_back = true;
            }
        }
        if (rolled_back) {
            ++_version;  // the coordinator may hold them finished (a reply lost): rewrite
        }
        // Past what is now committed: the same state as written (a restore moves the start
        // past a finished prefix too), so no change to write.
        advance_start(false);
    }
    _outcomes.emplace_back(v, error);
    constexpr size_t kept = 64;
    if (_outcomes.size() > kept) {
        _forgotten_through = _outcomes.front().first;
        _outcomes.erase(_outcomes.begin());
    }
}

std::optional<int16_t> share_partition::outcome_of(uint64_t v) const {
    if (v <= _forgotten_through) {
        // Settled by a write no longer remembered: unknown, so failed (the member may
        // acknowledge again; at worst a record is delivered once more).
        constexpr int16_t coordinator_not_available = 15;
        return coordinator_not_available;
    }
    auto it = std::lower_bound(_outcomes.begin(), _outcomes.end(), v,
                               [](const auto& e, uint64_t x) { return e.first < x; });
    if (it == _outcomes.end()) {
        return std::nullopt;
    }
    return it->second;
}

void share_partition::release_member(const std::string& member, const share_limits& limits) {
    if (_acquired == 0) {
        return;
    }
    for (auto& [o, r] : _in_flight) {
        if (r.state == share_record_state::acquired && r.member == member) {
            release(r, limits);
        }
    }
    advance_start();
}

int64_t share_partition::unfinished(int64_t high_watermark) const {
    int64_t n = std::max<int64_t>(0, high_watermark - _end);
    for (const auto& [o, r] : _in_flight) {
        if (o < high_watermark && (r.state == share_record_state::available ||
                                   r.state == share_record_state::acquired)) {
            ++n;
        }
    }
    return n;
}

int64_t share_partition::delivery_complete_count() const {
    // Everything in [start, end) is in flight or a gap; the in-flight records not finished are
    // unfinished(end)'s count.
    return (_end - _start) - unfinished(_end);
}

share_partition share_partition::restore(const share_persisted& p) {
    share_partition sp(p.start_offset, p.state_epoch);
    for (const auto& b : p.batches) {
        sp._end = std::max(sp._end, b.last + 1);
        if (b.state == static_cast<int8_t>(share_record_state::archived) &&
            b.delivery_count == 0) {
            continue;  // a gap: absent offsets in [start, end) are finished
        }
        for (int64_t o = std::max(b.first, p.start_offset); o <= b.last; ++o) {
            auto& r = sp._in_flight[o];
            // ACQUIRED (Kafka may have persisted one) comes back AVAILABLE.
            r.state = b.state == static_cast<int8_t>(share_record_state::acknowledged) ||
                              b.state == static_cast<int8_t>(share_record_state::archived)
                          ? static_cast<share_record_state>(b.state)
                          : share_record_state::available;
            r.delivery_count = b.delivery_count;
            sp._end = std::max(sp._end, o + 1);
        }
    }
    sp.advance_start();
    sp._version = 0;
    sp._durable = 0;
    return sp;
}

share_persisted share_partition::persisted() const {
    share_persisted p;
    p.state_epoch = _state_epoch;
    p.start_offset = _start;
    p.delivery_complete_count = static_cast<int32_t>(delivery_complete_count());
    auto add = [&](int64_t first, int64_t last, share_record_state st, int16_t count) {
        const auto state = static_cast<int8_t>(st == share_record_state::acquired
                                                   ? share_record_state::available
                                                   : st);
        if (!p.batches.empty() && p.batches.back().last + 1 == first &&
            p.batches.back().state == state && p.batches.back().delivery_count == count) {
            p.batches.back().last = last;
        } else {
            p.batches.push_back({first, last, state, count});
        }
    };
    int64_t next = _start;
    for (const auto& [o, r] : _in_flight) {
        if (next < o) {
            add(next, o - 1, share_record_state::archived, 0);  // a gap: finished
        }
        add(o, o, r.state, r.delivery_count);
        next = o + 1;
    }
    if (next < _end) {
        add(next, _end - 1, share_record_state::archived, 0);
    }
    return p;
}

std::optional<std::pair<share_record_state, int16_t>> share_partition::state_of(int64_t o) const {
    auto it = _in_flight.find(o);
    if (it == _in_flight.end()) {
        return std::nullopt;
    }
    return std::pair{it->second.state, it->second.delivery_count};
}

}  // namespace spool::broker::replication
