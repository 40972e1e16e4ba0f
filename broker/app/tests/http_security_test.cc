// The HTTP endpoint's keys are those of a listener named "http": a Kafka listener of that name
// would share them, so start-up refuses it once the endpoint uses them (HTTPS or authentication).

#include "broker/app/http_security.h"
#include "broker/app/tests/app_config.h"

#include <gtest/gtest.h>

namespace spool::broker::app {
namespace {

using testing::config_with;

const char* const http_listeners[] = {
    "listeners=PLAINTEXT://:9092,HTTP://:9093",
    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,HTTP:SSL",
};

TEST(http_security, test_a_kafka_listener_named_http_is_refused_with_https_or_authentication) {
    for (const char* on : {"http.tls.enabled=true", "http.authentication.enabled=true"}) {
        auto c = config_with({http_listeners[0], http_listeners[1], on});
        auto error = http_listener_name_clash(*c);
        EXPECT_NE(error.find("HTTP://:9093"), std::string::npos) << on << ": " << error;
    }
}

TEST(http_security, test_a_listener_named_http_is_left_alone_while_the_endpoint_uses_no_keys) {
    auto c = config_with({http_listeners[0], http_listeners[1]});
    EXPECT_EQ(http_listener_name_clash(*c), "");
    auto other = config_with({"listeners=PLAINTEXT://:9092,HTTPS_CLIENTS://:9093",
                              "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,"
                              "HTTPS_CLIENTS:SSL",
                              "http.tls.enabled=true"});
    EXPECT_EQ(http_listener_name_clash(*other), "");
}

}  // namespace
}  // namespace spool::broker::app
