#pragma once

// ssl.principal.mapping.rules (Kafka's SslPrincipalMapper): turns a client certificate's subject,
// written as RFC 2253 ("CN=alice,OU=eng,O=Example"), into the name of its User principal.
//
//     rules = rule ("," rule)*
//     rule  = DEFAULT | RULE:<pattern>/<replacement>/[L|U]
//
// Rules are tried in order: DEFAULT yields the subject unchanged; a RULE whose pattern (a regular
// expression; the ECMAScript dialect, which agrees with Java's for the patterns these rules use)
// matches the whole subject yields the replacement ($1.. name groups), lower- or upper-cased
// with L or U. A subject no rule matches has no principal: the handshake fails, as in Kafka.
//
// Threading: a parsed rule set is immutable; use it from any thread.

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

class principal_rules {
public:
    // Parses the rules; on error returns nullopt and sets *error.
    static std::optional<principal_rules> parse(std::string_view text, std::string* error);

    // The principal name of `subject`, nullopt when no rule matches.
    std::optional<std::string> apply(const std::string& subject) const;

private:
    struct rule {
        bool is_default = true;
        std::regex pattern;
        std::string replacement;
        char casing = 0;  // 0, 'L' or 'U'
    };
    std::vector<rule> _rules;
};

}  // namespace spool::broker::security
