#include "common/log.h"

#include "common/queued_log_sink.h"

#include <unistd.h>

#include <mutex>
#include <string>

namespace spool::log {

namespace {
std::mutex registry_mutex;
spdlog::level::level_enum current_level = spdlog::level::info;

// One sink on stderr for every logger: its writer thread keeps the callers off the write().
// Owned with the loggers (spdlog's registry keeps them until the process exits), so it outlives
// every logger that can still log.
const std::shared_ptr<queued_log_sink>& stderr_sink() {
    static const auto sink = std::make_shared<queued_log_sink>(STDERR_FILENO);
    return sink;
}
}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view module) {
    std::lock_guard lock(registry_mutex);
    std::string name(module);
    if (auto existing = spdlog::get(name)) {
        return existing;
    }
    auto logger = std::make_shared<spdlog::logger>(name, stderr_sink());
    logger->set_level(current_level);
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
    spdlog::register_logger(logger);
    return logger;
}

void set_level(std::string_view level) {
    std::lock_guard lock(registry_mutex);
    current_level = spdlog::level::from_str(std::string(level));
    spdlog::apply_all(
        [](const std::shared_ptr<spdlog::logger>& l) { l->set_level(current_level); });
}

void flush() {
    stderr_sink()->flush();
}

}  // namespace spool::log
