#pragma once

// spool-broker's command line: --config FILE, --override key=value (repeatable), --version,
// --log-level, --print-config-docs. Parsing only; main decides what to do.

#include <optional>
#include <string>
#include <vector>

namespace spool::broker::config {

struct command_line {
    std::optional<std::string> config_path;
    std::vector<std::string> overrides;
    std::string log_level = "info";
    bool show_version = false;
    bool show_help = false;
    bool print_config_docs = false;
    std::string help_text;
};

// Returns the parsed line, or sets *error (e.g. unknown flag, missing argument).
std::optional<command_line> parse_command_line(int argc, const char* const* argv,
                                               std::string* error);

// The property table as Markdown (docs/configuration.md is generated from this).
std::string render_config_docs();

}  // namespace spool::broker::config
