#include "operator/kube/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace spool::op::kube {
namespace {

namespace fs = std::filesystem;

class kubeconfig_test : public ::testing::Test {
protected:
    void SetUp() override {
        _dir = fs::temp_directory_path() /
               ("spool-kubeconfig-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(_dir);
    }
    void TearDown() override { fs::remove_all(_dir); }
    std::string write(const std::string& name, const std::string& text) {
        auto p = _dir / name;
        std::ofstream(p) << text;
        return p.string();
    }
    fs::path _dir;
};

TEST(base64, test_decodes_standard_alphabet_with_and_without_padding) {
    EXPECT_EQ(base64_decode("aGVsbG8=").value(), "hello");
    EXPECT_EQ(base64_decode("aGVsbG8").value(), "hello");
    EXPECT_EQ(base64_decode("c3Bvb2wtb3BlcmF0b3I=").value(), "spool-operator");
    EXPECT_FALSE(base64_decode("not*base64"));
}

TEST(base64, test_encodes_with_padding_and_round_trips_every_byte) {
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("h"), "aA==");
    EXPECT_EQ(base64_encode("he"), "aGU=");
    EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
    EXPECT_EQ(base64_encode("spool-operator"), "c3Bvb2wtb3BlcmF0b3I=");
    std::string all;
    for (int i = 0; i < 256; ++i) {
        all.push_back(static_cast<char>(i));
    }
    EXPECT_EQ(base64_decode(base64_encode(all)).value(), all);
}

TEST_F(kubeconfig_test, test_current_context_with_inline_data_and_token) {
    auto path = write("config", R"(
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: other
  cluster: {server: https://other:1}
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: Q0EtUEVN
contexts:
- name: test
  context: {cluster: local, user: admin, namespace: team-a}
users:
- name: admin
  user: {token: secret-token}
)");
    auto c = load_kubeconfig(path);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c.value().server, "https://127.0.0.1:6443");
    EXPECT_EQ(c.value().ca_pem, "CA-PEM");
    EXPECT_EQ(c.value().token, "secret-token");
    EXPECT_EQ(c.value().namespace_, "team-a");
}

TEST_F(kubeconfig_test, test_named_context_with_relative_cert_files) {
    write("ca.crt", "CA");
    write("client.crt", "CERT");
    write("client.key", "KEY");
    auto path = write("config", R"(
current-context: a
clusters:
- {name: c, cluster: {server: "https://h:1", certificate-authority: ca.crt}}
contexts:
- {name: a, context: {cluster: missing, user: u}}
- {name: b, context: {cluster: c, user: u}}
users:
- {name: u, user: {client-certificate: client.crt, client-key: client.key}}
)");
    auto c = load_kubeconfig(path, "b");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c.value().ca_pem, "CA");
    EXPECT_EQ(c.value().client_cert_pem, "CERT");
    EXPECT_EQ(c.value().client_key_pem, "KEY");
    EXPECT_EQ(c.value().namespace_, "default");
    auto broken = load_kubeconfig(path);
    ASSERT_FALSE(broken);
    EXPECT_EQ(broken.error().message, "cluster of context \"a\" has no server");
}

TEST_F(kubeconfig_test, test_missing_file_is_a_clear_error) {
    auto c = load_kubeconfig((_dir / "nope").string());
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().reason, "ConfigError");
    EXPECT_FALSE(c.error().transient);
}

TEST_F(kubeconfig_test, test_in_cluster_reads_the_service_account_mount) {
    write("token", "sa-token");
    write("ca.crt", "SA-CA");
    write("namespace", "spool-system");
    ::setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    ::setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    auto c = load_in_cluster(_dir.string());
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    ::unsetenv("KUBERNETES_SERVICE_PORT");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c.value().server, "https://10.0.0.1:443");
    EXPECT_EQ(c.value().token, "sa-token");
    EXPECT_EQ(c.value().token_file, (_dir / "token").string());
    EXPECT_EQ(c.value().ca_pem, "SA-CA");
    EXPECT_EQ(c.value().namespace_, "spool-system");
    EXPECT_FALSE(load_in_cluster(_dir.string()));
}

}  // namespace
}  // namespace spool::op::kube
