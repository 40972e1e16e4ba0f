#include "broker/metadata/tests/controller_cluster.h"

#include <boost/asio/use_future.hpp>

#include <algorithm>

namespace spool::broker::metadata::testing {

namespace {

asio::awaitable<int64_t> read_epoch(controller* c) {
    co_return c->epoch();
}

asio::awaitable<result<topic_metadata>> create_topic(etcd_store* s, std::string topic,
                                                     int32_t partitions, int16_t rf = 1) {
    new_topic t{std::move(topic), partitions, rf, {}};  // a named local: see partition_call.h
    auto call = s->create_topic(std::move(t));
    co_return co_await std::move(call);
}

asio::awaitable<std::error_code> create_topic_code(etcd_store* s, std::string topic,
                                                   int32_t partitions) {
    auto r = co_await create_topic(s, std::move(topic), partitions);
    co_return r ? std::error_code{} : r.error();
}

}  // namespace

int64_t member::epoch() const {
    return run_blocking_on(store->executor(), read_epoch(ctl.get()));
}

void member::freeze() {
    frozen = std::make_shared<std::promise<void>>();
    // Shared: set_value() may still touch the promise after the waiter below has woken.
    auto parked = std::make_shared<std::promise<void>>();
    auto is_parked = parked->get_future();
    asio::post(store->executor(), [until = frozen->get_future().share(), parked] {
        parked->set_value();
        until.wait();
    });
    is_parked.wait();
}

void member::thaw() {
    if (frozen) {
        frozen->set_value();
        frozen.reset();
    }
}

void member::stop() {
    thaw();
    if (ctl) {
        ctl->stop_blocking();
        ctl.reset();
    }
    if (store) {
        store->stop();
    }
    if (pool) {
        pool->stop();
    }
    pool.reset();
    store.reset();
}

void controller_cluster_test::SetUp() {
    name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir = std::filesystem::path(::testing::TempDir()) / ("controller_" + name);
    std::filesystem::remove_all(dir);
    ASSERT_TRUE(etcd.start()) << etcd.log_text();
    raw = std::make_unique<raw_etcd>(etcd.endpoint());
}

void controller_cluster_test::TearDown() {
    raw.reset();
    std::filesystem::remove_all(dir);
}

etcd_store_options controller_cluster_test::options(const std::string& endpoint) const {
    etcd_store_options o;
    o.client.endpoints = {endpoint};
    o.client.request_timeout = std::chrono::milliseconds(1000);
    o.client.connect_timeout = std::chrono::milliseconds(500);
    o.prefix = "/spool/" + name;
    o.change_timeout = change_timeout;
    return o;
}

std::unique_ptr<member> controller_cluster_test::start_member(int32_t node_id,
                                                              std::optional<std::string> rack) {
    auto m = std::make_unique<member>();
    m->node_id = node_id;
    auto opened = etcd_store::open(options(etcd.endpoint()));
    EXPECT_TRUE(opened) << opened.error().message();
    if (!opened) {
        return nullptr;
    }
    m->store = std::move(opened).value();

    broker_session_options session;
    session.self.node_id = node_id;
    session.self.rack = std::move(rack);
    session.self.endpoints = {{"PLAINTEXT", "127.0.0.1", 9092 + node_id, "PLAINTEXT"}};
    session.log_dir = dir / ("node" + std::to_string(node_id));
    session.session_timeout = test_session_timeout;
    session.heartbeat_interval = std::chrono::milliseconds(200);
    std::string why;
    auto registered = m->store->start_session(session, &why);
    EXPECT_TRUE(registered) << why;
    if (!registered) {
        return nullptr;
    }

    // As the composition root wires it: on the store's thread, under the session's lease.
    m->ctl = controller::make(*m->store);
    m->pool = std::make_unique<runtime::shard_pool>(2);
    m->store->attach(*m->pool);
    m->pool->start();
    m->ctl->start();
    return m;
}

int32_t controller_cluster_test::agreed_controller(const std::vector<member*>& members,
                                                   std::chrono::milliseconds timeout) {
    int32_t agreed = -1;
    bool ok = eventually(
        [&] {
            const int32_t id = members.front()->snapshot()->controller_id;
            if (id < 0) {
                return false;
            }
            int holders = 0;
            for (auto* m : members) {
                if (m->snapshot()->controller_id != id) {
                    return false;
                }
                if (m->epoch() != 0) {
                    ++holders;
                    if (m->node_id != id) {
                        return false;
                    }
                }
            }
            agreed = id;
            return holders == 1;
        },
        timeout);
    return ok ? agreed : -1;
}

result<topic_metadata> controller_cluster_test::create(member& m, const std::string& topic,
                                                       int32_t partitions,
                                                       int16_t replication_factor) {
    return on_shard(*m.pool, create_topic(m.store.get(), topic, partitions, replication_factor),
                    static_cast<size_t>(partitions) % 2);
}

std::future<std::error_code> controller_cluster_test::create_async(member& m,
                                                                   const std::string& topic,
                                                                   int32_t partitions,
                                                                   size_t shard) {
    return asio::co_spawn(m.pool->executor(shard % m.pool->shard_count()),
                          create_topic_code(m.store.get(), topic, partitions), asio::use_future);
}

std::vector<std::unique_ptr<member>> controller_cluster_test::start_with_controller_first(
    int count) {
    std::vector<std::unique_ptr<member>> out;
    out.push_back(start_member(0));
    EXPECT_TRUE(out.back());
    if (!out.back() || agreed_controller({out.back().get()}) != 0) {
        ADD_FAILURE() << "node 0 was not elected";
        return {};
    }
    std::vector<member*> all{out.back().get()};
    for (int32_t id = 1; id < count; ++id) {
        out.push_back(start_member(id));
        if (!out.back()) {
            return {};
        }
        all.push_back(out.back().get());
    }
    // Every member sees every broker, so the controller places over all of them.
    if (!eventually([&] {
            return std::all_of(all.begin(), all.end(), [&](member* m) {
                return m->snapshot()->brokers.size() == static_cast<size_t>(count);
            });
        })) {
        ADD_FAILURE() << "the members do not see each other";
        return {};
    }
    if (agreed_controller(all) != 0) {
        ADD_FAILURE() << "the members do not agree that node 0 is controller";
        return {};
    }
    return out;
}

std::optional<std::pair<int64_t, etcd_layout::controller_record>>
controller_cluster_test::controller_key() {
    auto r = raw->run(raw->client().range(etcd_layout::keys{"/spool/" + name}.controller()));
    if (!r || r.value().kvs.empty()) {
        return std::nullopt;
    }
    auto record = etcd_layout::decode_controller(r.value().kvs.front().value);
    if (!record) {
        return std::nullopt;
    }
    return std::make_pair(r.value().kvs.front().create_revision, record.value());
}

std::map<int32_t, int> leader_counts(const cluster_state& s) {
    std::map<int32_t, int> out;
    for (const auto& [name, topic] : s.topics) {
        for (const auto& p : topic.partitions) {
            ++out[p.leader];
        }
    }
    return out;
}

}  // namespace spool::broker::metadata::testing
