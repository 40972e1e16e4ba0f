#pragma once

// The sink behind every Spool logger: a thread that logs only formats the line and queues it;
// one writer thread ("log-writer") writes the queued lines to the file descriptor. A thread
// serving requests must never wait for its log: a write() to a log file on ext4 waits for the
// journal whenever it updates the file's mtime during a commit (103 ms measured on a shard
// during a CreateTopics/DeleteTopics loop, where each topic logs several lines), and a pipe to a
// container runtime blocks once full.
//
// Bounded: at most max_queued_bytes wait; a line that does not fit is dropped and counted, and
// the writer reports how many were dropped once it catches up (a stuck stderr never stalls the
// broker nor grows its memory). flush() waits, bounded, until what was logged before it is
// written: call it before the process ends without unwinding (_Exit, terminate).
// Colours (as spdlog's stderr_color sink) when the descriptor is a terminal.
// Why not spdlog's async_logger: Debian's spdlog 1.10 bounds its queue in messages, not bytes,
// and when full either blocks the caller or overruns the oldest queued lines; here the caller
// never blocks, memory is bounded in bytes, and the newest lines are the ones dropped, reported.
//
// Lifecycle: the constructor starts the writer; the destructor writes what is queued and joins.
// Threading: every member from any thread.

#include <spdlog/sinks/sink.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace spool::log {

class queued_log_sink final : public spdlog::sinks::sink {
public:
    explicit queued_log_sink(int fd, size_t max_queued_bytes = 8u << 20);
    ~queued_log_sink() override;
    queued_log_sink(const queued_log_sink&) = delete;
    queued_log_sink& operator=(const queued_log_sink&) = delete;

    void log(const spdlog::details::log_msg& msg) override;
    // Waits until every line queued before the call is written, at most 2 s.
    void flush() override;
    void set_pattern(const std::string& pattern) override;
    void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

    // Lines dropped because the queue was full (since construction).
    uint64_t dropped() const;
    // Waits until every line queued before the call is written, at most `timeout`; false if
    // the writer did not get there in time (a descriptor that does not take the bytes).
    bool wait_written(std::chrono::milliseconds timeout);

private:
    void run();
    void append_formatted(const spdlog::details::log_msg& msg);

    const int _fd;
    const size_t _max_queued_bytes;
    const bool _colour;
    mutable std::mutex _mu;  // guards what follows; never held across a write()
    std::condition_variable _work;
    std::condition_variable _written_cv;
    std::unique_ptr<spdlog::formatter> _formatter;
    std::string _queued;
    uint64_t _queued_seq = 0;   // lines queued so far
    uint64_t _written_seq = 0;  // lines written so far
    uint64_t _dropped = 0;
    uint64_t _dropped_reported = 0;
    bool _stopping = false;
    std::thread _writer;  // last: started once everything above exists
};

// Flushes the sink behind every log::get() logger (stderr): waits, at most 2 s, until every line
// logged so far is written. Before a process ends without unwinding (std::_Exit,
// std::terminate), which would lose the lines still queued.
void flush();

}  // namespace spool::log
