#pragma once

// Test helper: a broker_config from YAML text and overrides, failing the test (with the error)
// when it does not load.

#include "broker/config/broker_config.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::config {

inline std::unique_ptr<broker_config> must_load(std::string_view yaml,
                                                const std::vector<std::string>& overrides = {}) {
    std::string error;
    auto cfg = broker_config::from_yaml_text(yaml, overrides, &error);
    EXPECT_NE(cfg, nullptr) << error;
    return cfg;
}

}  // namespace spool::broker::config
