#pragma once

// Test helpers of broker/app: a configuration from overrides, listener URIs parsed.

#include "broker/config/broker_config.h"
#include "broker/net/listener.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace spool::broker::app::testing {

inline std::unique_ptr<config::broker_config> config_with(std::vector<std::string> overrides) {
    std::string error;
    auto c = config::broker_config::from_yaml_text("", overrides, &error);
    EXPECT_TRUE(c) << error;
    return c;
}

inline std::vector<net::listener_address> parse(const std::vector<std::string>& uris) {
    std::vector<net::listener_address> out;
    for (const auto& u : uris) {
        std::string error;
        auto l = net::parse_listener(u, &error);
        EXPECT_TRUE(l) << error;
        out.push_back(*l);
    }
    return out;
}

}  // namespace spool::broker::app::testing
