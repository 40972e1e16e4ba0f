#pragma once

// A whole single broker inside the calling process, without sockets, for the request fuzzer and
// its replay test: the real shard pool, the embedded metadata store, the partition logs (in a
// fresh temporary directory), the group coordinator and the Kafka dispatcher, wired as
// broker/app does. A request frame goes through the same path a connection's does
// (kafka_dispatcher: header parse -> version check -> decode -> handler -> encode response) on
// one of the shards, and the caller waits for the answer with a bounded timeout.
//
//     auto broker = in_process_broker::start(&error);
//     auto conn = broker->open_connection();
//     broker->submit(*conn, frame);          // runs like request N of that connection
//     broker->wait_idle(*conn, timeout);     // every request answered, or the timeout passed
//
// Requests of one connection start in order, each once the previous one reached its ordering
// point (mark_ordered) or completed, as net::connection does. A request still running when the
// caller gives up stays in flight (it owns its state); stop() makes the broker answer every
// parked request (long polls see the stop flag, the coordinator answers parked JoinGroup and
// SyncGroup) and reports any request that never got an answer.
//
// Every response is checked as a client would read it: size prefix, correlation id, and a body
// that decodes at the request's version with nothing left over (file slices are read from the
// log files, as sendfile would send them). A broken check aborts: it is a bug.
//
// Lifecycle: start() -> submit/wait_idle ... -> stop() (or the destructor). Threading: all
// public methods from one thread (the fuzzer's); requests run on the shard threads.

#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/coordinator/clock.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/fetch_sessions.h"
#include "broker/handlers/kafka_dispatcher.h"
#include "broker/handlers/producer_ids.h"
#include "broker/handlers/services.h"
#include "broker/metadata/embedded/embedded_store.h"
#include "broker/runtime/shard_pool.h"
#include "tests/fuzz/request_clamps.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace spool::tests::fuzz {

namespace broker = spool::broker;

// One request in flight: shared by the caller and the coroutine that runs it.
struct request_state;

// The requests of one simulated client connection.
struct fuzz_connection {
    broker::net::connection_info info;
    std::vector<std::shared_ptr<request_state>> requests;
    bool closed = false;  // a request closed the connection: later ones are not sent
    membership member;    // from the last JoinGroup answer, for request_clamps.h
};

struct broker_totals {
    uint64_t requests = 0;
    uint64_t responses = 0;
    uint64_t closed = 0;  // requests that closed their connection (malformed, acks=0 error)
    uint64_t parked = 0;  // requests still running when the caller stopped waiting
};

class in_process_broker {
public:
    // Extra "key=value" overrides on top of the fuzzing defaults (see in_process_broker.cc).
    static std::unique_ptr<in_process_broker> start(std::string* error,
                                                    const std::vector<std::string>& overrides = {});
    ~in_process_broker();
    in_process_broker(const in_process_broker&) = delete;
    in_process_broker& operator=(const in_process_broker&) = delete;

    std::unique_ptr<fuzz_connection> open_connection();
    // Waits (at most `timeout`) until the connection's last request reached its ordering point,
    // as a connection does before reading the next frame; false when the connection closed.
    // Updates conn.member from an answered JoinGroup.
    bool wait_ready(fuzz_connection& conn, std::chrono::milliseconds timeout);
    // Starts the frame (size prefix removed) on the connection's shard.
    void submit(fuzz_connection& conn, std::vector<uint8_t> frame);
    // Waits until every request of the connection completed or `timeout` passed; returns how
    // many are still running (they are parked: left to finish on their own).
    size_t wait_idle(fuzz_connection& conn, std::chrono::milliseconds timeout);

    // Requests started and not yet completed, over every connection.
    size_t in_flight() const;
    // Topics and partitions in the metadata store (to bound state across fuzz inputs).
    size_t topic_count() const;
    size_t partition_count() const;
    const broker_totals& totals() const { return _totals; }

    // Stops the broker: answers every parked request, closes the logs, stops the shards and
    // removes the data directory. Returns the number of requests that were never answered.
    size_t stop();

private:
    in_process_broker() = default;
    std::string open(const std::vector<std::string>& overrides);

    std::filesystem::path _dir;
    std::unique_ptr<broker::config::broker_config> _config;
    std::unique_ptr<broker::metadata::embedded_store> _store;
    std::unique_ptr<broker::runtime::shard_pool> _pool;
    std::unique_ptr<broker::cluster::partition_manager> _partitions;
    std::unique_ptr<broker::handlers::producer_id_allocator> _producer_ids;
    std::unique_ptr<broker::handlers::fetch_session_cache> _fetch_sessions;
    broker::handlers::share_session_cache _share_sessions;
    broker::coordinator::system_clock _clock;
    std::unique_ptr<broker::coordinator::coordinator_service> _groups;
    std::unique_ptr<broker::handlers::services> _services;
    std::unique_ptr<broker::handlers::kafka_dispatcher> _dispatcher;
    bool _logs_open = false;
    bool _stopped = false;

    uint64_t _next_connection = 1;
    // Every request not yet seen complete (parked ones from earlier inputs included).
    std::vector<std::shared_ptr<request_state>> _unfinished;
    broker_totals _totals;
};

}  // namespace spool::tests::fuzz
