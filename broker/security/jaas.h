#pragma once

// Kafka's sasl.jaas.config value (JAAS configuration file syntax, one context's entries):
//
//     <LoginModule class> <flag> [key=value ...];  [<LoginModule class> <flag> ...;]
//
// flag: required | requisite | sufficient | optional; a value is a word or a double-quoted
// string with backslash escapes. For PLAIN, the broker reads its users from the options named
// user_<name>="<password>" (Kafka's PlainServerCallbackHandler).
//
// Threading: pure functions; any thread.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

struct jaas_login_module {
    std::string class_name;
    std::string flag;
    std::map<std::string, std::string> options;
};

// Parses a sasl.jaas.config value; on error returns nullopt and sets *error to what was wrong.
std::optional<std::vector<jaas_login_module>> parse_jaas_config(std::string_view text,
                                                                std::string* error);

// The PLAIN users of a parsed config (user_<name> options of the PlainLoginModule): name ->
// password.
std::map<std::string, std::string> plain_users(const std::vector<jaas_login_module>& modules);

}  // namespace spool::broker::security
