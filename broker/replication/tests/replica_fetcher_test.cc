// replica_fetcher against a leader on loopback that answers from a real leader partition (a real
// partition_log in a temp dir): OffsetForLeaderEpoch from its epoch cache, Fetch through
// on_follower_fetch and a read up to its log end offset, as the broker's handlers do. The
// follower is a real partition too, so every test ends by comparing the two logs byte for byte.
// The leader can be told to misbehave once (cut the records inside a batch, answer an error,
// drop the connection) to reach the fetcher's other paths.

#include "broker/replication/replica_fetcher.h"

#include "broker/storage/flusher.h"
#include "broker/storage/tests/test_util.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/offset_for_leader_epoch.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include <functional>
#include <optional>

namespace spool::broker::replication {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using protocol::error_code;
using storage::test::make_batch;

constexpr int32_t leader_id = 1;
constexpr int32_t follower_id = 2;
const model::topic_partition tp{"t", model::partition_id(0)};

partition_assignment assignment(int32_t leader, int32_t epoch) {
    partition_assignment a;
    a.leader = leader;
    a.leader_epoch = epoch;
    a.replicas = {leader_id, follower_id};
    a.isr = {leader_id, follower_id};
    return a;
}

int16_t code(std::error_code ec) {
    if (!ec) {
        return 0;
    }
    if (ec == errc::fenced_leader_epoch) {
        return static_cast<int16_t>(error_code::fenced_leader_epoch);
    }
    if (ec == errc::unknown_leader_epoch) {
        return static_cast<int16_t>(error_code::unknown_leader_epoch);
    }
    return static_cast<int16_t>(error_code::not_leader_or_follower);
}

// The leader broker: a real partition behind a Kafka listener that answers ApiVersions,
// OffsetForLeaderEpoch and Fetch, one connection at a time.
struct scripted_leader {
    explicit scripted_leader(asio::io_context& io)
        : acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {}
    uint16_t port() const { return acceptor.local_endpoint().port(); }

    tcp::acceptor acceptor;
    partition* log = nullptr;
    int fetches = 0;
    int epoch_requests = 0;
    int connections = 0;
    // Misbehaviour for the next Fetch only.
    std::optional<size_t> cut_records_at;
    std::optional<error_code> fail_next_fetch;
    bool drop_after_next_fetch = false;
    // Every Fetch answered with this while set.
    std::optional<error_code> fail_every_fetch;
};

std::vector<uint8_t> answer_api_versions(int32_t correlation) {
    protocol::api_versions_response resp;
    for (auto key : {protocol::api_key::fetch, protocol::api_key::offset_for_leader_epoch}) {
        const auto* info = protocol::find_api(key);
        resp.api_keys.push_back(
            {static_cast<int16_t>(key), info->min_version, info->max_version, {}});
    }
    return protocol::encode_response(correlation, 0, resp, false).bytes;
}

std::vector<uint8_t> answer_epochs(scripted_leader* leader, const protocol::request_view& req) {
    auto decoded = protocol::decode_request<protocol::offset_for_leader_epoch_request>(req);
    protocol::offset_for_leader_epoch_response resp;
    ++leader->epoch_requests;
    for (const auto& t : decoded.value().topics) {
        auto& rt = resp.topics.emplace_back();
        rt.topic = t.topic;
        for (const auto& p : t.partitions) {
            auto& e = rt.partitions.emplace_back();
            e.partition = p.partition;
            const int32_t ours = leader->log->leader_epoch();
            if (p.current_leader_epoch != ours) {
                e.error_code = static_cast<int16_t>(p.current_leader_epoch < ours
                                                        ? error_code::fenced_leader_epoch
                                                        : error_code::unknown_leader_epoch);
                continue;
            }
            auto entry =
                leader->log->log().end_offset_for_epoch(model::leader_epoch(p.leader_epoch));
            e.leader_epoch = entry.epoch.value();
            e.end_offset = entry.start_offset.value();
        }
    }
    return protocol::encode_response(req.header.correlation_id, req.version(), resp, false).bytes;
}

std::vector<uint8_t> answer_fetch(scripted_leader* leader, const protocol::request_view& req) {
    auto decoded = protocol::decode_request<protocol::fetch_request>(req);
    protocol::fetch_response resp;
    ++leader->fetches;
    auto fail = leader->fail_every_fetch ? leader->fail_every_fetch : leader->fail_next_fetch;
    leader->fail_next_fetch.reset();
    for (const auto& t : decoded.value().topics) {
        auto& rt = resp.responses.emplace_back();
        rt.topic = t.topic;
        for (const auto& p : t.partitions) {
            auto& out = rt.partitions.emplace_back();
            out.partition_index = p.partition;
            auto& log = leader->log->log();
            out.log_start_offset = log.log_start_offset().value();
            if (fail) {
                out.error_code = static_cast<int16_t>(*fail);
                continue;
            }
            if (p.fetch_offset < log.log_start_offset().value() ||
                p.fetch_offset > log.log_end_offset().value()) {
                out.error_code = static_cast<int16_t>(error_code::offset_out_of_range);
                continue;
            }
            if (auto ec = leader->log->on_follower_fetch(decoded.value().replica_id,
                                                         model::offset(p.fetch_offset),
                                                         p.current_leader_epoch)) {
                out.error_code = code(ec);
                continue;
            }
            out.high_watermark = leader->log->high_watermark().value();
            auto read =
                log.read(model::offset(p.fetch_offset),
                         static_cast<uint32_t>(p.partition_max_bytes), log.log_end_offset());
            std::vector<uint8_t> bytes;
            for (const auto& s : read.value().slices) {
                auto part = storage::test::slice_bytes(s);
                bytes.insert(bytes.end(), part.begin(), part.end());
            }
            if (leader->cut_records_at && *leader->cut_records_at < bytes.size()) {
                bytes.resize(*leader->cut_records_at);
                leader->cut_records_at.reset();
            }
            out.records.append_owned(std::move(bytes));
        }
    }
    return protocol::encode_response(req.header.correlation_id, req.version(), resp, false).bytes;
}

asio::awaitable<void> serve(scripted_leader* leader) {
    for (;;) {
        boost::system::error_code ec;
        auto socket =
            co_await leader->acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
        if (ec) {
            co_return;
        }
        ++leader->connections;
        for (;;) {
            uint8_t size_bytes[4];
            co_await asio::async_read(socket, asio::buffer(size_bytes),
                                      asio::redirect_error(asio::use_awaitable, ec));
            if (ec) {
                break;
            }
            std::vector<uint8_t> frame((uint32_t{size_bytes[0]} << 24) |
                                       (uint32_t{size_bytes[1]} << 16) |
                                       (uint32_t{size_bytes[2]} << 8) | size_bytes[3]);
            co_await asio::async_read(socket, asio::buffer(frame),
                                      asio::redirect_error(asio::use_awaitable, ec));
            auto req = protocol::parse_request(frame);
            if (ec || !req) {
                break;
            }
            std::vector<uint8_t> out;
            bool drop = false;
            switch (req.value().key()) {
                case protocol::api_key::api_versions:
                    out = answer_api_versions(req.value().header.correlation_id);
                    break;
                case protocol::api_key::offset_for_leader_epoch:
                    out = answer_epochs(leader, req.value());
                    break;
                default: {
                    drop = leader->drop_after_next_fetch;
                    leader->drop_after_next_fetch = false;
                    out = answer_fetch(leader, req.value());
                    // A little latency, as over a network: the fetcher must not spin.
                    asio::steady_timer pause(socket.get_executor(), 5ms);
                    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
                    break;
                }
            }
            co_await asio::async_write(socket, asio::buffer(out),
                                       asio::redirect_error(asio::use_awaitable, ec));
            if (drop) {
                socket.close();
                break;
            }
        }
    }
}

asio::awaitable<void> stop_fetcher(replica_fetcher* f, bool* done) {
    co_await f->stop();
    *done = true;
}

class replica_fetcher_test : public ::testing::Test {
protected:
    void SetUp() override {
        leader = open(leader_id, "leader");
        follower = open(follower_id, "follower");
        server.log = leader.get();
        asio::co_spawn(io, serve(&server), asio::detached);
    }
    void TearDown() override {
        if (fetcher) {
            bool done = false;
            asio::co_spawn(io, stop_fetcher(fetcher.get(), &done), asio::detached);
            run_until([&] { return done; }, 5s);
            EXPECT_TRUE(done);
            fetcher.reset();
        }
        server.acceptor.close();
        io.restart();
        io.run_for(50ms);
    }

    std::unique_ptr<partition> open(int32_t self, const std::string& dir) {
        auto log = storage::partition_log::open(_dir.path() / dir, tp, {});
        EXPECT_TRUE(log);
        partition_options o;
        o.self = self;
        return std::make_unique<partition>(std::move(log).value(), io.get_executor(), o);
    }

    // Appends `batches` batches of `records` records as leader.
    static void produce(partition& p, int batches, int records = 3) {
        for (int i = 0; i < batches; ++i) {
            auto bytes = make_batch({.records = records, .value_size = 40});
            auto r = p.append_as_leader(bytes, 1, 1);
            ASSERT_TRUE(r) << r.error().message();
        }
    }

    void start_fetching(int32_t epoch) {
        fetcher_options o;
        o.self = follower_id;
        o.max_wait = 20ms;
        o.backoff = 30ms;
        o.socket_timeout = 2s;
        o.connect_timeout = 1s;
        probe = std::make_shared<metrics::replica_fetcher_probe::fetcher>();
        fetcher = std::make_unique<replica_fetcher>(
            io.get_executor(), leader_id, o,
            [this](const model::topic_partition& t) { return t == tp ? follower.get() : nullptr; },
            [this](int32_t node) -> std::optional<leader_endpoint> {
                if (node != leader_id) {
                    return std::nullopt;
                }
                return leader_endpoint{"127.0.0.1", server.port()};
            },
            probe);
        fetcher->start();
        fetcher->follow(tp, epoch);
    }

    bool run_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            io.restart();
            io.run_for(5ms);
        }
        return done();
    }

    bool caught_up() const {
        return follower->log().log_end_offset() == leader->log().log_end_offset() &&
               follower->high_watermark() == leader->high_watermark() &&
               leader->high_watermark() == leader->log().log_end_offset();
    }

    static std::vector<uint8_t> bytes_of(const partition& p) {
        auto& log = p.log();
        auto r = log.read(log.log_start_offset(), 64 << 20, log.log_end_offset());
        EXPECT_TRUE(r);
        std::vector<uint8_t> out;
        for (const auto& s : r.value().slices) {
            auto part = storage::test::slice_bytes(s);
            out.insert(out.end(), part.begin(), part.end());
        }
        return out;
    }

    void expect_identical_logs() {
        EXPECT_EQ(follower->log().log_start_offset(), leader->log().log_start_offset());
        EXPECT_EQ(follower->log().log_end_offset(), leader->log().log_end_offset());
        EXPECT_EQ(follower->log().epochs().entries(), leader->log().epochs().entries());
        EXPECT_EQ(bytes_of(*follower), bytes_of(*leader));
    }

    storage::test::temp_dir _dir;
    asio::io_context io;
    std::unique_ptr<partition> leader;
    std::unique_ptr<partition> follower;
    scripted_leader server{io};
    std::shared_ptr<metrics::replica_fetcher_probe::fetcher> probe;
    std::unique_ptr<replica_fetcher> fetcher;
};

TEST_F(replica_fetcher_test, test_follower_copies_batches_with_offsets_and_epochs_and_follows_hw) {
    leader->apply(assignment(leader_id, 3));
    follower->apply(assignment(leader_id, 3));
    produce(*leader, 5);
    start_fetching(3);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s))
        << "follower LEO " << follower->log().log_end_offset().value() << " HW "
        << follower->high_watermark().value() << ", leader LEO "
        << leader->log().log_end_offset().value() << " HW " << leader->high_watermark().value();
    expect_identical_logs();
    EXPECT_EQ(follower->log().epochs().latest_epoch(), model::leader_epoch(3));
    // An empty follower has no epoch to compare: it fetches without asking.
    EXPECT_EQ(server.epoch_requests, 0);

    // New records keep flowing without another truncation.
    produce(*leader, 2);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    expect_identical_logs();
    EXPECT_EQ(server.epoch_requests, 0);
    EXPECT_EQ(probe->bytes(), bytes_of(*leader).size());
    EXPECT_EQ(probe->max_lag(), 0);
    EXPECT_EQ(probe->partitions(), 1);
}

// KIP-101's divergence with real logs: the follower led epoch 0 and wrote a batch the new leader
// never got; the new leader wrote other records at those offsets in epoch 1. The follower asks
// OffsetForLeaderEpoch(0), truncates its tail and fetches the leader's epoch-1 batch.
TEST_F(replica_fetcher_test, test_divergent_follower_truncates_by_epoch_then_matches_the_leader) {
    leader->apply(assignment(leader_id, 0));
    follower->apply(assignment(follower_id, 0));
    // Both got the first two batches at epoch 0 ...
    produce(*leader, 2);
    produce(*follower, 2);
    // ... the follower (then leader) wrote a third nobody else has ...
    produce(*follower, 1, 5);
    // ... and the new leader writes at epoch 1 from offset 6.
    leader->apply(assignment(leader_id, 1));
    produce(*leader, 1, 2);
    follower->apply(assignment(leader_id, 1));
    ASSERT_TRUE(follower->needs_truncation());
    ASSERT_EQ(follower->log().log_end_offset(), model::offset(11));

    start_fetching(1);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s))
        << "follower LEO " << follower->log().log_end_offset().value();
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(8));
    expect_identical_logs();
    EXPECT_FALSE(follower->needs_truncation());
}

TEST_F(replica_fetcher_test, test_records_cut_inside_a_batch_append_only_the_whole_batches) {
    leader->apply(assignment(leader_id, 2));
    follower->apply(assignment(leader_id, 2));
    produce(*leader, 3);
    // The first answer ends 10 bytes into the second batch.
    server.cut_records_at = bytes_of(*leader).size() / 3 + 10;
    start_fetching(2);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    expect_identical_logs();
    EXPECT_GE(server.fetches, 3);
}

TEST_F(replica_fetcher_test, test_below_the_leaders_log_start_the_follower_restarts_there) {
    auto solo = assignment(leader_id, 4);
    solo.isr = {leader_id};  // the leader alone: its high watermark is its log end offset
    leader->apply(solo);
    follower->apply(assignment(leader_id, 4));
    produce(*leader, 4);
    ASSERT_EQ(leader->high_watermark(), model::offset(12));
    ASSERT_TRUE(leader->log().delete_records(model::offset(6)));
    start_fetching(4);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s))
        << "follower " << follower->log().log_start_offset().value() << ".."
        << follower->log().log_end_offset().value();
    EXPECT_EQ(follower->log().log_start_offset(), model::offset(6));
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(12));
    EXPECT_EQ(bytes_of(*follower), bytes_of(*leader));
}

TEST_F(replica_fetcher_test, test_fenced_leader_epoch_pauses_until_the_metadata_brings_a_new_one) {
    leader->apply(assignment(leader_id, 5));
    follower->apply(assignment(leader_id, 5));
    produce(*leader, 2);
    server.fail_every_fetch = error_code::fenced_leader_epoch;
    start_fetching(5);
    ASSERT_TRUE(run_until([&] { return server.fetches >= 1; }, 5s));
    // Paused: no more fetches over several backoffs.
    run_until([] { return false; }, 300ms);
    EXPECT_EQ(server.fetches, 1);
    EXPECT_EQ(follower->log().log_end_offset(), model::offset(0));

    // The metadata moves both to epoch 6: the listener follows again.
    server.fail_every_fetch.reset();
    leader->apply(assignment(leader_id, 6));
    follower->apply(assignment(leader_id, 6));
    fetcher->follow(tp, 6);
    // A batch at epoch 6, so the follower's epoch cache has the entry the leader began.
    produce(*leader, 1);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    expect_identical_logs();
}

TEST_F(replica_fetcher_test, test_retriable_partition_errors_retry_after_the_backoff) {
    leader->apply(assignment(leader_id, 1));
    follower->apply(assignment(leader_id, 1));
    produce(*leader, 2);
    server.fail_next_fetch = error_code::not_leader_or_follower;
    start_fetching(1);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    expect_identical_logs();
    EXPECT_GE(probe->errors(), 1u);
}

TEST_F(replica_fetcher_test, test_a_lost_connection_backs_off_and_reconnects) {
    leader->apply(assignment(leader_id, 1));
    follower->apply(assignment(leader_id, 1));
    produce(*leader, 1);
    server.drop_after_next_fetch = true;
    start_fetching(1);
    ASSERT_TRUE(run_until([&] { return server.connections >= 1 && server.fetches >= 1; }, 5s));
    produce(*leader, 2);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    expect_identical_logs();
    EXPECT_GE(server.connections, 2);
}

TEST_F(replica_fetcher_test, test_a_partition_that_became_leader_is_dropped) {
    leader->apply(assignment(leader_id, 1));
    follower->apply(assignment(leader_id, 1));
    produce(*leader, 1);
    start_fetching(1);
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    follower->apply(assignment(follower_id, 2));
    const int fetches = server.fetches;
    ASSERT_TRUE(run_until([&] { return fetcher->size() == 0; }, 5s));
    run_until([] { return false; }, 100ms);
    EXPECT_LE(server.fetches, fetches + 1);
    EXPECT_EQ(probe->partitions(), 0);
}

// flush.messages=1 on the follower: as Kafka's follower flushes inline before its next fetch,
// the fetcher reports a new log end to the leader (its next Fetch's offset) only once the
// follower's group-commit sync of it is done. The sync's completion is held here: no Fetch goes
// out meanwhile; released, the next Fetch asks from the synced end.
TEST_F(replica_fetcher_test, test_under_flush_messages_the_next_fetch_waits_for_the_sync) {
    storage::flusher flush_thread;
    // Flusher completions, run on io once released; shared: a completion may still be queued on
    // io when the test body ends.
    auto held = std::make_shared<std::vector<std::function<void()>>>();
    auto hold = std::make_shared<bool>(true);
    storage::log_config cfg;
    cfg.flush_messages = 1;
    storage::open_options opts;
    opts.flush_thread = &flush_thread;
    opts.post = [this, held, hold](std::function<void()> f) {
        asio::post(io, [held, hold, f = std::move(f)]() mutable {
            if (*hold) {
                held->push_back(std::move(f));
            } else {
                f();
            }
        });
    };
    auto log = storage::partition_log::open(_dir.path() / "synced-follower", tp, cfg, opts);
    ASSERT_TRUE(log);
    partition_options po;
    po.self = follower_id;
    follower = std::make_unique<partition>(std::move(log).value(), io.get_executor(), po);

    leader->apply(assignment(leader_id, 1));
    follower->apply(assignment(leader_id, 1));
    produce(*leader, 3);
    start_fetching(1);
    ASSERT_TRUE(run_until(
        [&] { return follower->log().log_end_offset() == leader->log().log_end_offset(); }, 10s));
    ASSERT_TRUE(run_until([&] { return !held->empty(); }, 5s)) << "the append started no sync";
    const int fetches = server.fetches;
    run_until([] { return false; }, 200ms);  // ten times the fetch wait
    EXPECT_EQ(server.fetches, fetches) << "a Fetch reported a log end that is not synced yet";
    EXPECT_LT(follower->log().flushed_offset(), follower->log().log_end_offset());

    *hold = false;
    for (auto& f : std::exchange(*held, {})) {
        f();
    }
    EXPECT_EQ(follower->log().flushed_offset(), follower->log().log_end_offset());
    ASSERT_TRUE(run_until([&] { return caught_up(); }, 10s));
    EXPECT_GT(server.fetches, fetches);
    expect_identical_logs();
    // The follower's log points at this test's flusher: both go before it does.
    bool done = false;
    asio::co_spawn(io, stop_fetcher(fetcher.get(), &done), asio::detached);
    run_until([&] { return done; }, 5s);
    fetcher.reset();
    follower.reset();
    flush_thread.stop();
}

}  // namespace
}  // namespace spool::broker::replication
