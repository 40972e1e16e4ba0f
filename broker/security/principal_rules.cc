#include "broker/security/principal_rules.h"

#include <fmt/format.h>

#include <cctype>

namespace spool::broker::security {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
        s.remove_prefix(1);
    }
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
        s.remove_suffix(1);
    }
    return s;
}

// Reads up to the next unescaped '/' (a backslash escapes the next character and stays in the
// text, as Kafka hands both parts to java.util.regex unchanged). False when there is none.
bool read_part(std::string_view text, size_t& pos, std::string& out) {
    while (pos < text.size()) {
        char c = text[pos];
        if (c == '\\' && pos + 1 < text.size()) {
            out += c;
            out += text[pos + 1];
            pos += 2;
            continue;
        }
        if (c == '/') {
            ++pos;
            return true;
        }
        out += c;
        ++pos;
    }
    return false;
}

}  // namespace

std::optional<principal_rules> principal_rules::parse(std::string_view text, std::string* error) {
    principal_rules out;
    size_t pos = 0;
    auto fail = [&](std::string why) -> std::optional<principal_rules> {
        *error = fmt::format("invalid ssl.principal.mapping.rules '{}': {}", text, why);
        return std::nullopt;
    };
    while (pos < text.size()) {
        while (pos < text.size() &&
               (std::isspace(static_cast<unsigned char>(text[pos])) || text[pos] == ',')) {
            ++pos;
        }
        if (pos >= text.size()) {
            break;
        }
        std::string_view rest = text.substr(pos);
        if (rest.starts_with("DEFAULT")) {
            out._rules.push_back(rule{});
            pos += 7;
            continue;
        }
        if (!rest.starts_with("RULE:")) {
            return fail(fmt::format("expected DEFAULT or RULE: at '{}'", rest));
        }
        pos += 5;
        std::string pattern;
        std::string replacement;
        if (!read_part(text, pos, pattern) || !read_part(text, pos, replacement)) {
            return fail("a rule is RULE:pattern/replacement/[LU]");
        }
        rule r;
        r.is_default = false;
        r.replacement = std::move(replacement);
        if (pos < text.size() && (text[pos] == 'L' || text[pos] == 'U')) {
            r.casing = text[pos++];
        }
        // Whatever follows up to the next comma is ignored, as Kafka's splitter does.
        while (pos < text.size() && text[pos] != ',') {
            if (!std::isspace(static_cast<unsigned char>(text[pos]))) {
                return fail(fmt::format("unexpected '{}' after a rule", text[pos]));
            }
            ++pos;
        }
        try {
            r.pattern = std::regex(pattern);
        } catch (const std::regex_error& e) {
            return fail(fmt::format("pattern '{}': {}", pattern, e.what()));
        }
        out._rules.push_back(std::move(r));
    }
    if (trim(text).empty()) {
        out._rules.push_back(rule{});  // Kafka treats an empty value as DEFAULT
    }
    return out;
}

std::optional<std::string> principal_rules::apply(const std::string& subject) const {
    for (const auto& r : _rules) {
        if (r.is_default) {
            return subject;
        }
        std::smatch m;
        if (!std::regex_match(subject, m, r.pattern)) {
            continue;
        }
        std::string name = m.format(r.replacement);
        if (r.casing != 0) {
            for (auto& c : name) {
                c = static_cast<char>(r.casing == 'L'
                                          ? std::tolower(static_cast<unsigned char>(c))
                                          : std::toupper(static_cast<unsigned char>(c)));
            }
        }
        return name;
    }
    return std::nullopt;
}

}  // namespace spool::broker::security
