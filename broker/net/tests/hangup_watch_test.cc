#include "broker/net/hangup_watch.h"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <vector>

namespace spool::broker::net {
namespace {

using namespace std::chrono_literals;

// A connected pair of stream sockets: [0] is watched, [1] plays the peer.
struct socket_pair {
    std::array<int, 2> fd{-1, -1};
    socket_pair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fd.data()), 0); }
    ~socket_pair() {
        for (int f : fd) {
            if (f >= 0) {
                ::close(f);
            }
        }
    }
    void peer_hangs_up() {
        ::close(fd[1]);
        fd[1] = -1;
    }
};

TEST(hangup_watch, test_a_peer_that_hangs_up_is_reported_once_and_unwatched) {
    boost::asio::io_context io;
    hangup_watch watch(io.get_executor(), 20ms);
    socket_pair s;
    int calls = 0;
    watch.watch(1, s.fd[0], [&] { ++calls; });
    io.run_for(60ms);
    EXPECT_EQ(calls, 0) << "a live peer is not a hang-up";
    s.peer_hangs_up();
    io.run_for(100ms);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(watch.watched(), 0u);
    io.run_for(60ms);
    EXPECT_EQ(calls, 1);
}

TEST(hangup_watch, test_unwatched_sockets_are_not_polled) {
    boost::asio::io_context io;
    hangup_watch watch(io.get_executor(), 20ms);
    socket_pair s;
    int calls = 0;
    watch.watch(7, s.fd[0], [&] { ++calls; });
    watch.unwatch(7);
    s.peer_hangs_up();
    io.run_for(100ms);
    EXPECT_EQ(calls, 0);
}

TEST(hangup_watch, test_many_sockets_share_one_poll_and_only_the_hung_up_ones_are_reported) {
    boost::asio::io_context io;
    hangup_watch watch(io.get_executor(), 20ms);
    std::vector<socket_pair> pairs(200);
    std::vector<int> calls(pairs.size(), 0);
    for (size_t i = 0; i < pairs.size(); ++i) {
        watch.watch(i, pairs[i].fd[0], [&calls, i] { ++calls[i]; });
    }
    for (size_t i = 0; i < pairs.size(); i += 3) {
        pairs[i].peer_hangs_up();
    }
    io.run_for(100ms);
    size_t reported = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
        EXPECT_EQ(calls[i], i % 3 == 0 ? 1 : 0) << "socket " << i;
        reported += calls[i];
    }
    EXPECT_EQ(reported, 67u);
    EXPECT_EQ(watch.watched(), pairs.size() - 67);
}

TEST(hangup_watch, test_a_callback_may_unwatch_another_socket_of_the_same_pass) {
    boost::asio::io_context io;
    hangup_watch watch(io.get_executor(), 20ms);
    socket_pair a, b;
    int calls = 0;
    watch.watch(1, a.fd[0], [&] {
        ++calls;
        watch.unwatch(2);
    });
    watch.watch(2, b.fd[0], [&] { ++calls; });
    a.peer_hangs_up();
    b.peer_hangs_up();
    io.run_for(100ms);
    // Both hung up in the same pass; whichever runs first, the other is not reported after it
    // was unwatched (at most one call per pass here, at least one).
    EXPECT_GE(calls, 1);
    EXPECT_LE(calls, 2);
    EXPECT_EQ(watch.watched(), 0u);
}

TEST(hangup_watch, test_watching_again_after_the_loop_ended_restarts_it) {
    boost::asio::io_context io;
    hangup_watch watch(io.get_executor(), 20ms);
    socket_pair a;
    watch.watch(1, a.fd[0], [] {});
    watch.unwatch(1);
    io.run_for(60ms);  // the loop finds nothing to watch and ends: the context runs dry
    io.restart();
    socket_pair b;
    int calls = 0;
    watch.watch(2, b.fd[0], [&] { ++calls; });
    b.peer_hangs_up();
    io.run_for(100ms);
    EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace spool::broker::net
