#include "tests/fuzz/in_process_broker.h"

#include "common/log.h"
#include "tests/fuzz/response_check.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace spool::tests::fuzz {

namespace asio = boost::asio;
namespace net = broker::net;
namespace runtime = broker::runtime;

struct request_state {
    net::connection_info connection;
    std::vector<uint8_t> frame_copy;  // what the response is checked against
    std::unique_ptr<net::request_context> ctx;
    std::mutex mutex;
    std::condition_variable changed;
    bool ordered = false;
    bool done = false;
    std::optional<membership> joined;  // a JoinGroup answer's member id
    net::request_outcome outcome = net::request_outcome::respond;
};

namespace {

// What the fuzzer's broker differs in from the defaults, so that no request parks for long and
// one input cannot fill the disk: no initial rebalance delay, short session timeouts (the
// fuzzer clamps a request's timeouts to just above this maximum, see request_clamps.h), small
// segments and indexes, few __consumer_offsets and __transaction_state partitions (created by
// the first FindCoordinator for a transaction), two shards so requests hop.
std::vector<std::string> fuzzing_defaults(const std::filesystem::path& dir) {
    return {
        "log.dirs=" + dir.string(),           "spool.cores=2",
        "offsets.topic.num.partitions=4",     "offsets.topic.segment.bytes=65536",
        "transaction.state.log.num.partitions=4",
        "transaction.state.log.segment.bytes=65536",
        "group.initial.rebalance.delay.ms=0", "group.min.session.timeout.ms=10",
        "group.max.session.timeout.ms=250",   "log.segment.bytes=65536",
        "log.index.size.max.bytes=65536",     "spool.shutdown.timeout.ms=1000",
    };
}

// Marks the request answered, or never answered when its coroutine is destroyed unfinished
// (the shard pool stopped while it waited for something that never came).
struct completion {
    std::shared_ptr<request_state> state;
    ~completion() {
        std::lock_guard lock(state->mutex);
        state->ordered = true;
        state->changed.notify_all();
    }
};

asio::awaitable<void> run_request(broker::handlers::kafka_dispatcher* dispatcher,
                                  std::shared_ptr<request_state> s) {
    completion on_exit{s};
    net::handled h;
    try {
        h = co_await dispatcher->dispatch(*s->ctx);
    } catch (const std::exception& e) {
        // A connection would log this and close; a handler must answer bad input instead.
        std::fprintf(stderr, "request threw: %s\n", e.what());
        std::abort();
    }
    s->ctx->mark_ordered();
    if (h.outcome == net::request_outcome::respond) {
        if (auto err = check_response(s->frame_copy, h.response); !err.empty()) {
            std::fprintf(stderr, "bad response: %s\n", err.c_str());
            std::abort();
        }
    }
    auto joined = joined_member(s->frame_copy, h.response);
    std::lock_guard lock(s->mutex);
    s->joined = std::move(joined);
    s->outcome = h.outcome;
    s->done = true;
    s->changed.notify_all();
}

// Waits until pred() holds or the timeout passes; pred runs under the state's mutex.
template <class Pred>
bool wait_for(request_state& s, std::chrono::milliseconds timeout, Pred pred) {
    std::unique_lock lock(s.mutex);
    return s.changed.wait_for(lock, timeout, pred);
}

}  // namespace

std::unique_ptr<in_process_broker> in_process_broker::start(
    std::string* error, const std::vector<std::string>& overrides) {
    std::unique_ptr<in_process_broker> b(new in_process_broker());
    *error = b->open(overrides);
    if (!error->empty()) {
        return nullptr;
    }
    return b;
}

std::string in_process_broker::open(const std::vector<std::string>& overrides) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "spool-fuzz-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
        return "cannot create a temporary directory";
    }
    _dir = tmpl;
    auto all = fuzzing_defaults(_dir);
    all.insert(all.end(), overrides.begin(), overrides.end());
    std::string error;
    _config = broker::config::broker_config::from_yaml_text("", all, &error);
    if (!_config) {
        return error;
    }
    auto store = broker::metadata::embedded_store::open(_dir);
    if (!store) {
        return "metadata store: " + store.error().message();
    }
    _store = std::move(store).value();
    // The same wiring as broker/app's composition root, minus sockets, HTTP and metrics.
    _pool = std::make_unique<runtime::shard_pool>(
        static_cast<size_t>(_config->get(broker::config::keys::spool_cores)));
    _store->attach(*_pool);
    _pool->start();
    _partitions = std::make_unique<broker::cluster::partition_manager>(*_pool, *_config, _dir);
    if (auto r = _partitions->open_all(*_store->snapshot()); !r) {
        return "logs: " + r.error().message();
    }
    _logs_open = true;
    _producer_ids = std::make_unique<broker::handlers::producer_id_allocator>(*_store, *_pool);
    _fetch_sessions = std::make_unique<broker::handlers::fetch_session_cache>(
        static_cast<size_t>(
            _config->get(broker::config::keys::max_incremental_fetch_session_cache_slots)),
        _pool->shard_count());
    _services = std::make_unique<broker::handlers::services>(
        broker::handlers::services{*_config,
                                   *_store,
                                   *_partitions,
                                   *_pool,
                                   *_producer_ids,
                                   *_fetch_sessions,
                                   &_share_sessions,
                                   static_cast<int32_t>(_config->node_id()),
                                   {"localhost", 9092},
                                   _dir.string()});
    _groups = std::make_unique<broker::coordinator::coordinator_service>(
        *_store, *_partitions, broker::coordinator::service_config_from(*_config), _clock);
    if (auto ec = _groups->start_blocking()) {
        return "group coordinator: " + ec.message();
    }
    _services->groups = _groups.get();
    _dispatcher = std::make_unique<broker::handlers::kafka_dispatcher>(*_services);
    return {};
}

in_process_broker::~in_process_broker() {
    (void)stop();
}

std::unique_ptr<fuzz_connection> in_process_broker::open_connection() {
    auto c = std::make_unique<fuzz_connection>();
    c->info.id = _next_connection++;
    c->info.shard = c->info.id % _pool->shard_count();
    c->info.peer = "127.0.0.1:" + std::to_string(40000 + c->info.id % 20000);
    return c;
}

bool in_process_broker::wait_ready(fuzz_connection& conn, std::chrono::milliseconds timeout) {
    if (conn.closed || _stopped) {
        return false;
    }
    if (!conn.requests.empty()) {
        auto& prev = *conn.requests.back();
        wait_for(prev, timeout, [&] { return prev.ordered || prev.done; });
        std::lock_guard lock(prev.mutex);
        if (prev.joined) {
            conn.member = *prev.joined;
        }
        if (prev.done && prev.outcome != net::request_outcome::respond &&
            prev.outcome != net::request_outcome::no_response) {
            conn.closed = true;  // the connection closes after that request: nothing more is read
        }
    }
    return !conn.closed;
}

void in_process_broker::submit(fuzz_connection& conn, std::vector<uint8_t> frame) {
    auto s = std::make_shared<request_state>();
    s->connection = conn.info;
    s->frame_copy = frame;
    request_state* raw = s.get();
    s->ctx = std::make_unique<net::request_context>(s->connection, std::move(frame), [raw] {
        std::lock_guard lock(raw->mutex);
        raw->ordered = true;
        raw->changed.notify_all();
    });
    ++_totals.requests;
    conn.requests.push_back(s);
    _unfinished.push_back(s);
    asio::co_spawn(_pool->executor(conn.info.shard), run_request(_dispatcher.get(), s),
                   asio::detached);
}

size_t in_process_broker::wait_idle(fuzz_connection& conn, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    size_t running = 0;
    for (auto& s : conn.requests) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        bool done =
            wait_for(*s, std::max(left, std::chrono::milliseconds(0)), [&] { return s->done; });
        if (!done) {
            ++running;
            continue;
        }
        std::lock_guard lock(s->mutex);
        ++_totals.responses;
        if (s->outcome == net::request_outcome::close ||
            s->outcome == net::request_outcome::close_malformed) {
            ++_totals.closed;
        }
    }
    _totals.parked += running;
    conn.requests.clear();
    std::erase_if(_unfinished, [](const std::shared_ptr<request_state>& s) {
        std::lock_guard lock(s->mutex);
        return s->done;
    });
    return running;
}

size_t in_process_broker::in_flight() const {
    size_t n = 0;
    for (const auto& s : _unfinished) {
        std::lock_guard lock(s->mutex);
        n += s->done ? 0 : 1;
    }
    return n;
}

size_t in_process_broker::topic_count() const {
    return _store ? _store->snapshot()->topics.size() : 0;
}

size_t in_process_broker::partition_count() const {
    size_t n = 0;
    if (_store) {
        for (const auto& [name, t] : _store->snapshot()->topics) {
            n += t.partitions.size();
        }
    }
    return n;
}

size_t in_process_broker::stop() {
    if (_stopped) {
        return 0;
    }
    _stopped = true;
    // The order of broker_app::stop(), with this fixture's requests in place of connections.
    if (_partitions) {
        _partitions->begin_stop();  // long polls answer at once
    }
    auto grace = _config ? _config->get(broker::config::keys::spool_shutdown_timeout_ms)
                         : std::chrono::milliseconds(1000);
    for (auto& s : _unfinished) {
        wait_for(*s, grace, [&] { return s->done; });
    }
    if (_groups) {
        _groups->stop_blocking();  // answers parked JoinGroup/SyncGroup
    }
    for (auto& s : _unfinished) {
        wait_for(*s, grace, [&] { return s->done; });
    }
    if (_partitions && _logs_open) {
        _partitions->close_all();
        _logs_open = false;
    }
    if (_store) {
        _store->stop();  // as broker_app: a commit in flight finishes while the shards run
    }
    if (_pool) {
        _pool->stop();
    }
    _dispatcher.reset();
    _groups.reset();
    _services.reset();
    _partitions.reset();
    // The id allocator's per-shard timers belong to the pool's io_contexts: gone before them.
    _producer_ids.reset();
    _fetch_sessions.reset();
    _pool.reset();  // destroys the frames of requests that never completed
    _store.reset();
    size_t unanswered = 0;
    for (auto& s : _unfinished) {
        std::lock_guard lock(s->mutex);
        unanswered += s->done ? 0 : 1;
    }
    _unfinished.clear();
    if (!_dir.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(_dir, ec);
    }
    return unanswered;
}

}  // namespace spool::tests::fuzz
