#include "tests/fuzz/fuzz_session.h"

#include "tests/fuzz/request_clamps.h"

#include <cstdio>
#include <cstdlib>

namespace spool::tests::fuzz {

std::vector<std::vector<uint8_t>> split_frames(std::span<const uint8_t> input) {
    std::vector<std::vector<uint8_t>> frames;
    size_t pos = 0;
    while (input.size() - pos >= 4) {
        const uint8_t* p = input.data() + pos;
        auto size = static_cast<int32_t>((uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
                                         (uint32_t(p[2]) << 8) | uint32_t(p[3]));
        if (size < 0) {
            break;
        }
        pos += 4;
        size_t n = std::min(size_t(size), input.size() - pos);
        frames.emplace_back(input.begin() + static_cast<ptrdiff_t>(pos),
                            input.begin() + static_cast<ptrdiff_t>(pos + n));
        pos += n;
    }
    return frames;
}

std::vector<uint8_t> join_frames(const std::vector<std::vector<uint8_t>>& frames) {
    std::vector<uint8_t> out;
    for (const auto& f : frames) {
        auto n = static_cast<uint32_t>(f.size());
        out.insert(out.end(), {uint8_t(n >> 24), uint8_t(n >> 16), uint8_t(n >> 8), uint8_t(n)});
        out.insert(out.end(), f.begin(), f.end());
    }
    return out;
}

broker_under_fuzz::broker_under_fuzz(session_limits limits) : _limits(limits) {
    start();
}

broker_under_fuzz::~broker_under_fuzz() {
    stop();
}

void broker_under_fuzz::start() {
    std::string error;
    _broker = in_process_broker::start(&error);
    if (!_broker) {
        std::fprintf(stderr, "cannot start the in-process broker: %s\n", error.c_str());
        std::abort();
    }
    _inputs_since_start = 0;
}

void broker_under_fuzz::stop() {
    if (!_broker) {
        return;
    }
    size_t unanswered = _broker->stop();
    const auto& t = _broker->totals();
    _totals.requests += t.requests;
    _totals.responses += t.responses;
    _totals.closed += t.closed;
    _totals.parked += t.parked;
    _broker.reset();
    if (unanswered > 0) {
        std::fprintf(stderr, "%zu parked request(s) never answered, even at shutdown\n",
                     unanswered);
        std::abort();
    }
}

void broker_under_fuzz::restart() {
    stop();
    ++_restarts;
    start();
}

size_t broker_under_fuzz::run(std::span<const uint8_t> input) {
    auto frames = split_frames(input);
    auto conn = _broker->open_connection();
    for (auto& f : frames) {
        if (!_broker->wait_ready(*conn, _limits.request_timeout)) {
            break;
        }
        _broker->submit(*conn, clamp_request(f, conn->member));
    }
    size_t sent = conn->requests.size();
    _broker->wait_idle(*conn, _limits.input_timeout);
    ++_inputs_since_start;
    return sent;
}

bool broker_under_fuzz::bound_state() {
    if (_inputs_since_start >= _limits.restart_every || _broker->in_flight() > _limits.max_parked ||
        _broker->topic_count() > _limits.max_topics ||
        _broker->partition_count() > _limits.max_partitions) {
        restart();
        return true;
    }
    return false;
}

}  // namespace spool::tests::fuzz
