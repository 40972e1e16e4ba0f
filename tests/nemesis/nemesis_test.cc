// The nemesis suite's deterministic tests (issue #31; tests/nemesis/README.md): one fault each on
// three real brokers over a real etcd, under the workload of nemesis.h, then every checker.
// Quick restarts come back well within broker.session.timeout.ms (3 s), slow ones after it;
// SIGSTOP below and above it. Each test takes 20-40 s.

#include "tests/nemesis/nemesis.h"

namespace spool::tests::nemesis {
namespace {

constexpr auto quick = 500ms;  // back well within the session timeout
constexpr auto slow = 5s;      // back after the session timeout (3 s)

using nemesis = nemesis_fixture;

TEST_F(nemesis, kill9_leader_quick_restart) {
    settle(kill9(leader(), quick));
    check_all();
}

TEST_F(nemesis, kill9_leader_slow_restart) {
    settle(kill9(leader(), slow));
    check_all();
}

TEST_F(nemesis, sigstop_leader_below_session_timeout) {
    settle(sigstop(leader(), session() / 2));
    check_all();
}

TEST_F(nemesis, sigstop_leader_above_session_timeout) {
    settle(sigstop(leader(), session() * 2));
    check_all();
}

TEST_F(nemesis, power_cut_leader_quick_restart) {
    settle(power_cut(leader(), quick));
    check_all();
}

TEST_F(nemesis, power_cut_leader_slow_restart) {
    settle(power_cut(leader(), slow));
    check_all();
}

TEST_F(nemesis, power_cut_follower_quick_restart) {
    settle(power_cut(follower(), quick));
    check_all();
}

TEST_F(nemesis, power_cut_follower_slow_restart) {
    settle(power_cut(follower(), slow));
    check_all();
}

TEST_F(nemesis, leader_volume_replaced) {
    settle(replace_volume(leader()));
    check_all();
}

TEST_F(nemesis, etcd_paused) {
    settle(etcd_pause(session() * 2));
    check_all();
}

TEST_F(nemesis, etcd_killed) {
    settle(etcd_kill(slow));
    check_all();
}

TEST_F(nemesis, leader_cut_from_etcd_refused) {
    settle(cut_from_etcd(leader(), etcd_proxy::mode::refuse, session() * 2 + 2s));
    check_all();
}

TEST_F(nemesis, leader_cut_from_etcd_blackholed) {
    settle(cut_from_etcd(leader(), etcd_proxy::mode::blackhole, session() * 2 + 2s));
    check_all();
}

TEST_F(nemesis, leader_disk_fails) {
    settle(failing_disk(leader(), quick));
    check_all();
}

// Every broker fsyncs every record (log.flush.interval.messages=1): only then must a power cut
// of all three lose nothing acknowledged (as in Kafka, whose followers flush alike).
class nemesis_flushed : public nemesis_fixture {
protected:
    nemesis_flushed() : nemesis_fixture(true) {}
};

TEST_F(nemesis_flushed, power_cut_all_quick_restart) {
    settle(power_cut_all(quick));
    check_all();
}

}  // namespace
}  // namespace spool::tests::nemesis
