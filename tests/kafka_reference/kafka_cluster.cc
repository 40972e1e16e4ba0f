#include "tests/kafka_reference/kafka_cluster.h"

#include "protocol/messages/metadata.h"
#include "tests/durability/unsynced_mount.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/child_process.h"
#include "tests/integration/kafka_client.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#ifndef SPOOL_SOURCE_DIR
#error "SPOOL_SOURCE_DIR must name the source tree (tests/fixtures/start-kafka.sh)"
#endif

namespace spool::tests::kafka_reference {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// A Kafka-style UUID (22 chars of URL-safe base64, no padding), never starting with '-'.
std::string random_uuid() {
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 22; ++i) {
        out += alphabet[rd() % (i == 0 ? 62 : 64)];
    }
    // The last char of a 16-byte id carries 2 bits: keep it a valid encoding.
    out[21] = "AQgw"[rd() % 4];
    return out;
}

bool port_accepts(uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return ok;
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

std::string kafka_version_of(const std::string& version) {
    std::string cmd = "env " +
                      (version.empty() ? std::string() : "SPOOL_KAFKA_VERSION=" + version) +
                      " bash -c '. " + std::string(SPOOL_SOURCE_DIR) +
                      "/scripts/peers/versions.sh && echo $SPOOL_KAFKA_VERSION'";
    auto out = cluster::run_bounded(cmd, 10);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) {
        out.pop_back();
    }
    return out;
}

std::optional<cluster::metadata_view> metadata_via(uint16_t port,
                                                   const std::vector<std::string>& topics) {
    try {
        kafka_client c(port);
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
        cluster::metadata_view v;
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
        return std::nullopt;  // not listening (killed, paused past the read timeout, starting)
    }
}

kafka_cluster::kafka_cluster(kafka_options options)
    : _options(std::move(options)), _cluster_id(random_uuid()) {
    _root = make_temp_dir("spool-kafka-ref");
    for (size_t i = 0; i < _options.nodes; ++i) {
        node n;
        n.dir = _root / ("node-" + std::to_string(i));
        fs::create_directories(n.dir / "logs");
        n.port = free_port();
        do {
            n.controller_port = free_port();
        } while (n.controller_port == n.port);
        _voters += (_voters.empty() ? "" : ",") + std::to_string(i) +
                   "@localhost:" + std::to_string(n.controller_port);
        _nodes.push_back(std::move(n));
    }
    if (_options.power_cut_mounts) {
        for (size_t i = 0; i < _nodes.size(); ++i) {
            const auto s = std::to_string(i);
            _mounts.push_back(std::make_unique<unsynced_mount>(
                _root / ("backing-" + s), log_dir(i), _root / ("unsynced_fs-" + s + ".log")));
        }
    }
}

kafka_cluster::~kafka_cluster() {
    for (auto& n : _nodes) {
        kill_and_reap(n.pid);
    }
    _mounts.clear();  // unmounted before the mount points go
    std::error_code ec;
    if (const char* keep = std::getenv("SPOOL_KAFKA_REFERENCE_KEEP_LOGS")) {
        // Each node's log, kept for a look after the test: <dir>/<root name>-node-i.log.
        fs::create_directories(keep, ec);
        for (size_t i = 0; i < _nodes.size(); ++i) {
            fs::copy_file(log_path(i),
                          fs::path(keep) /
                              (_root.filename().string() + "-node-" + std::to_string(i) + ".log"),
                          fs::copy_options::overwrite_existing, ec);
        }
    }
    fs::remove_all(_root, ec);
}

bool kafka_cluster::spawn(size_t i) {
    auto& n = _nodes.at(i);
    std::error_code ec;
    fs::remove(n.dir / "kafka.pid", ec);  // a stale pid (reused by now) would read as "running"
    n.log_mark = static_cast<size_t>(fs::exists(log_path(i)) ? fs::file_size(log_path(i)) : 0);
    std::vector<std::string> args = {"/usr/bin/env"};
    if (!_options.version.empty()) {
        args.push_back("SPOOL_KAFKA_VERSION=" + _options.version);
    }
    for (std::string a :
         {std::string("/bin/bash"),
          std::string(SPOOL_SOURCE_DIR) + "/tests/fixtures/start-kafka.sh", std::string("start"),
          std::string("--foreground"), std::string("--data-dir"), n.dir.string(),
          std::string("--port"), std::to_string(n.port), std::string("--controller-port"),
          std::to_string(n.controller_port), std::string("--node-id"), std::to_string(i),
          std::string("--voters"), _voters, std::string("--cluster-id"), _cluster_id}) {
        args.push_back(std::move(a));
    }
    std::vector<std::string> settings = {
        "broker.session.timeout.ms=" + std::to_string(_options.session_timeout_ms),
        "broker.heartbeat.interval.ms=" + std::to_string(_options.heartbeat_interval_ms),
        "unclean.leader.election.enable=false",
        "default.replication.factor=3",
        "offsets.topic.replication.factor=3",
        "transaction.state.log.replication.factor=3",
        "transaction.state.log.min.isr=2",
        "share.coordinator.state.topic.replication.factor=3",
        "share.coordinator.state.topic.min.isr=2",
    };
    settings.insert(settings.end(), _options.overrides.begin(), _options.overrides.end());
    if (i < _options.per_node_overrides.size()) {
        const auto& own = _options.per_node_overrides[i];
        settings.insert(settings.end(), own.begin(), own.end());
    }
    for (auto& kv : settings) {
        args.push_back("--override");
        args.push_back(std::move(kv));
    }
    n.pid = spawn_logged(std::move(args), log_path(i));
    return n.pid > 0;
}

std::string kafka_cluster::start(std::chrono::milliseconds timeout) {
    for (size_t i = 0; i < _mounts.size(); ++i) {
        if (!_mounts[i]->mount()) {
            return "power_cut_mounts: the FUSE mount of node " + std::to_string(i) +
                   "'s volume failed (needs /dev/fuse and root):\n" + _mounts[i]->log_text();
        }
    }
    // All at once: a node finishes starting only once a majority of the voters runs.
    for (size_t i = 0; i < _nodes.size(); ++i) {
        if (!spawn(i)) {
            return "node " + std::to_string(i) + " did not spawn";
        }
    }
    const auto deadline = clock_type::now() + timeout;
    for (size_t i = 0; i < _nodes.size(); ++i) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
        if (!wait_ready(i, std::max(left, std::chrono::milliseconds(1)))) {
            return "node " + std::to_string(i) + " did not serve clients in time\n" + log_tails();
        }
    }
    std::string why;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
    if (!wait_for_cluster(std::max(left, std::chrono::milliseconds(1000)), &why)) {
        return "the cluster did not form: " + why + "\n" + log_tails();
    }
    return {};
}

std::string kafka_cluster::bootstrap() const {
    std::string out;
    for (const auto& n : _nodes) {
        out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(n.port);
    }
    return out;
}

bool kafka_cluster::running(size_t i) {
    auto& n = _nodes.at(i);
    if (n.pid <= 0) {
        return false;
    }
    return !reap_if_exited(n.pid);
}

void kafka_cluster::kill9(size_t i) {
    kill_and_reap(_nodes.at(i).pid);
}

void kafka_cluster::pause(size_t i) {
    if (_nodes.at(i).pid > 0) {
        ::kill(_nodes[i].pid, SIGSTOP);
    }
}

void kafka_cluster::resume(size_t i) {
    if (_nodes.at(i).pid > 0) {
        ::kill(_nodes[i].pid, SIGCONT);
    }
}

bool kafka_cluster::sigterm(size_t i, std::chrono::milliseconds timeout) {
    auto& n = _nodes.at(i);
    if (n.pid <= 0) {
        return false;
    }
    ::kill(n.pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!reap_if_exited(n.pid)) {
        if (std::chrono::steady_clock::now() >= deadline) {
            kill_and_reap(n.pid);
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
}

bool kafka_cluster::restart(size_t i, bool wait, std::chrono::milliseconds timeout) {
    if (running(i)) {
        return false;
    }
    if (!spawn(i)) {
        return false;
    }
    if (wait) {
        return wait_ready(i, timeout);
    }
    // The JVM (after the script's exec) runs: a fixture that failed (e.g. format) exits at once.
    std::this_thread::sleep_for(300ms);
    return running(i);
}

bool kafka_cluster::wait_ready(size_t i, std::chrono::milliseconds timeout) {
    const auto deadline = clock_type::now() + timeout;
    while (true) {
        if (!running(i)) {
            return false;
        }
        const auto text = log_text(i);
        const auto mark = std::min(_nodes[i].log_mark, text.size());
        if (text.find("Kafka Server started", mark) != std::string::npos &&
            port_accepts(_nodes[i].port)) {
            return true;
        }
        if (clock_type::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(50ms);
    }
}

std::string kafka_cluster::power_cut(size_t i) {
    if (i >= _mounts.size()) {
        return "power_cut: node " + std::to_string(i) + " has no power-cut volume";
    }
    // The process first, as a power loss stops it with the disk (it never sees the failed disk).
    const size_t cuts_before = count_of(_mounts[i]->log_text(), "power cut:");
    kill9(i);
    _mounts[i]->power_cut();
    _mounts[i]->unmount();
    if (count_of(_mounts[i]->log_text(), "power cut:") != cuts_before + 1) {
        return "power_cut: unsynced_fs of node " + std::to_string(i) +
               " did not report the cut:\n" + _mounts[i]->log_text();
    }
    if (!_mounts[i]->mount()) {
        return "power_cut: mounting node " + std::to_string(i) + "'s volume again failed:\n" +
               _mounts[i]->log_text();
    }
    return {};
}

std::string kafka_cluster::replace_volume(size_t i) {
    if (running(i)) {
        return "replace_volume: node " + std::to_string(i) + " is running";
    }
    const auto n = std::to_string(i);
    if (i >= _mounts.size()) {
        std::error_code ec;
        fs::remove_all(log_dir(i), ec);
        fs::create_directories(log_dir(i), ec);
        return ec ? "replace_volume: " + ec.message() : std::string();
    }
    _mounts[i]->unmount();
    _mounts[i] = std::make_unique<unsynced_mount>(
        _root / ("backing-" + n + "-replacement-" + std::to_string(++_replaced)), log_dir(i),
        _root / ("unsynced_fs-" + n + ".log"));
    if (!_mounts[i]->mount()) {
        return "replace_volume: mounting node " + n + "'s new volume failed:\n" +
               _mounts[i]->log_text();
    }
    std::error_code ec;
    if (!fs::is_empty(log_dir(i), ec) || ec) {
        return "replace_volume: node " + n + "'s new volume is not empty";
    }
    return {};
}

std::string kafka_cluster::volume_log(size_t i) const {
    return i < _mounts.size() ? _mounts[i]->log_text() : std::string();
}

std::optional<cluster::metadata_view> kafka_cluster::metadata(
    size_t i, const std::vector<std::string>& topics) {
    return metadata_via(_nodes.at(i).port, topics);
}

bool kafka_cluster::wait_for_cluster(std::chrono::milliseconds timeout, std::string* why) {
    const auto deadline = clock_type::now() + timeout;
    for (size_t i = 0; i < _nodes.size(); ++i) {
        if (!running(i)) {
            continue;
        }
        cluster::metadata_view last;
        while (true) {
            auto v = metadata(i, {"__none__"});
            if (v && v->brokers.size() == _nodes.size() && v->controller_id >= 0) {
                break;
            }
            if (v) {
                last = *v;
            }
            if (clock_type::now() >= deadline) {
                if (why != nullptr) {
                    *why = "node " + std::to_string(i) + " last showed " + last.describe();
                }
                return false;
            }
            std::this_thread::sleep_for(100ms);
        }
    }
    return true;
}

std::string kafka_cluster::log_text(size_t i) const {
    return read_text_file(log_path(i));
}

std::string kafka_cluster::log_tails(size_t lines) const {
    std::string out;
    for (size_t i = 0; i < _nodes.size(); ++i) {
        out += "---- kafka node " + std::to_string(i) + " ----\n" + tail(log_text(i), lines) + "\n";
    }
    return out;
}

std::vector<size_t> kafka_cluster::log_marks() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < _nodes.size(); ++i) {
        std::error_code ec;
        auto size = fs::file_size(log_path(i), ec);
        out.push_back(ec ? 0 : static_cast<size_t>(size));
    }
    return out;
}

std::string kafka_cluster::controller_events(size_t i, const std::vector<size_t>& from,
                                             std::chrono::system_clock::time_point since) const {
    // The active controller logs these (ClusterControlManager, ReplicationControlManager); a
    // registration refused while the old incarnation's session lives is logged as a
    // DuplicateBrokerRegistrationException of registerBroker, without the node id.
    const std::string id = std::to_string(i);
    const std::vector<std::string> needles = {
        "new incarnation of broker " + id + ".",
        "Fencing broker " + id + " ",
        "nclean shutdown of broker " + id,
    };
    std::map<std::string, long> first_seen;  // message -> ms after `since`
    size_t refused = 0;
    long first_refused = -1;
    long last_refused = -1;
    // "[2026-12-06 01:23:04,240] INFO [QuorumController id=1] message (class)"
    auto at_ms = [&](const std::string& line) -> long {
        std::tm tm{};
        int ms = 0;
        if (std::sscanf(line.c_str(), "[%d-%d-%d %d:%d:%d,%d]", &tm.tm_year, &tm.tm_mon,
                        &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
            return -1;
        }
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        tm.tm_isdst = -1;
        auto t = std::chrono::system_clock::from_time_t(std::mktime(&tm)) +
                 std::chrono::milliseconds(ms);
        return static_cast<long>(
            std::chrono::duration_cast<std::chrono::milliseconds>(t - since).count());
    };
    for (size_t k = 0; k < _nodes.size(); ++k) {
        const auto text = log_text(k);
        std::istringstream in(text.substr(std::min(k < from.size() ? from[k] : 0, text.size())));
        std::string line;
        while (std::getline(in, line)) {
            if (line.find("registerBroker: event failed with DuplicateBrokerRegistration") !=
                std::string::npos) {
                ++refused;
                const long t = at_ms(line);
                first_refused = first_refused < 0 ? t : std::min(first_refused, t);
                last_refused = std::max(last_refused, t);
                continue;
            }
            for (const auto& n : needles) {
                if (line.find(n) == std::string::npos) {
                    continue;
                }
                auto open =
                    line.find("] ", line.find("] ") + 2);  // after "[QuorumController id=K]"
                auto msg = open == std::string::npos ? line : line.substr(open + 2);
                msg = msg.substr(0, std::min<size_t>(msg.find(" (org."), 110));
                const long t = at_ms(line);
                auto [it, inserted] = first_seen.try_emplace(msg, t);
                if (!inserted && t >= 0 && t < it->second) {
                    it->second = t;
                }
            }
        }
    }
    std::vector<std::pair<long, std::string>> events;
    for (const auto& [msg, t] : first_seen) {
        events.emplace_back(t, msg);
    }
    if (refused > 0) {
        events.emplace_back(first_refused,
                            std::to_string(refused) +
                                " registrations refused (DuplicateBrokerRegistration) until +" +
                                std::to_string(last_refused) + " ms");
    }
    std::sort(events.begin(), events.end());
    std::string out;
    for (const auto& [t, msg] : events) {
        out += (out.empty() ? "" : "; ") + std::string("+") + std::to_string(t) + " ms " + msg;
    }
    return out.empty() ? "(none logged)" : out;
}

}  // namespace spool::tests::kafka_reference
