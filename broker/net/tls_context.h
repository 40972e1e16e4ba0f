#pragma once

// TLS of one SSL or SASL_SSL listener: the OpenSSL context built from Kafka's ssl.* keys (PEM key
// and trust stores only) and the mTLS principal mapping rules, rebuilt without a restart when the
// listener's settings or the PEM files they name change.
//
// Reload: current() re-reads the settings (dynamic configs included) and the files' modification
// time and size at most once per reload_check_interval; on a change it builds a new context,
// which new connections get while existing ones keep theirs. A rebuild that fails (a half-written
// file) is logged and the previous context stays in use.
//
// Threading: current() on one thread at a time (the accept loop on shard 0); the contexts it hands
// out are shared by connections on every shard (OpenSSL contexts are thread-safe for that).

#include "broker/security/principal_rules.h"

#include <boost/asio/ssl/context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::net {

// Which end of the handshake a context serves: a listener's accepts (server), or this broker
// connecting to another one (client: replica fetchers, etcd).
enum class tls_role : uint8_t { server, client };

// One listener's ssl.* values (listener.name.<l>.ssl.* over ssl.*).
struct tls_settings {
    tls_role role = tls_role::server;
    std::string keystore_type = "PEM";
    std::optional<std::string> keystore_location;
    // The private key in a file of its own (etcd's --key beside --cert); unset: the key is in
    // keystore_location with the chain, as Kafka's PEM key store has it.
    std::optional<std::string> key_location;
    std::optional<std::string> keystore_key;  // inline PEM
    std::optional<std::string> keystore_certificate_chain;
    std::optional<std::string> key_password;
    std::string truststore_type = "PEM";
    std::optional<std::string> truststore_location;
    std::optional<std::string> truststore_certificates;  // inline PEM
    std::string client_auth = "none";                    // required | requested | none
    std::vector<std::string> enabled_protocols = {"TLSv1.2", "TLSv1.3"};
    std::vector<std::string> cipher_suites;  // empty: OpenSSL's defaults
    std::string principal_mapping_rules = "DEFAULT";
    friend bool operator==(const tls_settings&, const tls_settings&) = default;
};

// What a connection takes from its listener at accept.
struct tls_material {
    std::shared_ptr<boost::asio::ssl::context> context;
    std::shared_ptr<const security::principal_rules> rules;
};

// Builds the context; on error returns nullopt and sets *error. A server context needs a key
// store and verifies clients as client_auth says. A client context always verifies the peer
// against the trust store (none set: OpenSSL's default CA paths) and presents the key store, when
// one is set, as its client certificate; the caller names the expected host per connection.
std::optional<tls_material> build_tls(const tls_settings& s, std::string* error);

// A client context that follows its settings and files (a tls_listener in the client role, see
// below), callable from any thread (calls are serialised); `name` is for logs. nullptr (and
// *error) when the first build fails.
using tls_client_source = std::function<std::shared_ptr<boost::asio::ssl::context>()>;
tls_client_source tls_client(std::string name, std::function<tls_settings()> source,
                             std::string* error);

class tls_listener {
public:
    using settings_source = std::function<tls_settings()>;
    static constexpr std::chrono::seconds reload_check_interval{1};

    // Builds the first context; nullptr (and *error) when the settings do not make one.
    static std::unique_ptr<tls_listener> create(std::string listener, settings_source source,
                                                std::string* error);

    tls_material current();

private:
    struct file_stamp {
        std::string path;
        int64_t mtime_ns = -1;
        int64_t size = -1;
        friend bool operator==(const file_stamp&, const file_stamp&) = default;
    };
    static std::vector<file_stamp> stamps_of(const tls_settings& s);

    tls_listener(std::string listener, settings_source source)
        : _listener(std::move(listener)), _source(std::move(source)) {}

    std::string _listener;
    settings_source _source;
    tls_settings _settings;
    std::vector<file_stamp> _stamps;
    tls_material _material;
    std::chrono::steady_clock::time_point _checked;
};

}  // namespace spool::broker::net
