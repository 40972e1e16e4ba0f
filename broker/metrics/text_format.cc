// to_text(): the Prometheus text exposition format 0.0.4, written straight into one string.
//
// prometheus-cpp's TextSerializer goes through std::ostream and printf-style double formatting;
// at 10,000 partitions (60,000+ samples) that was over half the CPU of a scrape. Here every
// sample is appended with std::to_chars (shortest round-trip form, which Prometheus parses) and
// the output is reserved up front. Same lines as TextSerializer: HELP, TYPE, then the samples;
// histograms as _count, _sum, then cumulative _bucket lines ending with le="+Inf".

#include "broker/metrics/registry.h"

#include <prometheus/metric_family.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

namespace spool::broker::metrics {

namespace {

void append_number(std::string& out, double v) {
    if (std::isnan(v)) {
        out += "NaN";
    } else if (std::isinf(v)) {
        out += v > 0 ? "+Inf" : "-Inf";
    } else {
        char buf[32];
        auto r = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, r.ptr);
    }
}

void append_number(std::string& out, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
void append_escaped(std::string& out, std::string_view s, bool quote) {
    if (s.find_first_of(quote ? "\\\n\"" : "\\\n") == std::string_view::npos) {
        out += s;  // the common case: topic names, numbers
        return;
    }
    for (char c : s) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (quote && c == '"') {
            out += "\\\"";
        } else {
            out += c;
        }
    }
}

struct extra_label {
    const char* name = nullptr;
    double value = 0;
};

void append_sample(std::string& out, std::string_view name, const char* suffix,
                   const prometheus::ClientMetric& m, double value, extra_label extra = {}) {
    out += name;
    out += suffix;
    if (!m.label.empty() || extra.name) {
        out += '{';
        bool first = true;
        for (const auto& l : m.label) {
            if (!first)
                out += ',';
            first = false;
            out += l.name;
            out += "=\"";
            append_escaped(out, l.value, true);
            out += '"';
        }
        if (extra.name) {
            if (!first)
                out += ',';
            out += extra.name;
            out += "=\"";
            append_number(out, extra.value);
            out += '"';
        }
        out += '}';
    }
    out += ' ';
    append_number(out, value);
    if (m.timestamp_ms != 0) {
        out += ' ';
        append_number(out, static_cast<uint64_t>(m.timestamp_ms));
    }
    out += '\n';
}

const char* type_name(prometheus::MetricType t) {
    switch (t) {
        case prometheus::MetricType::Counter:
            return "counter";
        case prometheus::MetricType::Gauge:
            return "gauge";
        case prometheus::MetricType::Summary:
            return "summary";
        case prometheus::MetricType::Histogram:
            return "histogram";
        case prometheus::MetricType::Untyped:
            break;
    }
    return "untyped";
}

void append_family(std::string& out, const prometheus::MetricFamily& f) {
    if (!f.help.empty()) {
        out += "# HELP ";
        out += f.name;
        out += ' ';
        append_escaped(out, f.help, false);
        out += '\n';
    }
    out += "# TYPE ";
    out += f.name;
    out += ' ';
    out += type_name(f.type);
    out += '\n';
    for (const auto& m : f.metric) {
        switch (f.type) {
            case prometheus::MetricType::Counter:
                append_sample(out, f.name, "", m, m.counter.value);
                break;
            case prometheus::MetricType::Gauge:
                append_sample(out, f.name, "", m, m.gauge.value);
                break;
            case prometheus::MetricType::Untyped:
                append_sample(out, f.name, "", m, m.untyped.value);
                break;
            case prometheus::MetricType::Summary:
                for (const auto& q : m.summary.quantile)
                    append_sample(out, f.name, "", m, q.value, {"quantile", q.quantile});
                append_sample(out, f.name, "_count", m,
                              static_cast<double>(m.summary.sample_count));
                append_sample(out, f.name, "_sum", m, m.summary.sample_sum);
                break;
            case prometheus::MetricType::Histogram: {
                append_sample(out, f.name, "_count", m,
                              static_cast<double>(m.histogram.sample_count));
                append_sample(out, f.name, "_sum", m, m.histogram.sample_sum);
                bool saw_inf = false;
                for (const auto& b : m.histogram.bucket) {
                    saw_inf = saw_inf || std::isinf(b.upper_bound);
                    append_sample(out, f.name, "_bucket", m,
                                  static_cast<double>(b.cumulative_count), {"le", b.upper_bound});
                }
                if (!saw_inf) {
                    append_sample(out, f.name, "_bucket", m,
                                  static_cast<double>(m.histogram.sample_count),
                                  {"le", std::numeric_limits<double>::infinity()});
                }
                break;
            }
        }
    }
}

}  // namespace

std::string to_text(const std::vector<prometheus::MetricFamily>& families) {
    size_t samples = 0;
    for (const auto& f : families)
        samples += f.metric.size() * (f.type == prometheus::MetricType::Histogram ? 20 : 1);
    std::string out;
    out.reserve(samples * 64 + families.size() * 128);
    for (const auto& f : families)
        append_family(out, f);
    return out;
}

}  // namespace spool::broker::metrics
