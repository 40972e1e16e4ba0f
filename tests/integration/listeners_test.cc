// Several Kafka listeners on one spool-broker process: each answers Metadata with the address
// advertised for it (a client that connected to the POD listener is told the POD addresses),
// and a listener whose name has no PLAINTEXT mapping stops the start with Kafka's complaint.

#include "protocol/messages/metadata.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

pr::metadata_response metadata_through(uint16_t port) {
    kafka_client c(port);
    c.set_read_timeout(std::chrono::seconds(10));
    auto resp = c.call<pr::metadata_request, pr::metadata_response>(9, pr::metadata_request{});
    EXPECT_TRUE(resp.has_value());
    return resp.value_or(pr::metadata_response{});
}

TEST(listeners, test_each_listener_advertises_its_own_address) {
    broker_process broker;
    broker.set_port(free_port());
    uint16_t pod_port = free_port();
    std::string plain = std::to_string(broker.port());
    std::string pod = std::to_string(pod_port);
    broker.add_override("listeners=PLAINTEXT://127.0.0.1:" + plain + ",POD://127.0.0.1:" + pod);
    broker.add_override("advertised.listeners=PLAINTEXT://localhost:" + plain +
                        ",POD://127.0.0.1:" + pod);
    broker.add_override("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,POD:PLAINTEXT");
    ASSERT_TRUE(broker.start()) << broker.log_text();

    auto through_plain = metadata_through(broker.port());
    ASSERT_EQ(through_plain.brokers.size(), 1u);
    EXPECT_EQ(through_plain.brokers[0].host, "localhost");
    EXPECT_EQ(through_plain.brokers[0].port, broker.port());

    auto through_pod = metadata_through(pod_port);
    ASSERT_EQ(through_pod.brokers.size(), 1u);
    EXPECT_EQ(through_pod.brokers[0].host, "127.0.0.1");
    EXPECT_EQ(through_pod.brokers[0].port, pod_port);

    auto info = broker.stop();
    EXPECT_TRUE(info.exited);
    EXPECT_EQ(info.status, 0) << broker.log_text();
}

TEST(listeners, test_a_listener_name_without_a_protocol_stops_the_start) {
    broker_process broker;
    broker.set_port(free_port());
    broker.add_override("listeners=PLAINTEXT://127.0.0.1:" + std::to_string(broker.port()) +
                        ",POD://127.0.0.1:" + std::to_string(free_port()));
    int status = broker.run_to_exit(std::chrono::seconds(20));
    EXPECT_NE(status, 0) << broker.log_text();
    EXPECT_NE(status, -1) << "the broker did not exit: " << broker.log_text();
    EXPECT_NE(broker.log_text().find("listener POD has no security protocol in "
                                     "listener.security.protocol.map"),
              std::string::npos)
        << broker.log_text();
}

}  // namespace
}  // namespace spool::tests
