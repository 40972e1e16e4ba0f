#include "operator/app/embedded_crds.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace spool::op::app {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

TEST(embedded_crds, test_binary_carries_the_crds_from_crds_dir_byte_for_byte) {
    const auto& crds = embedded_crds();
    ASSERT_EQ(crds.size(), 3u);
    for (const auto& [name, text] : crds) {
        EXPECT_EQ(std::string(text),
                  read_file(std::string(SPOOL_SOURCE_DIR) + "/crds/" + std::string(name) + ".yaml"))
            << name;
    }
    EXPECT_EQ(crds[0].first, "clusters.spool.dev");
    EXPECT_EQ(crds[1].first, "topics.spool.dev");
    EXPECT_EQ(crds[2].first, "users.spool.dev");
}

// helm installs charts/spool/crds/; it must be the same text as crds/, the one edited copy.
TEST(embedded_crds, test_chart_crds_equal_the_crds_dir) {
    for (const auto& [name, text] : embedded_crds()) {
        std::string file = std::string(name) + ".yaml";
        std::string chart = read_file(std::string(SPOOL_SOURCE_DIR) + "/charts/spool/crds/" + file);
        EXPECT_FALSE(chart.empty()) << "charts/spool/crds/" << file << " is missing";
        EXPECT_EQ(chart, read_file(std::string(SPOOL_SOURCE_DIR) + "/crds/" + file))
            << "charts/spool/crds/" << file << " differs from crds/" << file
            << ": cp crds/*.yaml charts/spool/crds/";
    }
}

}  // namespace
}  // namespace spool::op::app
