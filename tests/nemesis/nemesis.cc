#include "tests/nemesis/nemesis.h"

#include "protocol/messages/fetch.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/produce.h"
#include "tests/durability/unsynced_mount.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <librdkafka/rdkafkacpp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace spool::tests::nemesis {

namespace {

constexpr auto probe_interval = 200ms;
constexpr auto commit_interval = 250ms;
constexpr auto liveness_bound = 60s;  // availability that never comes back, always a failure

std::vector<std::unique_ptr<etcd_proxy>> make_proxies(size_t n) {
    std::vector<std::unique_ptr<etcd_proxy>> out;
    for (size_t i = 0; i < n; ++i) {
        out.push_back(std::make_unique<etcd_proxy>());
    }
    return out;
}

cluster::cluster_options nemesis_options(const std::vector<std::unique_ptr<etcd_proxy>>& proxies,
                                         bool flushed) {
    cluster::cluster_options o;
    o.brokers = proxies.size();
    o.power_cut_mounts = true;
    for (const auto& p : proxies) {
        o.per_broker_overrides.push_back({"etcd.endpoints=" + p->endpoint()});
    }
    if (flushed) {
        o.overrides.push_back("log.flush.interval.messages=1");
    }
    // etcd picks its port at its first start: the proxies learn it then.
    o.on_etcd_started = [&proxies](uint16_t port) {
        for (const auto& p : proxies) {
            p->start(port);
        }
    };
    return o;
}

bool in_sync(const partition_info& p) {
    return p.error == 0 && p.leader >= 0 && p.replicas.size() == 3 && p.isr.size() == 3;
}

// Real-time order over observations of one kind: for each B, the greatest value among those
// received before B was sent; `bad(prior_max, B)` says whether B violates it.
template <class T, class Value, class Bad, class Describe>
uint64_t order_violations(std::vector<T> items, Value value, Bad bad, Describe describe_pair,
                          std::vector<std::string>* examples) {
    std::sort(items.begin(), items.end(),
              [](const T& a, const T& b) { return a.received < b.received; });
    std::vector<size_t> best(items.size());  // index of the max value among items[0..k]
    for (size_t k = 0; k < items.size(); ++k) {
        best[k] = (k == 0 || value(items[k]) > value(items[best[k - 1]])) ? k : best[k - 1];
    }
    uint64_t n = 0;
    for (const auto& b : items) {
        auto it =
            std::lower_bound(items.begin(), items.end(), b.sent,
                             [](const T& a, clock_type::time_point t) { return a.received < t; });
        if (it == items.begin()) {
            continue;
        }
        const auto& a = items[best[static_cast<size_t>(it - items.begin()) - 1]];
        if (bad(value(a), b)) {
            ++n;
            if (examples != nullptr && examples->size() < 10) {
                examples->push_back(describe_pair(a, b));
            }
        }
    }
    return n;
}

}  // namespace

long ms_between(clock_type::time_point a, clock_type::time_point b) {
    return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count());
}

uint64_t ack_order_violations(const std::vector<probe_ack>& acks,
                              std::vector<std::string>* examples) {
    return order_violations(
        acks, [](const probe_ack& a) { return a.offset; },
        [](int64_t prior, const probe_ack& b) { return b.offset <= prior; },
        [](const probe_ack& a, const probe_ack& b) {
            std::ostringstream out;
            out << b.value << " acknowledged by broker " << b.broker << " at offset " << b.offset
                << ", sent " << ms_between(a.received, b.sent) << " ms after broker " << a.broker
                << " had acknowledged " << a.value << " at offset " << a.offset;
            return out.str();
        },
        examples);
}

uint64_t offset_decreases(const std::vector<offset_sample>& samples,
                          std::vector<std::string>* examples) {
    uint64_t n = 0;
    for (const char* what :
         {"ListOffsets latest", "ListOffsets earliest", "Fetch high watermark"}) {
        std::vector<offset_sample> kind;
        for (const auto& s : samples) {
            if (std::string_view(s.what) == what) {
                kind.push_back(s);
            }
        }
        n += order_violations(
            kind, [](const offset_sample& s) { return s.value; },
            [](int64_t prior, const offset_sample& b) { return b.value < prior; },
            [](const offset_sample& a, const offset_sample& b) {
                std::ostringstream out;
                out << b.what << " " << b.value << " from broker " << b.broker << " (epoch "
                    << b.leader_epoch << "), asked " << ms_between(a.received, b.sent)
                    << " ms after broker " << a.broker << " answered " << a.value << " (epoch "
                    << a.leader_epoch << ")";
                return out.str();
            },
            examples);
    }
    return n;
}

// ---- broker_prober ----

broker_prober::broker_prober(cluster_harness& cluster, std::string topic)
    : _cluster(cluster), _topic(std::move(topic)) {
    for (size_t i = 0; i < cluster.size(); ++i) {
        _ports.push_back(cluster.port(i));
    }
}

broker_prober::~broker_prober() {
    stop();
}

void broker_prober::start() {
    for (size_t i = 0; i < _ports.size(); ++i) {
        _threads.emplace_back([this, i] { run(i); });
    }
}

void broker_prober::stop() {
    _stop = true;
    for (auto& t : _threads) {
        if (t.joinable()) {
            t.join();
        }
    }
    _threads.clear();
}

void broker_prober::run(size_t broker) {
    uint64_t n = 0;
    while (!_stop.load()) {
        const auto round = clock_type::now();
        try {
            kafka_client c(_ports[broker]);
            // Produce: acks=all, the broker waits up to 5 s for its ISR.
            c.set_read_timeout(7s);
            const std::string value = "probe-" + std::to_string(broker) + "-" + std::to_string(n++);
            const auto batch = make_batch({value});
            const auto sent = clock_type::now();
            auto resp = c.call<protocol::produce_request, protocol::produce_response>(
                9, produce_req(_topic, 0, batch, -1));
            const auto received = clock_type::now();
            if (!resp) {
                throw std::runtime_error("no answer");  // the connection is not reusable
            }
            if (!resp->responses.empty() && !resp->responses[0].partition_responses.empty() &&
                resp->responses[0].partition_responses[0].error_code == 0) {
                std::lock_guard lock(_mutex);
                _acks.push_back({broker, sent, received,
                                 resp->responses[0].partition_responses[0].base_offset, value});
            }
            // ListOffsets v4 (leader epoch in the answer), latest then earliest.
            c.set_read_timeout(3s);
            int64_t latest = -1;
            for (int64_t ts : {int64_t{-1}, int64_t{-2}}) {
                protocol::list_offsets_request req;
                req.replica_id = -1;
                auto& t = req.topics.emplace_back();
                t.name = _topic;
                auto& p = t.partitions.emplace_back();
                p.partition_index = 0;
                p.timestamp = ts;
                const auto s = clock_type::now();
                auto r =
                    c.call<protocol::list_offsets_request, protocol::list_offsets_response>(4, req);
                const auto e = clock_type::now();
                if (!r) {
                    throw std::runtime_error("no answer");
                }
                if (!r->topics.empty() && !r->topics[0].partitions.empty() &&
                    r->topics[0].partitions[0].error_code == 0) {
                    const auto& pr = r->topics[0].partitions[0];
                    if (ts == -1) {
                        latest = pr.offset;
                    }
                    std::lock_guard lock(_mutex);
                    _samples.push_back({broker,
                                        ts == -1 ? "ListOffsets latest" : "ListOffsets earliest", s,
                                        e, pr.offset, pr.leader_epoch});
                }
            }
            // Fetch v11 at the high watermark just given: no records, the watermark.
            if (latest >= 0) {
                auto req = fetch_partition_0(_topic, latest);
                req.max_wait_ms = 0;
                const auto s = clock_type::now();
                auto r = c.call<protocol::fetch_request, protocol::fetch_response>(11, req);
                const auto e = clock_type::now();
                if (r && !r->responses.empty() && !r->responses[0].partitions.empty() &&
                    r->responses[0].partitions[0].error_code == 0) {
                    std::lock_guard lock(_mutex);
                    _samples.push_back({broker, "Fetch high watermark", s, e,
                                        r->responses[0].partitions[0].high_watermark, -1});
                }
            }
        } catch (const std::exception&) {
            // Not running, paused past the timeout, or restarting: next round.
        }
        std::this_thread::sleep_until(round + probe_interval);
    }
}

std::vector<probe_ack> broker_prober::acks() const {
    std::lock_guard lock(_mutex);
    return _acks;
}

std::vector<offset_sample> broker_prober::samples() const {
    std::lock_guard lock(_mutex);
    return _samples;
}

std::optional<probe_ack> broker_prober::first_ack_sent_after(clock_type::time_point t) const {
    std::lock_guard lock(_mutex);
    std::optional<probe_ack> first;
    for (const auto& a : _acks) {
        if (a.sent >= t && (!first || a.received < first->received)) {
            first = a;
        }
    }
    return first;
}

std::vector<probe_ack> broker_prober::acks_from(size_t broker, clock_type::time_point from,
                                                clock_type::time_point to) const {
    std::lock_guard lock(_mutex);
    std::vector<probe_ack> out;
    for (const auto& a : _acks) {
        if (a.broker == broker && a.sent >= from && a.sent <= to) {
            out.push_back(a);
        }
    }
    return out;
}

std::map<std::string, int64_t> broker_prober::acked_offsets() const {
    std::lock_guard lock(_mutex);
    std::map<std::string, int64_t> out;
    for (const auto& a : _acks) {
        out[a.value] = a.offset;
    }
    return out;
}

// ---- group_committer ----

group_committer::group_committer(std::string bootstrap, std::string topic, std::string group)
    : _bootstrap(std::move(bootstrap)), _topic(std::move(topic)), _group(std::move(group)) {}

group_committer::~group_committer() {
    stop();
}

void group_committer::start() {
    _thread = std::thread([this] { run(); });
}

void group_committer::stop() {
    _stop = true;
    if (_thread.joinable()) {
        _thread.join();
    }
}

group_committer::figures group_committer::results() const {
    std::lock_guard lock(_mutex);
    return _figures;
}

bool group_committer::wait_commits(uint64_t n, std::chrono::milliseconds timeout) const {
    const auto deadline = clock_type::now() + timeout;
    while (results().commits_ok < n) {
        if (clock_type::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

void group_committer::run() {
    std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
    std::string err;
    const std::map<std::string, std::string> settings = {
        {"bootstrap.servers", _bootstrap},
        {"group.id", _group},
        {"enable.auto.commit", "false"},
        {"auto.offset.reset", "earliest"},
        {"session.timeout.ms", "6000"},
        {"heartbeat.interval.ms", "1000"},
        {"socket.connection.setup.timeout.ms", "2000"},
        {"reconnect.backoff.ms", "20"},
        {"reconnect.backoff.max.ms", "200"},
    };
    for (const auto& [k, v] : settings) {
        if (conf->set(k, v, err) != RdKafka::Conf::CONF_OK) {
            std::lock_guard lock(_mutex);
            _figures.examples.push_back("consumer setting " + k + ": " + err);
            return;
        }
    }
    std::unique_ptr<RdKafka::KafkaConsumer> consumer(
        RdKafka::KafkaConsumer::create(conf.get(), err));
    if (!consumer) {
        std::lock_guard lock(_mutex);
        _figures.examples.push_back("KafkaConsumer: " + err);
        return;
    }
    consumer->subscribe({_topic});
    int64_t position = -1;
    int64_t max_acknowledged = -1;  // the highest commit acknowledged so far
    auto next_commit = clock_type::now() + commit_interval;
    while (!_stop.load()) {
        std::unique_ptr<RdKafka::Message> m(consumer->consume(50));
        if (m->err() == RdKafka::ERR_NO_ERROR) {
            position = m->offset() + 1;
            std::lock_guard lock(_mutex);
            ++_figures.consumed;
        }
        if (clock_type::now() < next_commit || position < 0) {
            continue;
        }
        next_commit = clock_type::now() + commit_interval;
        std::vector<RdKafka::TopicPartition*> tps{
            RdKafka::TopicPartition::create(_topic, 0, position)};
        const auto commit_err = consumer->commitSync(tps);
        RdKafka::TopicPartition::destroy(tps);
        {
            std::lock_guard lock(_mutex);
            if (commit_err != RdKafka::ERR_NO_ERROR) {
                ++_figures.commits_failed;
            } else {
                ++_figures.commits_ok;
                _figures.last_committed = position;
                if (position < max_acknowledged) {
                    ++_figures.backwards;
                    if (_figures.examples.size() < 10) {
                        _figures.examples.push_back(
                            "committed " + std::to_string(position) + " after a commit of " +
                            std::to_string(max_acknowledged) +
                            " was acknowledged (the consumer resumed from a lost commit)");
                    }
                }
                max_acknowledged = std::max(max_acknowledged, position);
            }
        }
        // Read back (OffsetFetch to the coordinator): never below an acknowledged commit.
        std::vector<RdKafka::TopicPartition*> read{RdKafka::TopicPartition::create(_topic, 0)};
        const auto read_err = consumer->committed(read, 3000);
        const int64_t seen = read[0]->offset();
        const auto part_err = read[0]->err();
        RdKafka::TopicPartition::destroy(read);
        if (read_err == RdKafka::ERR_NO_ERROR && part_err == RdKafka::ERR_NO_ERROR) {
            std::lock_guard lock(_mutex);
            ++_figures.readbacks;
            if (max_acknowledged >= 0 && seen < max_acknowledged) {
                ++_figures.backwards;
                if (_figures.examples.size() < 10) {
                    _figures.examples.push_back(
                        "OffsetFetch answered " + std::to_string(seen) + " after a commit of " +
                        std::to_string(max_acknowledged) + " was acknowledged");
                }
            }
        }
    }
    consumer->close();
}

// ---- nemesis_fixture ----

nemesis_fixture::nemesis_fixture(bool flushed)
    : proxies(make_proxies(brokers)),
      cluster(nemesis_options(proxies, flushed)),
      _flushed(flushed) {}

nemesis_fixture::~nemesis_fixture() = default;

void nemesis_fixture::SetUp() {
    _t0 = clock_type::now();
    auto err = cluster.start();
    ASSERT_TRUE(err.empty()) << err;
    ASSERT_EQ(replication::create_replicated_topic(cluster.port(0), topic, 1, 3,
                                                   {{"min.insync.replicas", "2"}}),
              "");
    std::string why;
    auto p = wait_partition(in_sync, 30s, &why);
    ASSERT_TRUE(p) << "the topic never had 3 in-sync replicas: " << why << "\n"
                   << cluster.log_tails();
    // request.timeout.ms: a request to a broker that died is retried after 5 s, not 30 s.
    load = std::make_unique<replication::producer_load>(
        cluster.bootstrap(), topic, 200,
        std::map<std::string, std::string>{{"request.timeout.ms", "5000"}, {"linger.ms", "5"}});
    probes = std::make_unique<broker_prober>(cluster, topic);
    group = std::make_unique<group_committer>(cluster.bootstrap(), topic, "nemesis-group");
    load->start();
    probes->start();
    group->start();
    ASSERT_TRUE(load->wait_acked(300, 30s)) << "the producer got no acknowledgements\n"
                                            << cluster.log_tails();
    // The group joined (its first join waits out the broker's initial rebalance delay) and
    // committing before any fault.
    ASSERT_TRUE(group->wait_commits(2, 30s))
        << "the group committed nothing: " << group->results().commits_failed << " failed\n"
        << cluster.log_tails();
    std::printf("[ nemesis ] cluster up (%s), %s, workload running after %ld ms\n",
                _flushed ? "every record fsynced" : "no flush policy",
                cluster::describe(*p).c_str(), ms_between(_t0, clock_type::now()));
}

void nemesis_fixture::TearDown() {
    if (!_checked) {
        if (probes) {
            probes->stop();
        }
        if (group) {
            group->stop();
        }
        if (load) {
            load->finish(2s);
        }
    }
}

void nemesis_fixture::note(const std::string& what) {
    std::printf("[ nemesis %6.1fs ] %s\n",
                static_cast<double>(ms_between(_t0, clock_type::now())) / 1000.0, what.c_str());
    std::fflush(stdout);
}

std::optional<partition_info> nemesis_fixture::partition() {
    std::optional<partition_info> best;
    for (size_t i = 0; i < cluster.size(); ++i) {
        if (_paused.count(i) != 0 || !cluster.broker(i).running()) {
            continue;
        }
        auto v = cluster.metadata(i, {topic});
        const auto* t = v ? v->topic(topic) : nullptr;
        if (t != nullptr && t->error == 0 && t->partitions.size() == 1 &&
            (!best || t->partitions[0].leader_epoch > best->leader_epoch)) {
            best = t->partitions[0];
        }
    }
    return best;
}

std::optional<partition_info> nemesis_fixture::wait_partition(
    const std::function<bool(const partition_info&)>& pred, std::chrono::milliseconds timeout,
    std::string* why) {
    const auto deadline = clock_type::now() + timeout;
    *why = "no broker answered";
    while (true) {
        if (auto p = partition()) {
            if (pred(*p)) {
                return p;
            }
            *why = cluster::describe(*p);
        }
        if (clock_type::now() >= deadline) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(50ms);
    }
}

size_t nemesis_fixture::leader() {
    std::string why;
    auto p = wait_partition([](const partition_info& q) { return q.leader >= 0; }, 30s, &why);
    if (!p) {
        ADD_FAILURE() << "no leader: " << why;
        return 0;
    }
    return static_cast<size_t>(p->leader);
}

size_t nemesis_fixture::follower() {
    const size_t l = leader();
    auto p = partition();
    if (p) {
        for (int32_t r : p->replicas) {
            if (r != static_cast<int32_t>(l)) {
                return static_cast<size_t>(r);
            }
        }
    }
    return (l + 1) % cluster.size();
}

fault_record nemesis_fixture::begin(std::string name) {
    fault_record f;
    f.name = std::move(name);
    if (auto p = partition()) {
        f.leader_before = p->leader;
        f.epoch_before = p->leader_epoch;
        note(f.name + " (before: " + cluster::describe(*p) + ")");
    } else {
        note(f.name + " (before: no answer)");
    }
    f.injected = clock_type::now();
    f.available_from = f.injected;
    return f;
}

namespace {
std::string ms_text(std::chrono::milliseconds d) {
    return std::to_string(d.count()) + " ms";
}
}  // namespace

fault_record nemesis_fixture::kill9(size_t i, std::chrono::milliseconds restart_delay) {
    auto f = begin("kill -9 of broker " + std::to_string(i) + ", restart after " +
                   ms_text(restart_delay));
    cluster.kill9(i);
    std::this_thread::sleep_for(restart_delay);
    EXPECT_TRUE(cluster.restart(i)) << cluster.broker(i).log_text();
    f.restarted = {i};
    return f;
}

fault_record nemesis_fixture::sigstop(size_t i, std::chrono::milliseconds duration) {
    auto f = begin("SIGSTOP of broker " + std::to_string(i) + " for " + ms_text(duration));
    cluster.pause(i);
    _paused.insert(i);
    std::this_thread::sleep_for(duration);
    cluster.resume(i);
    _paused.erase(i);
    return f;
}

fault_record nemesis_fixture::power_cut(size_t i, std::chrono::milliseconds restart_delay) {
    auto f = begin("power cut of broker " + std::to_string(i) + ", restart after " +
                   ms_text(restart_delay));
    auto err = cluster.power_cut(i);
    EXPECT_EQ(err, "");
    note("broker " + std::to_string(i) + ": " + unsynced_mount::last_cut(cluster.volume_log(i)));
    std::this_thread::sleep_for(restart_delay);
    EXPECT_TRUE(cluster.restart(i)) << cluster.broker(i).log_text();
    f.restarted = {i};
    return f;
}

fault_record nemesis_fixture::power_cut_all(std::chrono::milliseconds restart_delay) {
    auto f = begin("power cut of all three brokers, restart after " + ms_text(restart_delay));
    const size_t first = f.leader_before >= 0 ? static_cast<size_t>(f.leader_before) : 0;
    for (size_t k = 0; k < cluster.size(); ++k) {
        const size_t i = (first + k) % cluster.size();
        EXPECT_EQ(cluster.power_cut(i), "");
        note("broker " + std::to_string(i) + ": " +
             unsynced_mount::last_cut(cluster.volume_log(i)));
    }
    std::this_thread::sleep_for(restart_delay);
    for (size_t k = 0; k < cluster.size(); ++k) {
        const size_t i = (first + k) % cluster.size();
        EXPECT_TRUE(cluster.restart(i)) << cluster.broker(i).log_text();
        f.restarted.push_back(i);
    }
    f.available_from = clock_type::now();  // nothing could serve before
    return f;
}

fault_record nemesis_fixture::replace_volume(size_t i) {
    auto f = begin("broker " + std::to_string(i) + " killed, its volume replaced by an empty one");
    cluster.kill9(i);
    EXPECT_EQ(cluster.replace_volume(i), "");
    int attempts = 0;
    const long up_ms = cluster.restart_when_accepted(i, session() * 3 + 5s, &attempts);
    note("broker " + std::to_string(i) + " on an empty volume started after " +
         std::to_string(up_ms) + " ms (" + std::to_string(attempts) +
         " starts; refused while its old session lived)");
    EXPECT_GE(up_ms, 0) << cluster.broker(i).log_text();
    f.restarted = {i};
    return f;
}

fault_record nemesis_fixture::etcd_pause(std::chrono::milliseconds duration) {
    auto f = begin("etcd paused (SIGSTOP) for " + ms_text(duration));
    cluster.etcd().pause();
    std::this_thread::sleep_for(duration);
    cluster.etcd().resume();
    f.available_from = clock_type::now();
    return f;
}

fault_record nemesis_fixture::etcd_kill(std::chrono::milliseconds restart_delay) {
    auto f = begin("etcd killed (kill -9), restarted after " + ms_text(restart_delay));
    cluster.etcd().kill9();
    std::this_thread::sleep_for(restart_delay);
    EXPECT_TRUE(cluster.etcd().start()) << cluster.etcd().log_text();
    f.available_from = clock_type::now();
    return f;
}

fault_record nemesis_fixture::cut_from_etcd(size_t i, etcd_proxy::mode how,
                                            std::chrono::milliseconds duration) {
    auto f = begin("broker " + std::to_string(i) + " cut off from etcd (" + to_string(how) +
                   ") for " + ms_text(duration));
    const bool was_leader = f.leader_before == static_cast<int32_t>(i);
    proxies[i]->set_mode(how);
    std::optional<partition_info> moved;
    std::optional<clock_type::time_point> moved_at;
    const auto end = f.injected + duration;
    while (clock_type::now() < end) {
        if (!moved && was_leader) {
            auto p = partition();
            if (p && p->leader >= 0 && p->leader != static_cast<int32_t>(i) &&
                p->leader_epoch > f.epoch_before) {
                moved = p;
                moved_at = clock_type::now();
            }
        }
        std::this_thread::sleep_for(50ms);
    }
    // What the cut-off broker says of the partition at the end of the cut (printed: serving
    // the last metadata it saw is allowed; acknowledging is not).
    std::string self_view = "no answer";
    if (auto v = cluster.metadata(i, {topic});
        v && v->topic(topic) != nullptr && v->topic(topic)->partitions.size() == 1) {
        self_view = cluster::describe(v->topic(topic)->partitions[0]);
    }
    const auto healed = clock_type::now();
    proxies[i]->set_mode(etcd_proxy::mode::pass);
    // Correct behaviour, asserted: its session expires after the session timeout, from then on
    // (1 s of grace for timers on a loaded machine) it acknowledges nothing, and if it led, its
    // leadership moves to another broker at a new epoch.
    const auto fenced_from = f.injected + session() + 1s;
    auto late = probes->acks_from(i, fenced_from, healed);
    std::ostringstream late_text;
    for (size_t k = 0; k < late.size() && k < 5; ++k) {
        late_text << "\n  " << late[k].value << " at offset " << late[k].offset << ", sent "
                  << ms_between(f.injected, late[k].sent) << " ms into the cut";
    }
    note("broker " + std::to_string(i) +
         " back in touch with etcd; at the end of the cut it "
         "showed " +
         self_view + "; " + std::to_string(probes->acks_from(i, f.injected, fenced_from).size()) +
         " acknowledgements from it of requests sent before " +
         std::to_string(ms_between(f.injected, fenced_from)) + " ms into the cut, " +
         std::to_string(late.size()) + " of requests sent from " +
         std::to_string(ms_between(f.injected, fenced_from)) + " ms into the cut; " +
         (was_leader ? (moved ? "leadership moved after " +
                                    std::to_string(ms_between(f.injected, *moved_at)) +
                                    " ms: " + cluster::describe(*moved)
                              : std::string("leadership did not move"))
                     : std::string("it did not lead")));
    EXPECT_TRUE(late.empty()) << "broker " << i << " cut off from etcd (" << to_string(how)
                              << ") acknowledged " << late.size()
                              << " acks=all writes after its session must have expired:"
                              << late_text.str() << "\n"
                              << cluster.log_tails(20);
    if (was_leader) {
        EXPECT_TRUE(moved) << "broker " << i << " cut off from etcd (" << to_string(how)
                           << ") kept its leadership for " << ms_text(duration) << "\n"
                           << cluster.log_tails(20);
    }
    return f;
}

fault_record nemesis_fixture::failing_disk(size_t i, std::chrono::milliseconds restart_delay) {
    auto f = begin("broker " + std::to_string(i) + "'s disk fails (EIO) under it, restart " +
                   ms_text(restart_delay) + " after it exits");
    EXPECT_EQ(cluster.fail_disk(i), "");
    const auto deadline = clock_type::now() + session() * 2 + 10s;
    while (cluster.broker(i).running() && clock_type::now() < deadline) {
        std::this_thread::sleep_for(20ms);
    }
    const bool exited = !cluster.broker(i).running();
    note("broker " + std::to_string(i) + (exited ? " exited " : " still runs ") +
         std::to_string(ms_between(f.injected, clock_type::now())) + " ms after its disk failed");
    EXPECT_TRUE(exited) << "broker " << i << " still runs with a failed disk\n"
                        << cluster.broker(i).log_text();
    EXPECT_EQ(cluster.remount(i), "");
    std::this_thread::sleep_for(restart_delay);
    EXPECT_TRUE(cluster.restart(i)) << cluster.broker(i).log_text();
    f.restarted = {i};
    return f;
}

void nemesis_fixture::settle(const fault_record& f) {
    std::string why;
    auto p = wait_partition(in_sync, liveness_bound, &why);
    EXPECT_TRUE(p) << f.name << ": not led with 3 in sync within 60 s: " << why << "\n"
                   << cluster.log_tails(30);
    const bool leader_restarted =
        std::find(f.restarted.begin(), f.restarted.end(),
                  static_cast<size_t>(std::max(f.leader_before, 0))) != f.restarted.end() &&
        f.leader_before >= 0;
    if (p && leader_restarted) {
        EXPECT_GT(p->leader_epoch, f.epoch_before)
            << f.name << ": the leader came back as a new process and the partition kept epoch "
            << f.epoch_before << ": " << cluster::describe(*p);
    }
    // Availability: the first probe acknowledged of those sent from `available_from` on.
    const long bound_ms = static_cast<long>(session().count()) + 5000;
    std::optional<probe_ack> ack;
    const auto deadline = f.available_from + liveness_bound;
    while (!(ack = probes->first_ack_sent_after(f.available_from)) &&
           clock_type::now() < deadline) {
        std::this_thread::sleep_for(50ms);
    }
    const long avail_ms = ack ? ms_between(f.available_from, ack->received) : -1;
    note(f.name + ": settled at " + (p ? cluster::describe(*p) : "(not settled)") +
         "; available again " + std::to_string(avail_ms) + " ms after " +
         (f.available_from == f.injected ? "the fault" : "its end") + " (bound " +
         std::to_string(bound_ms) + " ms" +
         (timing_bounds_asserted() ? ", asserted" : ", printed only") + ")");
    EXPECT_TRUE(ack) << f.name << ": no acks=all write acknowledged within 60 s\n"
                     << cluster.log_tails(30);
    if (ack && timing_bounds_asserted()) {
        EXPECT_LE(avail_ms, bound_ms)
            << f.name << ": availability later than the session timeout + 5 s";
    }
}

void nemesis_fixture::check_all() {
    _checked = true;
    probes->stop();
    group->stop();
    load->finish(60s);
    std::string why;
    auto p = wait_partition(in_sync, liveness_bound, &why);
    EXPECT_TRUE(p) << "not 3 in sync at the end: " << why << "\n" << cluster.log_tails(30);

    // Replicas byte for byte (their segment files, read through the mounts): equal below their
    // common end, and whole once caught up.
    std::vector<std::vector<uint8_t>> logs(cluster.size());
    bool prefix_equal = true;
    bool whole_equal = false;
    size_t first_difference = 0;
    const auto deadline = clock_type::now() + 30s;
    while (true) {
        for (size_t i = 0; i < cluster.size(); ++i) {
            logs[i] = cluster.replica_batches(i, topic, 0);
        }
        size_t common = logs[0].size();
        for (const auto& l : logs) {
            common = std::min(common, l.size());
        }
        prefix_equal = true;
        for (size_t i = 1; i < logs.size() && prefix_equal; ++i) {
            auto [a, b] = std::mismatch(logs[0].begin(), logs[0].begin() + common, logs[i].begin());
            if (a != logs[0].begin() + common) {
                prefix_equal = false;
                first_difference = static_cast<size_t>(a - logs[0].begin());
            }
        }
        whole_equal = prefix_equal && logs[0].size() == logs[1].size() &&
                      logs[1].size() == logs[2].size() && !logs[0].empty();
        // A replica not yet truncated may differ for a moment: judged once equal, or at the
        // deadline.
        if (whole_equal || clock_type::now() >= deadline) {
            break;
        }
        std::this_thread::sleep_for(200ms);
    }
    std::printf("[ checker ] replicas: %zu / %zu / %zu bytes, %s\n", logs[0].size(), logs[1].size(),
                logs[2].size(),
                whole_equal    ? "equal byte for byte"
                : prefix_equal ? "equal below the common end, different lengths"
                               : "DIFFERENT below the common end");
    EXPECT_TRUE(prefix_equal) << "replicas differ below their common end, first at byte "
                              << first_difference << " (a same-epoch divergence)";
    EXPECT_TRUE(whole_equal) << "replicas not equal within 30 s of the workload's end";

    // Acknowledged records: the producer's and the probes'.
    auto acked = load->acked_offsets();
    const auto probe_acked = probes->acked_offsets();
    acked.insert(probe_acked.begin(), probe_acked.end());
    auto c = replication::check_log(cluster.bootstrap(), topic, acked);
    std::printf(
        "[ checker ] log: %s (producer: %zu acknowledged, %zu failed, %zu unanswered; "
        "probes: %zu acknowledged)\n",
        replication::describe(c).c_str(), load->acked_offsets().size(), load->failed().size(),
        load->unanswered(), probe_acked.size());
    EXPECT_EQ(c.read_error, "");
    EXPECT_EQ(c.audit.lost, 0u) << replication::describe(c);
    EXPECT_EQ(c.audit.duplicated, 0u) << replication::describe(c);
    EXPECT_EQ(c.audit.moved, 0u) << replication::describe(c);
    EXPECT_EQ(c.gaps, 0u) << replication::describe(c);
    EXPECT_EQ(load->fatal_error(), "");
    EXPECT_GT(load->acked_offsets().size(), 300u);

    std::vector<std::string> examples;
    const auto acks = probes->acks();
    const auto violations = ack_order_violations(acks, &examples);
    std::string text;
    for (const auto& e : examples) {
        text += "\n  " + e;
    }
    std::printf("[ checker ] probe acks in real-time order: %zu acks, %llu out of order%s\n",
                acks.size(), static_cast<unsigned long long>(violations), text.c_str());
    EXPECT_EQ(violations, 0u) << "acknowledgements out of real-time order (two leaders, or a "
                                 "deposed one, acknowledging):"
                              << text;

    examples.clear();
    const auto samples = probes->samples();
    const auto decreases = offset_decreases(samples, &examples);
    text.clear();
    for (const auto& e : examples) {
        text += "\n  " + e;
    }
    std::printf("[ checker ] ListOffsets/high watermark: %zu answers, %llu decreases%s\n",
                samples.size(), static_cast<unsigned long long>(decreases), text.c_str());
    EXPECT_EQ(decreases, 0u) << "an offset went backwards:" << text;
    EXPECT_GT(samples.size(), 10u);

    const auto g = group->results();
    text.clear();
    for (const auto& e : g.examples) {
        text += "\n  " + e;
    }
    std::printf(
        "[ checker ] group: %llu consumed, %llu commits acknowledged (last %lld), %llu "
        "failed, %llu read back, %llu backwards%s\n",
        static_cast<unsigned long long>(g.consumed), static_cast<unsigned long long>(g.commits_ok),
        static_cast<long long>(g.last_committed), static_cast<unsigned long long>(g.commits_failed),
        static_cast<unsigned long long>(g.readbacks), static_cast<unsigned long long>(g.backwards),
        text.c_str());
    EXPECT_EQ(g.backwards, 0u) << "committed group offsets went backwards:" << text;
    EXPECT_GT(g.commits_ok, 0u) << text;
    std::fflush(stdout);
}

}  // namespace spool::tests::nemesis
