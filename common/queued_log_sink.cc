#include "common/queued_log_sink.h"

#include <pthread.h>
#include <sched.h>
#include <spdlog/pattern_formatter.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace spool::log {

namespace {

// spdlog's stderr_color sink's colours, by level.
std::string_view colour_of(spdlog::level::level_enum level) {
    switch (level) {
        case spdlog::level::trace:
            return "\033[37m";
        case spdlog::level::debug:
            return "\033[36m";
        case spdlog::level::info:
            return "\033[32m";
        case spdlog::level::warn:
            return "\033[33m\033[1m";
        case spdlog::level::err:
            return "\033[31m\033[1m";
        case spdlog::level::critical:
            return "\033[1m\033[41m";
        default:
            return "";
    }
}
constexpr std::string_view colour_reset = "\033[m";

// Writes all of text; false when the descriptor refuses it (closed, EBADF, ...).
bool write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

}  // namespace

queued_log_sink::queued_log_sink(int fd, size_t max_queued_bytes)
    : _fd(fd),
      _max_queued_bytes(max_queued_bytes),
      _colour(::isatty(fd) == 1),
      _formatter(std::make_unique<spdlog::pattern_formatter>()),
      _writer([this] { run(); }) {}

queued_log_sink::~queued_log_sink() {
    {
        std::lock_guard lock(_mu);
        _stopping = true;
    }
    _work.notify_one();
    _writer.join();
}

void queued_log_sink::append_formatted(const spdlog::details::log_msg& msg) {
    spdlog::memory_buf_t line;
    _formatter->format(msg, line);
    std::string_view text(line.data(), line.size());
    if (_queued.size() + text.size() > _max_queued_bytes) {
        ++_dropped;
        return;
    }
    if (_colour && msg.color_range_end > msg.color_range_start) {
        _queued.append(text.substr(0, msg.color_range_start));
        _queued.append(colour_of(msg.level));
        _queued.append(
            text.substr(msg.color_range_start, msg.color_range_end - msg.color_range_start));
        _queued.append(colour_reset);
        _queued.append(text.substr(msg.color_range_end));
    } else {
        _queued.append(text);
    }
    ++_queued_seq;
}

void queued_log_sink::log(const spdlog::details::log_msg& msg) {
    bool was_empty = false;
    {
        std::lock_guard lock(_mu);
        was_empty = _queued.empty();
        append_formatted(msg);
    }
    // Lines queued behind others are the writer's already: it is writing, or was woken by the
    // first of them and takes the whole queue when it runs.
    if (was_empty) {
        _work.notify_one();
    }
}

void queued_log_sink::run() {
    pthread_setname_np(pthread_self(), "log-writer");
    // SCHED_BATCH: a woken writer does not preempt the thread that logged (a shard, in the middle
    // of a request) but waits for an idle core or the next tick; it keeps its full share of the
    // CPU, so the queue still drains under load. As SCHED_OTHER it preempted the shards about 50
    // times a second during a CreateTopics/DeleteTopics loop (perf sched_switch, issue #14 item
    // 7). A failure (some sandboxes) leaves SCHED_OTHER.
    sched_param param{};
    (void)::pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
    std::string batch;
    std::unique_lock lock(_mu);
    for (;;) {
        _work.wait(lock,
                   [&] { return _stopping || !_queued.empty() || _dropped != _dropped_reported; });
        if (_queued.empty() && _dropped == _dropped_reported) {
            return;  // stopping, and everything is written
        }
        batch.clear();
        batch.swap(_queued);
        if (_dropped != _dropped_reported) {
            // Written after the lines that did fit, so it says where the gap is.
            batch += "[log] " + std::to_string(_dropped - _dropped_reported) +
                     " lines dropped: the log's output did not keep up\n";
            _dropped_reported = _dropped;
        }
        const uint64_t upto = _queued_seq;
        lock.unlock();
        // A descriptor that refuses the bytes (closed stderr) loses them; nothing to report to.
        (void)write_all(_fd, batch);
        lock.lock();
        _written_seq = upto;
        _written_cv.notify_all();
    }
}

bool queued_log_sink::wait_written(std::chrono::milliseconds timeout) {
    std::unique_lock lock(_mu);
    const uint64_t target = _queued_seq;
    return _written_cv.wait_for(lock, timeout, [&] { return _written_seq >= target; });
}

void queued_log_sink::flush() {
    (void)wait_written(std::chrono::seconds(2));
}

void queued_log_sink::set_pattern(const std::string& pattern) {
    std::lock_guard lock(_mu);
    _formatter = std::make_unique<spdlog::pattern_formatter>(pattern);
}

void queued_log_sink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
    std::lock_guard lock(_mu);
    _formatter = std::move(formatter);
}

uint64_t queued_log_sink::dropped() const {
    std::lock_guard lock(_mu);
    return _dropped;
}

}  // namespace spool::log
