#include "broker/config/cli.h"

#include <gtest/gtest.h>

namespace spool::broker::config {
namespace {

TEST(cli, test_config_and_repeated_overrides) {
    const char* argv[] = {"spool-broker", "--config",   "b.yaml", "--override",
                          "a=1",          "--override", "b=2"};
    std::string error;
    auto cl = parse_command_line(7, argv, &error);
    ASSERT_TRUE(cl) << error;
    EXPECT_EQ(cl->config_path, "b.yaml");
    EXPECT_EQ(cl->overrides, (std::vector<std::string>{"a=1", "b=2"}));
    EXPECT_FALSE(cl->show_version);
}

TEST(cli, test_version_flag) {
    const char* argv[] = {"spool-broker", "--version"};
    std::string error;
    auto cl = parse_command_line(2, argv, &error);
    ASSERT_TRUE(cl);
    EXPECT_TRUE(cl->show_version);
}

TEST(cli, test_unknown_flag_is_an_error) {
    const char* argv[] = {"spool-broker", "--bogus"};
    std::string error;
    EXPECT_FALSE(parse_command_line(2, argv, &error));
    EXPECT_NE(error.find("bogus"), std::string::npos);
}

TEST(cli, test_docs_list_every_key) {
    std::string docs = render_config_docs();
    EXPECT_NE(docs.find("`socket.request.max.bytes`"), std::string::npos);
    EXPECT_NE(docs.find("`retention.ms`"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::config
