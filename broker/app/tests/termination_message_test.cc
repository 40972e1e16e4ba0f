// The termination message a broker that refuses to start leaves for Kubernetes: one line,
// replacing the file's contents, at most 4096 bytes, and only in a file that already exists (the
// kubelet's), so that a broker outside Kubernetes creates nothing.

#include "broker/app/termination_message.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace spool::broker::app {
namespace {

namespace fs = std::filesystem;

std::string contents(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct termination_message : ::testing::Test {
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("spool-termination-" +
               std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
};

TEST_F(termination_message, test_replaces_the_existing_file_with_one_line) {
    auto path = dir / "termination-log";
    std::ofstream(path) << "an older, longer message from the previous attempt\n";
    ASSERT_TRUE(write_termination_message(
        path.string(),
        "spool-broker 0.4.0: cannot start: refusing to start:\nthe cluster's "
        "metadata.version is 34\n"));
    EXPECT_EQ(contents(path),
              "spool-broker 0.4.0: cannot start: refusing to start: the cluster's "
              "metadata.version is 34");
}

TEST_F(termination_message, test_a_missing_file_is_not_created) {
    auto path = dir / "no-such-file";
    EXPECT_FALSE(write_termination_message(path.string(), "refusing to start"));
    EXPECT_FALSE(fs::exists(path));
    EXPECT_FALSE(write_termination_message((dir / "no-dir" / "file").string(), "x"));
    EXPECT_FALSE(write_termination_message("", "x"));
}

TEST_F(termination_message, test_an_unwritable_file_is_ignored) {
    auto path = dir / "read-only";
    std::ofstream(path) << "kept";
    fs::permissions(path, fs::perms::owner_read);
    // root writes anyway; what matters is that nothing throws or aborts either way.
    bool written = write_termination_message(path.string(), "refusing to start");
    EXPECT_EQ(contents(path), written ? "refusing to start" : "kept");
}

TEST_F(termination_message, test_the_path_comes_from_the_environment_else_the_kubelets_default) {
    ::unsetenv(termination_message_path_env);
    EXPECT_EQ(termination_message_path(), "/dev/termination-log");
    ::setenv(termination_message_path_env, "/tmp/elsewhere", 1);
    EXPECT_EQ(termination_message_path(), "/tmp/elsewhere");
    ::setenv(termination_message_path_env, "", 1);
    EXPECT_EQ(termination_message_path(), "");  // and write_termination_message writes nothing
    ::unsetenv(termination_message_path_env);
}

TEST_F(termination_message, test_a_long_reason_is_cut_to_what_kubernetes_keeps) {
    std::string reason(10000, 'x');
    auto line = termination_message_line(reason);
    EXPECT_EQ(line.size(), termination_message_limit);
    auto path = dir / "termination-log";
    std::ofstream(path) << "";
    ASSERT_TRUE(write_termination_message(path.string(), reason));
    EXPECT_EQ(contents(path).size(), termination_message_limit);
}

}  // namespace
}  // namespace spool::broker::app
