// Serves the broker HTTP endpoint over in-memory views (fake_views.h) with every probe
// registered and some traffic recorded, so that a scrape shows every metric family. Prints
// "port <n>" on stdout once listening and serves until SIGTERM/SIGINT.
//
// usage: http_fixture_server [listen-address]   (default 127.0.0.1:0)

#include "broker/http/http_service.h"
#include "broker/http/tests/fake_views.h"
#include "broker/metrics/callback_metrics.h"
#include "broker/metrics/group_probe.h"
#include "broker/metrics/request_probe.h"
#include "broker/metrics/storage_probe.h"
#include "broker/metrics/topic_probe.h"

#include <csignal>
#include <iostream>

using namespace spool::broker;
using namespace spool::broker::http::testing;

int main(int argc, char** argv) {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread starts

    metrics::registry reg;
    constexpr std::array<metrics::api_label, 3> apis{
        {{0, "produce"}, {1, "fetch"}, {18, "api_versions"}}};
    metrics::request_probe requests(reg, apis);
    metrics::topic_probe topics(reg);
    metrics::storage_probe storage(reg);
    metrics::group_probe groups(reg);
    metrics::export_net_counters(reg, {.connections_active = [] { return 2.0; },
                                       .connections_accepted = [] { return 5.0; },
                                       .malformed_requests = [] { return 1.0; },
                                       .bytes_received = [] { return 4096.0; },
                                       .bytes_sent = [] { return 8192.0; }});
    requests.request_completed(0, std::chrono::microseconds(800), false);
    requests.request_completed(1, std::chrono::milliseconds(3), true);
    requests.request_dequeued(std::chrono::microseconds(20));
    topics.produced("orders", 1000, 10);
    topics.fetched("orders", 600, 6);
    storage.fsync_done(std::chrono::milliseconds(1));
    storage.storage_error(metrics::storage_op::write);
    groups.rebalance_completed("billing");

    memory_cluster_view cluster;
    cluster.state.set(single_broker_cluster());
    memory_log_view logs;
    logs.state.set({{{"orders", model::partition_id{0}},
                     model::offset{0},
                     model::offset{50},
                     model::offset{50},
                     8000,
                     1},
                    {{"orders", model::partition_id{1}},
                     model::offset{10},
                     model::offset{20},
                     model::offset{18},
                     2000,
                     2}});
    memory_group_view group_view;
    group_view.group_state.set({{"billing", "Stable", "consumer", 1, 1}});
    group_view.offset_state.set(
        {{"billing", {"orders", model::partition_id{0}}, model::offset{45}}});

    http::lifecycle_state lifecycle({http::condition::logs_loaded});
    lifecycle.set(http::condition::logs_loaded, true);

    spool::http::server_options options;
    auto ep = spool::http::parse_endpoint(argc > 1 ? argv[1] : "127.0.0.1:0");
    if (!ep) {
        std::cerr << "bad listen address\n";
        return 2;
    }
    options.endpoint = ep.value();
    options.max_body_bytes = 1024;
    http::http_service service(options, {{node(1),
                                          "0.1.0-fixture",
                                          {{"PLAINTEXT", "localhost:9092"}},
                                          std::chrono::system_clock::now()},
                                         &lifecycle,
                                         &reg,
                                         &cluster,
                                         &logs,
                                         &group_view});
    if (auto r = service.start(); !r) {
        std::cerr << "cannot listen: " << r.error().message() << "\n";
        return 1;
    }
    std::cout << "port " << service.local_endpoint().port() << std::endl;
    int sig = 0;
    sigwait(&signals, &sig);
    lifecycle.begin_shutdown();
    service.stop();
    return 0;
}
