#include "tests/kafka_reference/rack_fetch_scenario.h"

#include "tests/cluster/cluster_harness.h"

#include <chrono>
#include <cstdio>
#include <thread>

namespace spool::tests::kafka_reference {

namespace {

using namespace std::chrono_literals;

const std::string topic = "racked";
constexpr int records = 50;

std::string zone(int32_t node) {
    return "zone-" + std::to_string(node);
}

}  // namespace

std::string rack_fetch_answer::text() const {
    return "error " + std::to_string(error) + ", preferred " + preferred +
           (records ? ", records" : ", no records");
}

rack_fetch_result run_rack_fetch(power_cut_target& t) {
    rack_fetch_result r;
    r.target = t.name();
    auto note = [&](std::string what) { r.notes.push_back(std::move(what)); };
    if (auto err = t.start(); !err.empty()) {
        note("the cluster did not start: " + err);
        return r;
    }
    std::string message;
    if (auto e = cluster::create_topic_via(t.port(0), topic, 1, 30000, &message, 3); e != 0) {
        note("CreateTopics: error " + std::to_string(e) + " " + message);
        return r;
    }
    std::string why;
    auto p = wait_for_partition(
        t, topic, [](const cluster::partition_info& p) { return p.leader >= 0 && p.isr.size() == 3; },
        60s, &why);
    if (!p) {
        note("no leader with 3 in sync: " + why);
        return r;
    }
    std::vector<std::string> values;
    for (int i = 0; i < records; ++i) {
        values.push_back("v" + std::to_string(i));
    }
    if (auto e = cluster::produce_when_open(t.port(static_cast<size_t>(p->leader)), topic, 0,
                                            values, 20s);
        e != 0) {
        note("Produce: error " + std::to_string(e));
        return r;
    }
    const int32_t leader = p->leader;
    const int32_t follower = (leader + 1) % 3;
    const auto leader_port = t.port(static_cast<size_t>(leader));
    const auto follower_port = t.port(static_cast<size_t>(follower));
    auto ask = [&](uint16_t port, int16_t version, const std::string& rack) {
        rack_fetch_answer a;
        auto f = cluster::consumer_fetch_via(port, version, topic, 0, 0, rack);
        if (!f) {
            a.preferred = "no answer";
            return a;
        }
        a.error = f->error;
        a.preferred = f->preferred_read_replica == follower ? "follower"
                      : f->preferred_read_replica == -1    ? "none"
                                                           : "other";
        a.records = f->record_bytes > 0;
        return a;
    };
    // The follower learns the high watermark with its next fetch.
    auto until = std::chrono::steady_clock::now() + 30s;
    for (;;) {
        auto f = cluster::consumer_fetch_via(follower_port, 12, topic, 0, 0, zone(follower));
        if (f && f->error == 0 && f->high_watermark == records) {
            break;
        }
        if (std::chrono::steady_clock::now() > until) {
            note("the follower never reached high watermark " + std::to_string(records));
            return r;
        }
        std::this_thread::sleep_for(100ms);
    }
    r.answers = {
        {"leader, v12, the follower's rack", ask(leader_port, 12, zone(follower))},
        {"leader, v12, the leader's rack", ask(leader_port, 12, zone(leader))},
        {"leader, v12, no rack", ask(leader_port, 12, "")},
        {"leader, v12, a rack nobody is in", ask(leader_port, 12, "zone-9")},
        {"follower, v12, its rack", ask(follower_port, 12, zone(follower))},
        {"follower, v10", ask(follower_port, 10, "")},
    };
    r.measured = true;
    for (const auto& [name, a] : r.answers) {
        print_measured(r.target, "rack fetch: %s: %s", name.c_str(), a.text().c_str());
    }
    return r;
}

}  // namespace spool::tests::kafka_reference
