#include "broker/runtime/cpu_placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace spool::broker::runtime {

namespace {

namespace fs = std::filesystem;

std::optional<int64_t> parse_int(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.remove_suffix(1);
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return v;
}

std::optional<std::string> read_small_file(const fs::path& path) {
    std::ifstream in(path);
    if (!in) {
        return std::nullopt;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void keep_lowest(std::optional<double>& lowest, std::optional<double> limit) {
    if (limit && (!lowest || *limit < *lowest)) {
        lowest = limit;
    }
}

// The cgroup and its ancestors, from the leaf up: "/a/b" -> "a/b", "a", "".
std::vector<fs::path> self_and_ancestors(std::string_view cgroup) {
    std::vector<fs::path> out;
    fs::path p = fs::path(cgroup).relative_path();
    for (;;) {
        out.push_back(p);
        if (p.empty()) {
            break;
        }
        p = p.parent_path();
    }
    return out;
}

std::optional<double> v1_limit(const fs::path& dir) {
    auto quota = read_small_file(dir / "cpu.cfs_quota_us");
    auto period = read_small_file(dir / "cpu.cfs_period_us");
    if (!quota || !period) {
        return std::nullopt;
    }
    auto q = parse_int(*quota);
    auto p = parse_int(*period);
    if (!q || !p || *q <= 0 || *p <= 0) {
        return std::nullopt;  // -1: no limit
    }
    return double(*q) / double(*p);
}

std::optional<double> read_cgroup_limit(const fs::path& root) {
    auto text = read_small_file(root / "proc/self/cgroup");
    if (!text) {
        return std::nullopt;
    }
    std::optional<double> lowest;
    std::istringstream lines(*text);
    std::string line;
    while (std::getline(lines, line)) {
        // hierarchy-id:controllers:path
        auto first = line.find(':');
        auto second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) {
            continue;
        }
        std::string controllers = line.substr(first + 1, second - first - 1);
        std::string path = line.substr(second + 1);
        if (controllers.empty()) {  // cgroup v2
            for (const auto& dir : self_and_ancestors(path)) {
                if (auto max = read_small_file(root / "sys/fs/cgroup" / dir / "cpu.max")) {
                    keep_lowest(lowest, parse_cpu_max(*max));
                }
            }
            continue;
        }
        std::istringstream names(controllers);
        std::string name;
        bool has_cpu = false;
        while (std::getline(names, name, ',')) {
            has_cpu = has_cpu || name == "cpu";
        }
        if (!has_cpu) {
            continue;
        }
        for (const char* mount : {"sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpu"}) {
            for (const auto& dir : self_and_ancestors(path)) {
                keep_lowest(lowest, v1_limit(root / mount / dir));
            }
        }
    }
    return lowest;
}

std::vector<int> read_affinity() {
    std::vector<int> cpus;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (CPU_ISSET(cpu, &set)) {
                cpus.push_back(cpu);
            }
        }
    }
#endif
    if (cpus.empty()) {
        // Unknown: as many as the hardware reports, numbered from 0.
        auto n = std::max(1u, std::thread::hardware_concurrency());
        for (unsigned i = 0; i < n; ++i) {
            cpus.push_back(static_cast<int>(i));
        }
    }
    return cpus;
}

}  // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
    auto space = text.find(' ');
    if (space == std::string_view::npos) {
        return std::nullopt;
    }
    auto quota = text.substr(0, space);
    auto period = parse_int(text.substr(space + 1));
    if (quota == "max" || !period || *period <= 0) {
        return std::nullopt;
    }
    auto q = parse_int(quota);
    if (!q || *q <= 0) {
        return std::nullopt;
    }
    return double(*q) / double(*period);
}

std::optional<double> read_cgroup_cpu_limit(const std::string& root) {
    return read_cgroup_limit(fs::path(root));
}

cpu_budget read_cpu_budget() {
    return cpu_budget{read_affinity(), read_cgroup_limit("/")};
}

size_t default_shard_count(const cpu_budget& budget) {
    size_t n = std::max<size_t>(1, budget.allowed.size());
    if (budget.limit_cpus) {
        n = std::min(n, static_cast<size_t>(std::max(1.0, std::ceil(*budget.limit_cpus))));
    }
    return n;
}

shard_placement place_shards(size_t shards, const cpu_budget& budget, bool pin) {
    const size_t cpus = budget.allowed.size();
    if (!pin) {
        return {{}, "shards not pinned (spool.cpu.pinning=false)"};
    }
    if (shards > cpus) {
        return {{}, fmt::format("shards not pinned: {} shards for {} allowed CPUs", shards, cpus)};
    }
    shard_placement p;
    p.cpus.assign(budget.allowed.begin(),
                  budget.allowed.begin() + static_cast<std::ptrdiff_t>(shards));
    p.reason = fmt::format("shards pinned to CPUs {}", fmt::join(p.cpus, ","));
    return p;
}

bool pin_this_thread(int cpu) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
    if (rc != 0) {
        errno = rc;
        return false;
    }
    return true;
#else
    (void)cpu;
    return false;
#endif
}

}  // namespace spool::broker::runtime
