#include "tests/e2e/harness.h"

#include "operator/kube/config.h"

#include <arpa/inet.h>
#include <cpprest/http_client.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace spool::e2e {

namespace {
// CTest sets SPOOL_E2E_ROOT; the fixtures keep their state in fixed places below it.
std::string root() {
    const char* p = std::getenv("SPOOL_E2E_ROOT");
    return p ? p : ".";
}
}  // namespace

std::string kubeconfig_path() {
    return control_plane_dir() + "/kubeconfig";
}
std::string control_plane_dir() {
    return root() + "/control-plane";
}

std::unique_ptr<op::kube::http_client> client_for_context(const std::string& context) {
    auto cfg = op::kube::load_kubeconfig(kubeconfig_path(), context);
    if (!cfg) {
        ADD_FAILURE() << "kubeconfig: " << cfg.error().message;
        return nullptr;
    }
    return std::make_unique<op::kube::http_client>(cfg.value());
}

std::unique_ptr<op::kube::http_client> admin_client() {
    return client_for_context("");
}

json parse(const std::string& text) {
    auto v = op::parse_json(text);
    EXPECT_TRUE(v.has_value()) << text;
    return v.value_or(json::null());
}

json plaintext_security() {
    return op::obj({{"listeners", op::obj({{"internal", op::obj({{"tls", op::boolean(false)},
                                                                 {"authentication",
                                                                  op::str("none")}})}})}});
}

json demo_cluster(int replicas) {
    return op::obj({{"apiVersion", op::str("spool.dev/v1alpha1")},
                    {"kind", op::str("Cluster")},
                    {"metadata", op::obj({{"name", op::str("demo")}})},
                    {"spec", op::obj({{"replicas", op::num(replicas)},
                                      {"security", plaintext_security()}})}});
}

test_namespace::test_namespace(op::kube::client& api) : _api(api) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string base = std::string(info->name()).substr(0, 40);
    std::replace(base.begin(), base.end(), '_', '-');
    _name = "e2e-" + base + "-" + std::to_string(::getpid());
    auto r = _api.create(op::kube::kinds::namespace_, "",
                         op::obj({{"apiVersion", op::str("v1")},
                                  {"kind", op::str("Namespace")},
                                  {"metadata", op::obj({{"name", op::str(_name)}})}}));
    EXPECT_TRUE(r) << "create namespace " << _name << ": " << r.error().message;
}

test_namespace::~test_namespace() {
    if (!std::getenv("SPOOL_E2E_KEEP")) {
        (void)_api.remove(op::kube::kinds::namespace_, "", _name);
    }
}

operator_process::operator_process(std::vector<std::string> extra_args) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    _log_path = control_plane_dir() + "/operator-" + info->name() + "-" +
                std::to_string(::getpid()) + "-" + std::to_string(std::rand()) + ".log";
    int port = free_port();
    _metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
    std::vector<std::string> args = {SPOOL_OPERATOR_BINARY,
                                     "--kubeconfig",
                                     kubeconfig_path(),
                                     "--metrics-port",
                                     std::to_string(port),
                                     "--log-level",
                                     "debug"};
    // The chart's etcd, as helm names it: these tests run no broker pod (no kubelet), so only the
    // rendered broker config and the validation (several brokers need an etcd) see it.
    args.push_back("--default-etcd-endpoints=http://spool-etcd.spool-system.svc:2379");
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const pid_t parent = ::getpid();
    _pid = ::fork();
    if (_pid == 0) {
        // Dies with the test process, even when a crash skips the destructor; a parent that
        // died before prctl() sent nothing (getppid() no longer names it then).
        if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || ::getppid() != parent) {
            std::_Exit(127);
        }
        FILE* log = std::fopen(_log_path.c_str(), "w");
        if (log) {
            ::dup2(fileno(log), 1);
            ::dup2(fileno(log), 2);
        }
        std::vector<char*> argv;
        for (auto& a : args) {
            argv.push_back(a.data());
        }
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        std::_Exit(127);
    }
}

operator_process::~operator_process() {
    stop();
}

bool operator_process::running() {
    if (_pid <= 0) {
        return false;
    }
    int status = 0;
    return ::waitpid(_pid, &status, WNOHANG) == 0;
}

int operator_process::stop() {
    if (_pid <= 0) {
        return -1;
    }
    ::kill(_pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 150; ++i) {
        if (::waitpid(_pid, &status, WNOHANG) == _pid) {
            _pid = -1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "spool-operator did not stop within 15 s of SIGTERM";
    ::kill(_pid, SIGKILL);
    ::waitpid(_pid, &status, 0);
    _pid = -1;
    return -1;
}

std::string operator_process::log() const {
    std::ifstream in(_log_path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) {
            return true;
        }
        std::this_thread::sleep_for(every);
    }
    return condition();
}

std::string http_get(const std::string& url) {
    try {
        web::http::client::http_client client(url);
        auto resp = client.request(web::http::methods::GET).get();
        return resp.extract_utf8string(true).get();
    } catch (const std::exception&) {
        return {};
    }
}

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

int run(const std::string& command, std::string* output) {
    std::string full = command + " 2>&1";
    FILE* pipe = ::popen(full.c_str(), "r");
    if (!pipe) {
        return -1;
    }
    std::array<char, 4096> buf;
    std::string out;
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) {
        out.append(buf.data(), n);
    }
    int status = ::pclose(pipe);
    if (output) {
        *output = out;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string broker_bootstrap() {
    std::ifstream in(root() + "/broker/bootstrap");
    std::string s;
    std::getline(in, s);
    return s;
}

std::string broker_http_address() {
    std::ifstream in(root() + "/broker/http");
    std::string s;
    std::getline(in, s);
    return s;
}

int kcat_partitions(const std::string& topic) {
    std::string out;
    // All topics, not -t: a metadata request naming a topic auto-creates it on Kafka.
    run("kcat -b " + broker_bootstrap() + " -L -J", &out);
    auto j = op::parse_json(out.substr(std::min(out.find('{'), out.size())));
    if (!j || !j->has_field("topics")) {
        return -1;
    }
    for (const auto& t : j->at("topics").as_array()) {
        if (t.at("topic").as_string() == topic) {
            if (t.has_field("err") && !t.at("err").is_null()) {
                return -1;
            }
            return static_cast<int>(t.at("partitions").as_array().size());
        }
    }
    return -1;
}

namespace {

std::string config_command() {
#ifdef SPOOL_KAFKA_LIBS
    return std::string("java -cp '") + SPOOL_KAFKA_LIBS + "/*' kafka.admin.ConfigCommand" +
           " --bootstrap-server " + broker_bootstrap() + " --entity-type topics";
#else
    return {};
#endif
}

}  // namespace

bool kafka_config_tool_available() {
    return !config_command().empty() && run("command -v java") == 0;
}

std::optional<std::map<std::string, std::string>> kafka_topic_configs(const std::string& topic) {
    if (!kafka_config_tool_available()) {
        return std::nullopt;
    }
    std::string out;
    if (run(config_command() + " --entity-name " + topic + " --describe", &out) != 0) {
        return std::nullopt;
    }
    // "Dynamic configs for topic T are:" then "  key=value sensitive=false synonyms={...}".
    std::map<std::string, std::string> configs;
    std::istringstream lines(out);
    std::string line;
    bool listing = false;
    while (std::getline(lines, line)) {
        if (line.rfind("Dynamic configs for topic", 0) == 0) {
            listing = true;
            continue;
        }
        if (!listing || line.rfind("  ", 0) != 0) {
            continue;
        }
        auto entry = line.substr(2, line.find(" sensitive=") - 2);
        auto eq = entry.find('=');
        if (eq != std::string::npos) {
            configs[entry.substr(0, eq)] = entry.substr(eq + 1);
        }
    }
    if (!listing) {
        return std::nullopt;
    }
    return configs;
}

bool kafka_set_topic_config(const std::string& topic, const std::string& key,
                            const std::string& value) {
    if (!kafka_config_tool_available()) {
        return false;
    }
    return run(config_command() + " --entity-name " + topic + " --alter --add-config " + key + "=" +
               value) == 0;
}

}  // namespace spool::e2e
