#include "broker/runtime/background_pool.h"

#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>

#include <cerrno>
#include <utility>

namespace spool::broker::runtime {
namespace {

namespace asio = boost::asio;

// The scheduling policy and nice value of whichever pool thread runs the task.
std::pair<int, int> priority_inside(background_pool& pool) {
    auto f = asio::post(pool.executor(), asio::use_future([] {
                            errno = 0;
                            int nice = ::getpriority(PRIO_PROCESS, 0);
                            return std::pair{::sched_getscheduler(0), nice};
                        }));
    return f.get();
}

TEST(background_pool, test_threads_run_at_the_priority_the_pool_was_made_with) {
    errno = 0;
    int own_nice = ::getpriority(PRIO_PROCESS, 0);
    background_pool normal("t-normal", 1);
    background_pool low("t-low", 1, thread_priority::background);
    background_pool idle("t-idle", 1, thread_priority::idle);
    EXPECT_EQ(priority_inside(normal), (std::pair{SCHED_OTHER, own_nice}));
    EXPECT_EQ(priority_inside(low), (std::pair{SCHED_OTHER, 19}));
    EXPECT_EQ(priority_inside(idle).first, SCHED_IDLE);
    // Per thread: the caller keeps its own.
    EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER);
    EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), own_nice);
}

}  // namespace
}  // namespace spool::broker::runtime
