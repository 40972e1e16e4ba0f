#include "broker/metrics/registry.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>

namespace spool::broker::metrics {
namespace {

// One sample line -> (series key with labels parsed, numeric value). le/quantile values are
// compared as numbers: the two serializers print 0.005 with different digits.
std::map<std::string, double> parse(const std::string& text, std::string& comments) {
    std::map<std::string, double> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("#")) {
            comments += line + "\n";
            continue;
        }
        // name{labels} value [timestamp]; label values may hold spaces, so split after '}'.
        auto close = line.rfind('}');
        auto space = line.find(' ', close == std::string::npos ? 0 : close);
        std::string series = line.substr(0, space);
        std::istringstream rest(line.substr(space + 1));
        std::string value, timestamp;
        rest >> value >> timestamp;
        std::string key = series.substr(0, series.find('{'));
        if (auto open = series.find('{'); open != std::string::npos) {
            std::string labels = series.substr(open + 1, series.size() - open - 2);
            size_t pos = 0;
            while (pos < labels.size()) {
                auto eq = labels.find('=', pos);
                std::string name = labels.substr(pos, eq - pos);
                size_t end = eq + 2;  // after ="
                std::string v;
                while (end < labels.size() && labels[end] != '"') {
                    if (labels[end] == '\\') {  // keep escapes as written: both must agree
                        v += labels[end++];
                    }
                    v += labels[end++];
                }
                if (name == "le" || name == "quantile")
                    v = v == "+Inf" ? "inf" : std::to_string(std::stod(v));
                key += "|" + name + "=" + v;
                pos = end + 2;
            }
        }
        // prometheus-cpp writes NaN as "Nan" (Prometheus reads either); we write the spec's "NaN".
        double d = (value == "NaN" || value == "Nan") ? std::nan("")
                   : value == "+Inf"                  ? HUGE_VAL
                   : value == "-Inf"                  ? -HUGE_VAL
                                                      : std::stod(value);
        out[key + (timestamp.empty() ? "" : " @" + timestamp)] = d;
    }
    return out;
}

std::vector<prometheus::MetricFamily> every_kind() {
    using prometheus::MetricType;
    std::vector<prometheus::MetricFamily> f(5);
    f[0] = {"c_total", "a counter", MetricType::Counter, {}};
    prometheus::ClientMetric m;
    m.label = {{"topic", "odd \"name\" \\ \n"}, {"partition", "7"}};
    m.counter.value = 1747632;
    f[0].metric.push_back(m);
    f[1] = {"g", "", MetricType::Gauge, {}};
    prometheus::ClientMetric g;
    g.gauge.value = 0.1 + 0.2;
    f[1].metric.push_back(g);
    g.label = {{"k", "nan"}};
    g.gauge.value = std::numeric_limits<double>::quiet_NaN();
    f[1].metric.push_back(g);
    g.label = {{"k", "inf"}};
    g.gauge.value = -std::numeric_limits<double>::infinity();
    g.timestamp_ms = 1700000000123;
    f[1].metric.push_back(g);
    f[2] = {"h_seconds", "histogram without an explicit +Inf bucket", MetricType::Histogram, {}};
    prometheus::ClientMetric h;
    h.label = {{"api", "produce"}};
    h.histogram = {10, 0.75, {{3, 0.005}, {9, 0.25}}};
    f[2].metric.push_back(h);
    f[3] = {"s", "summary", MetricType::Summary, {}};
    prometheus::ClientMetric s;
    s.summary = {4, 2.5, {{0.5, 0.1}, {0.99, 1.5}}};
    f[3].metric.push_back(s);
    f[4] = {"u", "untyped", MetricType::Untyped, {}};
    prometheus::ClientMetric u;
    u.untyped.value = 1e21;
    f[4].metric.push_back(u);
    return f;
}

TEST(text_format, test_to_text_says_what_prometheus_cpps_serializer_says) {
    auto families = every_kind();
    std::string ours_comments, theirs_comments;
    auto ours = parse(to_text(families), ours_comments);
    auto theirs = parse(prometheus::TextSerializer{}.Serialize(families), theirs_comments);
    EXPECT_EQ(ours_comments, theirs_comments);
    ASSERT_EQ(ours.size(), theirs.size()) << to_text(families);
    for (const auto& [key, value] : theirs) {
        ASSERT_TRUE(ours.contains(key)) << key << "\n" << to_text(families);
        if (std::isnan(value))
            EXPECT_TRUE(std::isnan(ours[key])) << key;
        else
            EXPECT_DOUBLE_EQ(ours[key], value) << key;  // prometheus-cpp prints 16 digits
    }
}

TEST(text_format, test_histogram_buckets_end_with_inf_once_and_text_is_escaped) {
    auto families = every_kind();
    // prometheus-cpp 1.0 writes HELP unescaped (a newline there breaks the scrape); we escape.
    families[0].help = "with \\ and\nnewline";
    auto text = to_text(families);
    EXPECT_NE(text.find("# HELP c_total with \\\\ and\\nnewline\n"), std::string::npos) << text;
    EXPECT_NE(text.find("h_seconds_bucket{api=\"produce\",le=\"+Inf\"} 10\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("h_seconds_bucket{api=\"produce\",le=\"0.005\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("c_total{topic=\"odd \\\"name\\\" \\\\ \\n\",partition=\"7\"} 1747632\n"),
              std::string::npos);
    EXPECT_NE(text.find("g{k=\"inf\"} -Inf 1700000000123\n"), std::string::npos);
}

}  // namespace
}  // namespace spool::broker::metrics
