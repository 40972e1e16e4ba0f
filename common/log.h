#pragma once

// Logging for every Spool binary, on spdlog. One named logger per module so that a log line
// says where it came from ("storage", "net", ...); all share one sink on stderr.

#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

namespace spool::log {

// Returns the logger for a module, creating it on first use. Thread-safe.
std::shared_ptr<spdlog::logger> get(std::string_view module);

// Sets the level of every logger, e.g. from a --log-level flag: trace, debug, info, warn, error.
void set_level(std::string_view level);

}  // namespace spool::log
