#include "broker/runtime/shard_pool.h"

#include "broker/runtime/cooperative_turn.h"
#include "broker/runtime/cpu_placement.h"
#include "common/log.h"
#include "common/queued_log_sink.h"

#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>

namespace spool::broker::runtime {

namespace {
thread_local std::optional<size_t> this_shard;
thread_local const shard_pool* this_pool = nullptr;

// io_context::run(), with a yield after every `turn` of running without a wait: run_one() waits
// for work when there is none, and its handler starts a turn; poll_one() then runs what is ready
// without waiting, and returns 0 once nothing is, so the next run_one() waits again.
void run_in_turns(asio::io_context& ctx, std::chrono::microseconds turn) {
    cooperative_turn::enable(turn);
    while (ctx.run_one() > 0) {
        cooperative_turn::start();
        while (ctx.poll_one() > 0) {
            cooperative_turn::after_work();
        }
    }
}
}  // namespace

shard_pool::shard_pool(size_t count, std::vector<int> cpus, std::chrono::microseconds turn)
    : _cpus(std::move(cpus)), _turn(turn) {
    if (count == 0) {
        count = default_shard_count(read_cpu_budget());
    }
    if (!_cpus.empty() && _cpus.size() != count) {
        log::get("runtime")->warn("{} CPUs given for {} shards: shards not pinned", _cpus.size(),
                                  count);
        _cpus.clear();
    }
    for (size_t i = 0; i < count; ++i) {
        auto s = std::make_unique<shard>();
        // Hint 1: each io_context is run by exactly one thread, so asio may skip locking.
        s->ctx = std::make_unique<asio::io_context>(1);
        s->mailbox = std::make_unique<shard_mailbox>(*s->ctx);
        _shards.push_back(std::move(s));
    }
}

shard_pool::~shard_pool() {
    stop();
}

void shard_pool::start() {
    if (_running) {
        return;
    }
    _running = true;
    for (size_t i = 0; i < _shards.size(); ++i) {
        auto& s = *_shards[i];
        s.work.emplace(s.ctx->get_executor());
        s.thread = std::thread([this, ctx = s.ctx.get(), mailbox = s.mailbox.get(), i] {
            this_shard = i;
            this_pool = this;
            std::string name = "shard-" + std::to_string(i);
            pthread_setname_np(pthread_self(), name.c_str());
            if (!_cpus.empty() && !pin_this_thread(_cpus[i])) {
                log::get("runtime")->warn("shard {} could not be pinned to CPU {}: {}", i, _cpus[i],
                                          std::strerror(errno));
            }
            try {
                mailbox->start();
                run_in_turns(*ctx, _turn);
            } catch (const std::exception& e) {
                log::get("net")->critical("shard {} stopped by an exception: {}", i, e.what());
                log::flush();
                std::terminate();
            }
        });
    }
}

void shard_pool::stop() {
    if (!_running) {
        return;
    }
    _running = false;
    for (auto& s : _shards) {
        s->work.reset();
        s->ctx->stop();
    }
    for (auto& s : _shards) {
        if (s->thread.joinable()) {
            s->thread.join();
        }
    }
}

size_t shard_pool::shard_for(std::string_view topic, int32_t partition) const {
    // FNV-1a over the name picks the topic's first shard; consecutive partitions then go to
    // consecutive shards so a topic's partitions spread evenly.
    uint64_t h = 1469598103934665603ULL;
    for (char c : topic) {
        h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
    }
    return static_cast<size_t>((h + static_cast<uint32_t>(partition)) % _shards.size());
}

std::optional<size_t> shard_pool::current_shard() {
    return this_shard;
}

const shard_pool* shard_pool::current_pool() {
    return this_pool;
}

}  // namespace spool::broker::runtime
