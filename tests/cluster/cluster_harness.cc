#include "tests/cluster/cluster_harness.h"

#include "broker/replication/fetched_records.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/metadata.h"
#include "tests/integration/child_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#if SPOOL_CLUSTER_POWER_CUT
#include "tests/durability/unsynced_mount.h"
#else
// Built without FUSE (libfuse3-dev): no unsynced_fs binary. A harness asked for power-cut mounts
// fails in start() with this reason; the stand-in only lets the rest compile and link.
namespace spool::tests {
class unsynced_mount {
public:
    bool mount() { return false; }
    void power_cut() {}
    void unmount() {}
    std::string log_text() const { return "unsynced_fs was not built (libfuse3-dev missing)"; }
};
}  // namespace spool::tests
#endif

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

namespace spool::tests::cluster {

namespace {

using namespace std::chrono_literals;

// Unique per process and per harness: several clusters (one per test) may share one etcd over a
// test binary's life, and a prefix must never see a previous test's keys.
std::string unique_prefix() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    return "/spool/test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
           std::to_string(rd() % 100000);
}

std::string tail(const std::string& text, size_t lines) {
    size_t pos = text.size();
    for (size_t n = 0; n <= lines; ++n) {
        if (pos == 0) {
            return text;
        }
        pos = text.rfind('\n', pos - 1);
        if (pos == std::string::npos) {
            return text;
        }
    }
    return text.substr(pos + 1);
}

size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

}  // namespace

const topic_info* metadata_view::topic(const std::string& name) const {
    auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
}

bool metadata_view::all_led(const std::string& name, size_t partitions) const {
    const auto* t = topic(name);
    if (t == nullptr || t->error != 0 || t->partitions.size() != partitions) {
        return false;
    }
    for (const auto& p : t->partitions) {
        if (p.leader < 0 || p.error != 0) {
            return false;
        }
    }
    return true;
}

std::string describe(const partition_info& p) {
    std::ostringstream out;
    auto list = [&](const std::vector<int32_t>& v) {
        out << "[";
        for (size_t i = 0; i < v.size(); ++i) {
            out << (i ? "," : "") << v[i];
        }
        out << "]";
    };
    out << "partition " << p.index << " error " << p.error << " leader " << p.leader << " epoch "
        << p.leader_epoch << " replicas ";
    list(p.replicas);
    out << " isr ";
    list(p.isr);
    return out.str();
}

std::string metadata_view::describe() const {
    std::ostringstream out;
    out << "controller " << controller_id << ", brokers [";
    for (const auto& b : brokers) {
        out << " " << b.node_id << "@" << b.host << ":" << b.port;
        if (b.rack) {
            out << "/" << *b.rack;
        }
    }
    out << " ], " << topics.size() << " topics";
    size_t shown = 0;
    for (const auto& [name, t] : topics) {
        if (shown++ == 5) {
            out << " ...";
            break;
        }
        out << "; " << name << " err " << t.error << ":";
        for (const auto& p : t.partitions) {
            out << " p" << p.index << "=" << p.leader << "/e" << p.error;
        }
    }
    return out.str();
}

cluster_harness::cluster_harness(cluster_options options)
    : _options(std::move(options)), _prefix(unique_prefix()) {
    _etcd = std::make_unique<etcd_process>();
    if (_options.etcd_tls) {
        _etcd->use_tls(*_options.etcd_tls);
    }
    for (size_t i = 0; i < _options.brokers; ++i) {
        auto b = std::make_unique<broker_process>();
        b->set_port(free_port());  // known before start: overrides_for names it
        _http_ports.push_back(free_port());
        _brokers.push_back(std::move(b));
    }
#if SPOOL_CLUSTER_POWER_CUT
    if (_options.power_cut_mounts) {
        // The mount point is the broker's log.dirs (data_dir()/data, see broker_process), so
        // replica_dir() and replica_batches() read through the mount; broker.log stays outside.
        _volumes = make_temp_dir("spool-volumes");
        for (size_t i = 0; i < _brokers.size(); ++i) {
            const auto n = std::to_string(i);
            _mounts.push_back(std::make_unique<unsynced_mount>(
                _volumes / ("backing-" + n), _brokers[i]->data_dir() / "data",
                _volumes / ("unsynced_fs-" + n + ".log")));
        }
    }
#endif
}

cluster_harness::~cluster_harness() {
    // Brokers first: a broker outliving etcd would only log reconnect attempts.
    for (auto& b : _brokers) {
        b->kill_hard();
    }
    // Unmounted before the brokers' data directories (the mount points) are removed.
    _mounts.clear();
    _brokers.clear();
    _etcd.reset();
    if (!_volumes.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(_volumes, ec);
    }
}

std::vector<std::string> cluster_harness::broker_overrides(int32_t node_id,
                                                           uint16_t http_port) const {
    std::vector<std::string> out = {
        "node.id=" + std::to_string(node_id),
        "metadata.store=etcd",
        "etcd.endpoints=" + _etcd->endpoint(),
        "etcd.prefix=" + _prefix,
        "http.listener=127.0.0.1:" + std::to_string(http_port),
        "broker.session.timeout.ms=" + std::to_string(_options.session_timeout_ms),
        "broker.heartbeat.interval.ms=" + std::to_string(_options.heartbeat_interval_ms),
        // Three brokers and etcd share two cores with the test: one shard each is plenty.
        "spool.cores=1",
    };
    // Kafka's default is 3; a smaller test cluster asks for what it has, as a Kafka user would:
    // __consumer_offsets is created only once that many brokers are registered.
    const bool offsets_rf_given = std::any_of(
        _options.overrides.begin(), _options.overrides.end(),
        [](const auto& kv) { return kv.rfind("offsets.topic.replication.factor=", 0) == 0; });
    if (!offsets_rf_given) {
        out.push_back("offsets.topic.replication.factor=" +
                      std::to_string(std::min<size_t>(3, _brokers.size())));
    }
    // __transaction_state likewise (created at the first FindCoordinator for a transaction).
    const bool txn_rf_given = std::any_of(
        _options.overrides.begin(), _options.overrides.end(), [](const auto& kv) {
            return kv.rfind("transaction.state.log.replication.factor=", 0) == 0;
        });
    if (!txn_rf_given) {
        out.push_back("transaction.state.log.replication.factor=" +
                      std::to_string(std::min<size_t>(3, _brokers.size())));
    }
    out.insert(out.end(), _options.overrides.begin(), _options.overrides.end());
    if (static_cast<size_t>(node_id) < _options.per_broker_overrides.size()) {
        const auto& own = _options.per_broker_overrides[static_cast<size_t>(node_id)];
        out.insert(out.end(), own.begin(), own.end());
    }
    if (_options.overrides_for && static_cast<size_t>(node_id) < _brokers.size()) {
        auto own = _options.overrides_for(static_cast<size_t>(node_id),
                                          _brokers.at(static_cast<size_t>(node_id))->port());
        out.insert(out.end(), own.begin(), own.end());
    }
    return out;
}

std::string cluster_harness::start(std::chrono::milliseconds timeout, size_t only) {
    const size_t count = only == 0 ? _brokers.size() : std::min(only, _brokers.size());
    if (_options.power_cut_mounts) {
        if (_mounts.size() != _brokers.size()) {
            return "power_cut_mounts: this build has no unsynced_fs (libfuse3-dev missing: "
                   "scripts/setup.sh --with-tests)";
        }
        for (size_t i = 0; i < _mounts.size(); ++i) {
            if (!_mounts[i]->mount()) {
                return "power_cut_mounts: the FUSE mount of broker " + std::to_string(i) +
                       "'s volume failed (needs /dev/fuse and root):\n" + _mounts[i]->log_text();
            }
        }
    }
    if (!_etcd->start()) {
        return "etcd did not start";
    }
    if (_options.on_etcd_started) {
        _options.on_etcd_started(_etcd->client_port());
    }
    for (size_t i = 0; i < _brokers.size(); ++i) {
        for (auto& kv : broker_overrides(static_cast<int32_t>(i), _http_ports[i])) {
            _brokers[i]->add_override(std::move(kv));
        }
    }
    // Start them all before waiting for any: the first broker's controller election and the
    // others' registration happen concurrently, as in a real rollout.
    for (size_t i = 0; i < count; ++i) {
        if (!_brokers[i]->start()) {
            return "broker " + std::to_string(i) + " did not start:\n" + log_tails();
        }
    }
    std::string why;
    if (!wait_for_cluster(timeout, count, &why)) {
        return "the cluster did not form: " + why + "\n" + log_tails();
    }
    return {};
}

std::string cluster_harness::bootstrap() const {
    std::string out;
    for (const auto& b : _brokers) {
        if (!out.empty()) {
            out += ",";
        }
        out += b->bootstrap();
    }
    return out;
}

void cluster_harness::kill9(size_t i) {
    _brokers.at(i)->kill_hard();
}

void cluster_harness::pause(size_t i) {
    ::kill(_brokers.at(i)->pid(), SIGSTOP);
}

void cluster_harness::resume(size_t i) {
    ::kill(_brokers.at(i)->pid(), SIGCONT);
}

broker_process::exit_info cluster_harness::sigterm(size_t i) {
    return _brokers.at(i)->stop();
}

bool cluster_harness::restart(size_t i) {
    // The overrides stay from the first start; broker_process keeps the Kafka port.
    return _brokers.at(i)->start();
}

std::string cluster_harness::power_cut(size_t i) {
    if (i >= _mounts.size()) {
        return "power_cut: broker " + std::to_string(i) +
               " has no power-cut volume "
               "(cluster_options::power_cut_mounts)";
    }
    // The process first, as a power loss stops it with the disk: the cut then also takes
    // whatever its last moments wrote, and the broker never sees the failed disk (EIO), which
    // it could report and so move its leaderships before it "lost power".
    _brokers[i]->kill_hard();
    if (auto err = fail_disk(i); !err.empty()) {
        return err;
    }
    return remount(i);
}

std::string cluster_harness::fail_disk(size_t i) {
    if (i >= _mounts.size()) {
        return "fail_disk: broker " + std::to_string(i) +
               " has no power-cut volume (cluster_options::power_cut_mounts)";
    }
    const size_t cuts_before = count_of(_mounts[i]->log_text(), "power cut:");
    _mounts[i]->power_cut();
    // The daemon logs the cut as it makes it; a moment for the line to reach the file.
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (count_of(_mounts[i]->log_text(), "power cut:") != cuts_before + 1 &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(10ms);
    }
    if (count_of(_mounts[i]->log_text(), "power cut:") != cuts_before + 1) {
        return "unsynced_fs of broker " + std::to_string(i) + " did not report the cut:\n" +
               _mounts[i]->log_text();
    }
    return {};
}

std::string cluster_harness::remount(size_t i) {
    if (i >= _mounts.size()) {
        return "remount: broker " + std::to_string(i) + " has no power-cut volume";
    }
    _brokers[i]->kill_hard();
    _mounts[i]->unmount();
    if (!_mounts[i]->mount()) {
        return "mounting broker " + std::to_string(i) + "'s volume again failed:\n" +
               _mounts[i]->log_text();
    }
    return {};
}

long cluster_harness::restart_when_accepted(size_t i, std::chrono::milliseconds timeout,
                                            int* attempts) {
    const auto t0 = std::chrono::steady_clock::now();
    for (*attempts = 1;; ++*attempts) {
        if (restart(i)) {
            return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - t0)
                                         .count());
        }
        if (std::chrono::steady_clock::now() - t0 >= timeout) {
            return -1;
        }
        std::this_thread::sleep_for(200ms);
    }
}

std::string cluster_harness::replace_volume(size_t i) {
    namespace fs = std::filesystem;
    if (_brokers.at(i)->running()) {
        return "replace_volume: broker " + std::to_string(i) + " is running";
    }
    const fs::path dir = _brokers[i]->data_dir() / "data";
    if (i >= _mounts.size()) {
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        return ec ? "replace_volume: " + dir.string() + ": " + ec.message() : std::string();
    }
#if SPOOL_CLUSTER_POWER_CUT
    _mounts[i]->unmount();
    const auto n = std::to_string(i);
    const auto log = _volumes / ("unsynced_fs-" + n + ".log");
    _mounts[i] = std::make_unique<unsynced_mount>(
        _volumes / ("backing-" + n + "-replacement-" + std::to_string(++_replaced)), dir, log);
    if (!_mounts[i]->mount()) {
        return "replace_volume: mounting broker " + n + "'s new volume failed:\n" +
               _mounts[i]->log_text();
    }
    std::error_code ec;
    if (!fs::is_empty(dir, ec) || ec) {
        return "replace_volume: broker " + n + "'s new volume is not empty";
    }
#endif
    return {};
}

std::string cluster_harness::volume_log(size_t i) const {
    return i < _mounts.size() ? _mounts[i]->log_text() : std::string();
}

std::unique_ptr<broker_process> cluster_harness::extra_broker(int32_t node_id) {
    auto b = std::make_unique<broker_process>();
    for (auto& kv : broker_overrides(node_id, free_port())) {
        b->add_override(std::move(kv));
    }
    return b;
}

std::optional<partition_info> cluster_harness::single_partition(const std::string& topic,
                                                               size_t observer) {
    for (size_t k = 0; k < _brokers.size(); ++k) {
        const size_t i = (observer + k) % _brokers.size();
        if (!_brokers[i]->running()) {
            continue;
        }
        auto v = metadata(i, {topic});
        const auto* t = v ? v->topic(topic) : nullptr;
        if (t != nullptr && t->error == 0 && t->partitions.size() == 1) {
            return t->partitions[0];
        }
    }
    return std::nullopt;
}

std::optional<metadata_view> cluster_harness::metadata(size_t i,
                                                       const std::vector<std::string>& topics) {
    try {
        kafka_client c(_brokers.at(i)->port());
        c.set_read_timeout(5s);
        protocol::metadata_request req;
        if (topics.empty()) {
            req.topics = std::nullopt;  // all topics
        } else {
            req.topics.emplace();
            for (const auto& t : topics) {
                auto& rt = req.topics->emplace_back();
                rt.name = t;
            }
        }
        req.allow_auto_topic_creation = false;
        auto resp = c.call<protocol::metadata_request, protocol::metadata_response>(12, req);
        if (!resp) {
            return std::nullopt;
        }
        metadata_view v;
        v.controller_id = resp->controller_id;
        v.cluster_id = resp->cluster_id.value_or("");
        for (const auto& b : resp->brokers) {
            v.brokers.push_back({b.node_id, b.host, b.port, b.rack});
        }
        for (const auto& t : resp->topics) {
            auto& ti = v.topics[t.name.value_or("")];
            ti.error = t.error_code;
            for (const auto& p : t.partitions) {
                ti.partitions.push_back({p.partition_index, p.error_code, p.leader_id,
                                         p.leader_epoch, p.replica_nodes, p.isr_nodes,
                                         p.offline_replicas});
            }
        }
        return v;
    } catch (const std::exception&) {
        return std::nullopt;  // not listening (killed, paused past the read timeout, restarting)
    }
}

std::optional<metadata_view> cluster_harness::wait_for_metadata(
    size_t i, const std::function<bool(const metadata_view&)>& pred,
    std::chrono::milliseconds timeout, const std::vector<std::string>& topics,
    metadata_view* last) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        auto v = metadata(i, topics);
        if (v) {
            if (pred(*v)) {
                return v;
            }
            if (last != nullptr) {
                *last = *v;
            }
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return std::nullopt;
        }
        std::this_thread::sleep_for(50ms);
    }
}

bool cluster_harness::wait_for_cluster(std::chrono::milliseconds timeout, size_t expect_brokers,
                                       std::string* why) {
    size_t want = expect_brokers == 0 ? _brokers.size() : expect_brokers;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (size_t i = 0; i < _brokers.size(); ++i) {
        if (!_brokers[i]->running()) {
            continue;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        metadata_view last;
        auto v = wait_for_metadata(
            i,
            [want](const metadata_view& m) {
                return m.brokers.size() == want && m.controller_id >= 0;
            },
            std::max(left, std::chrono::milliseconds(1)), {"__none__"}, &last);
        if (!v) {
            if (why != nullptr) {
                *why = "broker " + std::to_string(i) + " last showed " + last.describe();
            }
            return false;
        }
    }
    return true;
}

cluster_harness::http_answer cluster_harness::http_get(size_t i, const std::string& path) {
    return http_call(i, "GET", path);
}

cluster_harness::http_answer cluster_harness::http_call(size_t i, const std::string& method,
                                                        const std::string& path) {
    http_answer out;
    try {
        boost::asio::io_context io;
        boost::asio::ip::tcp::socket s(io);
        s.connect({boost::asio::ip::make_address("127.0.0.1"), _http_ports.at(i)});
        std::string req =
            method + " " + path +
            " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        boost::asio::write(s, boost::asio::buffer(req));
        std::string resp;
        boost::system::error_code ec;
        char buf[4096];
        while (true) {
            size_t n = s.read_some(boost::asio::buffer(buf), ec);
            resp.append(buf, n);
            if (ec) {
                break;
            }
        }
        // "HTTP/1.1 200 OK\r\n..."
        if (resp.size() > 12) {
            out.status = std::stoi(resp.substr(9, 3));
        }
        auto body = resp.find("\r\n\r\n");
        if (body != std::string::npos) {
            out.body = resp.substr(body + 4);
        }
    } catch (const std::exception&) {
        out.status = 0;
    }
    return out;
}

std::filesystem::path cluster_harness::replica_dir(size_t i, const std::string& topic,
                                                   int32_t partition) const {
    return _brokers.at(i)->data_dir() / "data" / (topic + "-" + std::to_string(partition));
}

std::vector<uint8_t> cluster_harness::replica_batches(size_t i, const std::string& topic,
                                                      int32_t partition) const {
    namespace fs = std::filesystem;
    std::vector<fs::path> segments;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(replica_dir(i, topic, partition), ec)) {
        if (e.path().extension() == ".log") {
            segments.push_back(e.path());
        }
    }
    std::sort(segments.begin(), segments.end());  // zero-padded base offsets: offset order
    std::vector<uint8_t> out;
    for (const auto& segment : segments) {
        std::ifstream in(segment, std::ios::binary);
        std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                   std::istreambuf_iterator<char>()};
        bytes.resize(broker::replication::whole_batches_size(bytes));
        out.insert(out.end(), bytes.begin(), bytes.end());
    }
    return out;
}

std::string cluster_harness::log_tails(size_t lines) const {
    std::string out;
    for (size_t i = 0; i < _brokers.size(); ++i) {
        out += "---- broker " + std::to_string(i) + " ----\n" +
               tail(_brokers[i]->log_text(), lines) + "\n";
    }
    return out;
}

int16_t create_topic_via(uint16_t port, const std::string& name, int32_t partitions,
                         int32_t timeout_ms, std::string* message, int16_t replication_factor) {
    try {
        kafka_client c(port);
        c.set_read_timeout(std::chrono::milliseconds(timeout_ms + 5000));
        protocol::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = name;
        t.num_partitions = partitions;
        t.replication_factor = replication_factor;
        req.timeout_ms = timeout_ms;
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        if (!resp || resp->topics.empty()) {
            return -999;
        }
        if (message != nullptr) {
            *message = resp->topics[0].error_message.value_or("");
        }
        return resp->topics[0].error_code;
    } catch (const std::exception&) {
        return -999;
    }
}

std::pair<int16_t, int32_t> find_coordinator_via(uint16_t port, const std::string& group) {
    try {
        kafka_client c(port);
        c.set_read_timeout(10s);
        protocol::find_coordinator_request req;
        req.key = group;
        req.key_type = 0;
        auto resp =
            c.call<protocol::find_coordinator_request, protocol::find_coordinator_response>(3, req);
        if (!resp) {
            return {-999, -1};
        }
        return {resp->error_code, resp->node_id};
    } catch (const std::exception&) {
        return {-999, -1};
    }
}

std::vector<int16_t> create_topics_via(uint16_t port, const std::vector<std::string>& names,
                                       int32_t partitions, int32_t timeout_ms) {
    std::vector<int16_t> out(names.size(), -999);
    try {
        kafka_client c(port);
        c.set_read_timeout(std::chrono::milliseconds(timeout_ms + 5000));
        protocol::create_topics_request req;
        for (const auto& name : names) {
            auto& t = req.topics.emplace_back();
            t.name = name;
            t.num_partitions = partitions;
            t.replication_factor = 1;
        }
        req.timeout_ms = timeout_ms;
        auto resp =
            c.call<protocol::create_topics_request, protocol::create_topics_response>(4, req);
        if (!resp) {
            return out;
        }
        for (const auto& r : resp->topics) {
            for (size_t i = 0; i < names.size(); ++i) {
                if (names[i] == r.name) {
                    out[i] = r.error_code;
                }
            }
        }
    } catch (const std::exception&) {
    }
    return out;
}

int16_t produce_via(uint16_t port, const std::string& topic, int32_t partition,
                    const std::vector<std::string>& values, int16_t acks) {
    try {
        kafka_client c(port);
        c.set_read_timeout(15s);
        auto batch = make_batch(values);
        auto resp = c.call<protocol::produce_request, protocol::produce_response>(
            9, produce_req(topic, partition, batch, acks));
        if (!resp || resp->responses.empty() || resp->responses[0].partition_responses.empty()) {
            return -999;
        }
        return resp->responses[0].partition_responses[0].error_code;
    } catch (const std::exception&) {
        return -999;
    }
}

std::optional<consumer_fetch> consumer_fetch_via(uint16_t port, int16_t version,
                                                 const std::string& topic, int32_t partition,
                                                 int64_t offset, const std::string& rack) {
    try {
        kafka_client c(port);
        c.set_read_timeout(20s);
        protocol::fetch_request req;
        req.max_wait_ms = 5000;
        req.min_bytes = 1;
        req.rack_id = rack;
        auto& t = req.topics.emplace_back();
        t.topic = topic;
        auto& p = t.partitions.emplace_back();
        p.partition = partition;
        p.fetch_offset = offset;
        p.partition_max_bytes = 1 << 20;
        auto resp = c.call<protocol::fetch_request, protocol::fetch_response>(version, req);
        if (!resp || resp->responses.empty() || resp->responses[0].partitions.empty()) {
            return std::nullopt;
        }
        const auto& pd = resp->responses[0].partitions[0];
        return consumer_fetch{pd.error_code, pd.preferred_read_replica, pd.high_watermark,
                              pd.records.bytes().size()};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

int16_t produce_when_open(uint16_t port, const std::string& topic, int32_t partition,
                          const std::vector<std::string>& values,
                          std::chrono::milliseconds timeout) {
    constexpr int16_t not_leader_or_follower = 6;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        auto err = produce_via(port, topic, partition, values);
        if (err != not_leader_or_follower || std::chrono::steady_clock::now() >= deadline) {
            return err;
        }
        std::this_thread::sleep_for(50ms);
    }
}

std::string run_bounded(const std::string& cmd, int timeout_seconds, int* exit_code) {
    std::string full = "timeout -k 2 " + std::to_string(timeout_seconds) + " " + cmd;
    std::string out;
    FILE* p = ::popen(full.c_str(), "r");
    if (p == nullptr) {
        if (exit_code != nullptr) {
            *exit_code = -1;
        }
        return out;
    }
    char buf[4096];
    size_t n;
    while ((n = ::fread(buf, 1, sizeof buf, p)) > 0) {
        out.append(buf, n);
    }
    int status = ::pclose(p);
    if (exit_code != nullptr) {
        *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    return out;
}

}  // namespace spool::tests::cluster
