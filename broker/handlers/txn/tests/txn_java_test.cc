// Transactions end to end with real peers against a spool-broker process: the Java client 4.x
// (tests/java/TxnClient.java, compiled here against the Kafka jars: commit to two topics, abort,
// fencing by a second producer with the same transactional.id, read_committed consumers) and
// Kafka's kafka-transactions tool (TransactionsCommand list/describe over ListTransactions and
// DescribeTransactions).

#include "tests/integration/broker_process.h"
#include "tests/integration/test_pki.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

namespace spool::tests {
namespace {

class txn_java_test : public ::testing::Test {
protected:
    void SetUp() override {
        kafka = kafka_dir();
        ASSERT_FALSE(kafka.empty()) << "no Kafka jars (scripts/peers/fetch-kafka.sh)";
        broker = std::make_unique<broker_process>();
        broker->add_override("transaction.state.log.num.partitions=4");
        broker->add_override("offsets.topic.num.partitions=3");
        ASSERT_TRUE(broker->start()) << broker->log_text();
        bootstrap = "127.0.0.1:" + std::to_string(broker->port());
    }
    void TearDown() override {
        auto info = broker->stop();
        EXPECT_TRUE(info.exited) << broker->log_text();
        EXPECT_EQ(info.status, 0) << broker->log_text();
    }
    std::string tool(const std::string& args) {
        return sh("java -cp '" + kafka + "/libs/*' org.apache.kafka.tools.TransactionsCommand "
                  "--bootstrap-server " + bootstrap + " " + args);
    }

    std::string kafka;
    std::string bootstrap;
    std::unique_ptr<broker_process> broker;
};

TEST_F(txn_java_test, test_java_producer_commits_aborts_and_is_fenced) {
    const auto classes = broker->data_dir() / "txn-java";
    std::filesystem::create_directories(classes);
    const std::string src = SPOOL_SOURCE_DIR "/broker/handlers/txn/tests/java/TxnClient.java";
    auto compiled = sh("javac -cp '" + kafka + "/libs/*' -d '" + classes.string() + "' " + src);
    ASSERT_TRUE(succeeded(compiled)) << compiled;
    auto out = sh("java -cp '" + kafka + "/libs/*:" + classes.string() + "' TxnClient " +
                  bootstrap);
    EXPECT_TRUE(succeeded(out)) << out << broker->log_text();
    EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
    EXPECT_NE(out.find("ok read_committed sees only committed records in out-a"),
              std::string::npos)
        << out;

    // kafka-transactions list and describe see the id, its producer and its final state.
    auto listed = tool("list");
    ASSERT_TRUE(succeeded(listed)) << listed;
    EXPECT_NE(listed.find("tx-1"), std::string::npos) << listed;
    auto described = tool("describe --transactional-id tx-1");
    ASSERT_TRUE(succeeded(described)) << described;
    EXPECT_NE(described.find("CompleteCommit"), std::string::npos) << described;
}

}  // namespace
}  // namespace spool::tests
