#include "broker/security/jaas.h"

#include <fmt/format.h>

#include <cctype>

namespace spool::broker::security {

namespace {

constexpr std::string_view plain_login_module =
    "org.apache.kafka.common.security.plain.PlainLoginModule";

// Splits the text into words, quoted strings, '=' and ';' (Java's StreamTokenizer as Kafka's
// JaasConfig sets it up: words of letters, digits and . _ - $ and friends).
class tokenizer {
public:
    explicit tokenizer(std::string_view text) : _text(text) {}

    enum class kind { word, quoted, equals, semicolon, end, bad };
    struct token {
        kind what;
        std::string text;
    };

    token next() {
        while (_pos < _text.size() && std::isspace(static_cast<unsigned char>(_text[_pos]))) {
            ++_pos;
        }
        if (_pos >= _text.size()) {
            return {kind::end, {}};
        }
        char c = _text[_pos];
        if (c == '=') {
            ++_pos;
            return {kind::equals, "="};
        }
        if (c == ';') {
            ++_pos;
            return {kind::semicolon, ";"};
        }
        if (c == '"') {
            ++_pos;
            std::string out;
            while (_pos < _text.size() && _text[_pos] != '"') {
                if (_text[_pos] == '\\' && _pos + 1 < _text.size()) {
                    ++_pos;
                }
                out += _text[_pos++];
            }
            if (_pos >= _text.size()) {
                return {kind::bad, "unterminated quoted value"};
            }
            ++_pos;
            return {kind::quoted, std::move(out)};
        }
        std::string out;
        while (_pos < _text.size()) {
            char w = _text[_pos];
            if (std::isspace(static_cast<unsigned char>(w)) || w == '=' || w == ';' || w == '"') {
                break;
            }
            out += w;
            ++_pos;
        }
        return {kind::word, std::move(out)};
    }

private:
    std::string_view _text;
    size_t _pos = 0;
};

bool valid_flag(std::string_view flag) {
    return flag == "required" || flag == "requisite" || flag == "sufficient" || flag == "optional";
}

}  // namespace

std::optional<std::vector<jaas_login_module>> parse_jaas_config(std::string_view text,
                                                                std::string* error) {
    using kind = tokenizer::kind;
    tokenizer tokens(text);
    std::vector<jaas_login_module> out;
    auto fail = [&](std::string why) -> std::optional<std::vector<jaas_login_module>> {
        *error = fmt::format("invalid sasl.jaas.config: {}", why);
        return std::nullopt;
    };
    for (;;) {
        auto t = tokens.next();
        if (t.what == kind::end) {
            break;
        }
        if (t.what != kind::word) {
            return fail("expected a login module class name");
        }
        jaas_login_module module;
        module.class_name = std::move(t.text);
        auto flag = tokens.next();
        if (flag.what != kind::word || !valid_flag(flag.text)) {
            return fail(fmt::format(
                "login module {} needs a flag (required, requisite, sufficient or optional)",
                module.class_name));
        }
        module.flag = std::move(flag.text);
        for (;;) {
            auto key = tokens.next();
            if (key.what == kind::semicolon) {
                break;
            }
            if (key.what != kind::word) {
                return fail(key.what == kind::end
                                ? fmt::format("login module {} is not ended by ';'",
                                              module.class_name)
                                : fmt::format("expected an option name in {}", module.class_name));
            }
            if (tokens.next().what != kind::equals) {
                return fail(fmt::format("option {} has no '='", key.text));
            }
            auto value = tokens.next();
            if (value.what == kind::bad) {
                return fail(value.text);
            }
            if (value.what != kind::word && value.what != kind::quoted) {
                return fail(fmt::format("option {} has no value", key.text));
            }
            module.options.insert_or_assign(std::move(key.text), std::move(value.text));
        }
        out.push_back(std::move(module));
    }
    if (out.empty()) {
        return fail("no login module");
    }
    return out;
}

std::map<std::string, std::string> plain_users(const std::vector<jaas_login_module>& modules) {
    std::map<std::string, std::string> users;
    for (const auto& m : modules) {
        if (m.class_name != plain_login_module) {
            continue;
        }
        for (const auto& [key, value] : m.options) {
            if (key.starts_with("user_") && key.size() > 5) {
                users.emplace(key.substr(5), value);
            }
        }
    }
    return users;
}

}  // namespace spool::broker::security
