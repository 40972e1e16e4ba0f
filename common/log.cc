#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <string>

namespace spool::log {

namespace {
std::mutex registry_mutex;
spdlog::level::level_enum current_level = spdlog::level::info;
}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view module) {
    std::lock_guard lock(registry_mutex);
    std::string name(module);
    if (auto existing = spdlog::get(name)) {
        return existing;
    }
    auto logger = spdlog::stderr_color_mt(name);
    logger->set_level(current_level);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
    return logger;
}

void set_level(std::string_view level) {
    std::lock_guard lock(registry_mutex);
    current_level = spdlog::level::from_str(std::string(level));
    spdlog::apply_all(
        [](const std::shared_ptr<spdlog::logger>& l) { l->set_level(current_level); });
}

}  // namespace spool::log
