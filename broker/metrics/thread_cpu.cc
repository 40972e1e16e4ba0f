#include "broker/metrics/thread_cpu.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace spool::broker::metrics {

namespace {

// utime + stime in clock ticks from /proc/self/task/<tid>/stat. The comm field (2nd) is in
// parentheses and may hold spaces, so fields are counted from the last ')'.
bool read_ticks(const std::filesystem::path& stat, unsigned long long& ticks) {
    std::ifstream in(stat);
    std::string line;
    if (!std::getline(in, line))
        return false;
    auto close = line.rfind(')');
    if (close == std::string::npos)
        return false;
    std::istringstream rest(line.substr(close + 1));
    std::string field;
    // After ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime(14) stime(15).
    for (int i = 3; i <= 13 && rest >> field; ++i) {
    }
    unsigned long long utime = 0, stime = 0;
    if (!(rest >> utime >> stime))
        return false;
    ticks = utime + stime;
    return true;
}

class thread_cpu : public prometheus::Collectable {
public:
    std::vector<prometheus::MetricFamily> Collect() const override {
        prometheus::MetricFamily f;
        f.name = "spool_broker_thread_cpu_seconds_total";
        f.help =
            "CPU time (user + system) of the broker's threads by name; the rate of a shard-<n> "
            "thread is that shard's busy ratio.";
        f.type = prometheus::MetricType::Counter;
        std::map<std::string, unsigned long long> by_name;
        std::error_code ec;
        for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
            std::ifstream comm_file(task.path() / "comm");
            std::string comm;
            unsigned long long ticks = 0;
            if (!std::getline(comm_file, comm) || !read_ticks(task.path() / "stat", ticks))
                continue;  // the thread ended while we looked
            by_name[comm] += ticks;
        }
        static const double tick = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
        for (const auto& [name, ticks] : by_name) {
            prometheus::ClientMetric m;
            m.label.push_back({"thread", name});
            m.counter.value = static_cast<double>(ticks) * tick;
            f.metric.push_back(std::move(m));
        }
        return {std::move(f)};
    }
};

}  // namespace

void export_thread_cpu(registry& reg) {
    reg.own(std::make_shared<thread_cpu>());
}

}  // namespace spool::broker::metrics
