#include "common/queued_log_sink.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <spdlog/logger.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace spool::log {
namespace {

using namespace std::chrono_literals;

// A pipe for a sink to write to, both ends closed at the end of the test.
struct plain_pipe {
    int read_fd = -1;
    int write_fd = -1;
    bool ok = false;
    plain_pipe() {
        int fds[2];
        ok = ::pipe(fds) == 0;
        read_fd = ok ? fds[0] : -1;
        write_fd = ok ? fds[1] : -1;
    }
    ~plain_pipe() {
        if (ok) {
            ::close(read_fd);
            ::close(write_fd);
        }
    }
    plain_pipe(const plain_pipe&) = delete;
    plain_pipe& operator=(const plain_pipe&) = delete;
};

// A pipe whose buffer is full: a write() to it blocks until someone reads.
struct full_pipe {
    int read_fd = -1;
    int write_fd = -1;
    size_t filled = 0;
    full_pipe() {
        int fds[2];
        EXPECT_EQ(::pipe(fds), 0);
        read_fd = fds[0];
        write_fd = fds[1];
        int flags = ::fcntl(write_fd, F_GETFL);
        ::fcntl(write_fd, F_SETFL, flags | O_NONBLOCK);
        std::string chunk(4096, 'f');
        for (;;) {
            ssize_t n = ::write(write_fd, chunk.data(), chunk.size());
            if (n <= 0) {
                break;
            }
            filled += static_cast<size_t>(n);
        }
        ::fcntl(write_fd, F_SETFL, flags);  // blocking again, as stderr is
    }
    ~full_pipe() {
        ::close(read_fd);
        ::close(write_fd);
    }
    // Reads everything until `needle` shows up (or 5 s pass) and returns what came after the
    // filler.
    std::string read_until(const std::string& needle) {
        std::string all;
        auto deadline = std::chrono::steady_clock::now() + 5s;
        int flags = ::fcntl(read_fd, F_GETFL);
        ::fcntl(read_fd, F_SETFL, flags | O_NONBLOCK);
        char buf[65536];
        while (std::chrono::steady_clock::now() < deadline) {
            ssize_t n = ::read(read_fd, buf, sizeof buf);
            if (n > 0) {
                all.append(buf, static_cast<size_t>(n));
                if (all.size() > filled && all.find(needle, filled) != std::string::npos) {
                    break;
                }
            } else {
                std::this_thread::sleep_for(1ms);
            }
        }
        return all.size() > filled ? all.substr(filled) : std::string();
    }
};

TEST(queued_log_sink, test_a_log_call_returns_while_the_output_blocks) {
    full_pipe out;
    auto sink = std::make_shared<queued_log_sink>(out.write_fd);
    spdlog::logger logger("t", sink);
    logger.set_pattern("%v");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) {
        logger.info("line {}", i);
    }
    auto took = std::chrono::steady_clock::now() - t0;
    // The writer is stuck in write() on the full pipe; the callers were not.
    EXPECT_LT(took, 500ms);
    EXPECT_FALSE(sink->wait_written(50ms)) << "the pipe was full: nothing can be written yet";
    auto text = out.read_until("line 99\n");
    EXPECT_EQ(text.find("line 0\n"), 0u) << text;
    EXPECT_NE(text.find("line 99\n"), std::string::npos) << text;
    EXPECT_TRUE(sink->wait_written(5s));
    EXPECT_EQ(sink->dropped(), 0u);
}

TEST(queued_log_sink, test_flush_returns_once_every_earlier_line_is_written) {
    plain_pipe out;
    ASSERT_TRUE(out.ok);
    {
        auto sink = std::make_shared<queued_log_sink>(out.write_fd);
        spdlog::logger logger("t", sink);
        logger.set_pattern("%v");
        logger.warn("first");
        logger.error("second");
        logger.flush();  // the sink's flush(): waits for the writer
        char buf[64] = {};
        int flags = ::fcntl(out.read_fd, F_GETFL);
        ::fcntl(out.read_fd, F_SETFL, flags | O_NONBLOCK);
        ssize_t n = ::read(out.read_fd, buf, sizeof buf - 1);
        ASSERT_GT(n, 0);
        EXPECT_EQ(std::string(buf, static_cast<size_t>(n)), "first\nsecond\n");
    }
}

TEST(queued_log_sink, test_a_full_queue_drops_lines_and_says_how_many) {
    full_pipe out;
    // Room for about ten lines while the writer is stuck.
    auto sink = std::make_shared<queued_log_sink>(out.write_fd, 100);
    spdlog::logger logger("t", sink);
    logger.set_pattern("%v");
    logger.info("start");
    // The writer takes "start" and blocks on the pipe; what follows queues up behind it.
    std::this_thread::sleep_for(100ms);
    for (int i = 0; i < 50; ++i) {
        logger.info("line {:02}", i);
    }
    EXPECT_GT(sink->dropped(), 0u);
    EXPECT_LT(sink->dropped(), 50u);
    auto text = out.read_until("lines dropped");
    EXPECT_NE(text.find("start\nline 00\n"), std::string::npos) << text;
    EXPECT_NE(text.find("[log] " + std::to_string(sink->dropped()) + " lines dropped"),
              std::string::npos)
        << text;
}

TEST(queued_log_sink, test_the_destructor_writes_what_is_queued) {
    plain_pipe out;
    ASSERT_TRUE(out.ok);
    {
        auto sink = std::make_shared<queued_log_sink>(out.write_fd);
        spdlog::logger logger("t", sink);
        logger.set_pattern("%v");
        for (int i = 0; i < 20; ++i) {
            logger.info("bye {}", i);
        }
    }
    char buf[4096] = {};
    ssize_t n = ::read(out.read_fd, buf, sizeof buf - 1);
    ASSERT_GT(n, 0);
    std::string text(buf, static_cast<size_t>(n));
    EXPECT_EQ(text.rfind("bye 19\n"), text.size() - 7) << text;
}

// The writer must not preempt the threads that log (queued_log_sink.cc): it runs SCHED_BATCH.
TEST(queued_log_sink, test_the_writer_thread_runs_sched_batch) {
    plain_pipe out;
    ASSERT_TRUE(out.ok);
    {
        auto sink = std::make_shared<queued_log_sink>(out.write_fd);
        spdlog::logger logger("t", sink);
        logger.info("hello");
        ASSERT_TRUE(sink->wait_written(5s));  // the writer has run, so it has set its policy
        int policy = -1;
        for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
            std::ifstream comm(task.path() / "comm");
            std::string name;
            std::getline(comm, name);
            if (name == "log-writer") {
                policy = ::sched_getscheduler(std::stoi(task.path().filename().string()));
            }
        }
        EXPECT_EQ(policy, SCHED_BATCH);
    }
}

}  // namespace
}  // namespace spool::log
