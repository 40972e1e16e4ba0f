#include "common/fd_limit.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

namespace spool {
namespace {

// What the kernel lists, the way open_fd_count counted before it used stat.
uint64_t listed_fds() {
    std::error_code ec;
    uint64_t n = 0;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
         it.increment(ec)) {
        ++n;
    }
    return n - 1;  // the iterator's own descriptor
}

TEST(open_fd_count, test_counts_the_descriptors_open_now) {
    uint64_t before = open_fd_count();
    EXPECT_EQ(before, listed_fds());
    std::vector<int> fds;
    for (int i = 0; i < 37; ++i) {
        int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        fds.push_back(fd);
    }
    EXPECT_EQ(open_fd_count(), before + 37);
    EXPECT_EQ(open_fd_count(), listed_fds());
    for (int fd : fds) {
        ::close(fd);
    }
    EXPECT_EQ(open_fd_count(), before);
}

TEST(open_fd_count, test_counts_descriptors_above_a_gap) {
    uint64_t before = open_fd_count();
    // A descriptor far above the others: the count is of open descriptors, not the table's size.
    int high = ::fcntl(0, F_DUPFD_CLOEXEC, 900);
    ASSERT_GE(high, 900);
    EXPECT_EQ(open_fd_count(), before + 1);
    ::close(high);
    EXPECT_EQ(open_fd_count(), before);
}

}  // namespace
}  // namespace spool
