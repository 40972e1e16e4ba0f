#pragma once

// Where the keys that verify OAUTHBEARER tokens come from (Kafka's
// sasl.oauthbearer.jwks.endpoint.url): a `file:` URL, re-read whenever the file changes
// (checked every second), or an `https:` URL (`http:` too, for a server on the same host),
// fetched at start and every sasl.oauthbearer.jwks.endpoint.refresh.ms, retried with an
// exponential backoff (sasl.oauthbearer.jwks.endpoint.retry.backoff.ms up to .max.ms) while it
// fails, and fetched again soon when a token names a key id the set lacks (at most every 10 s,
// so unknown ids cannot make the broker hammer the identity provider).
//
// A set that fails to load or parse is logged once per failure streak and the previous set
// stays in use. An https server's certificate is checked against the system's trusted CAs
// (OpenSSL's default paths; SSL_CERT_FILE / SSL_CERT_DIR override them) and its host name.
//
// Threading: one background thread of its own does all reading and fetching; current() is an
// atomic load, safe from any thread (shard threads call it on each authentication).
// Lifecycle: the thread starts in start() and stops in the destructor.

#include "broker/security/jwt.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace spool::broker::security {

struct jwks_source_options {
    std::string url;
    std::chrono::milliseconds refresh{3'600'000};
    std::chrono::milliseconds retry_backoff{100};
    std::chrono::milliseconds retry_backoff_max{10'000};
    std::chrono::milliseconds request_timeout{10'000};
};

class jwks_source {
public:
    // Checks the URL's form; nullopt with *error when it is not file:, https: or http:.
    static std::unique_ptr<jwks_source> make(jwks_source_options options, std::string* error);
    ~jwks_source();
    jwks_source(const jwks_source&) = delete;
    jwks_source& operator=(const jwks_source&) = delete;

    void start();
    // The last set loaded; nullptr until one has been.
    std::shared_ptr<const jwk_set> current() const { return _current.load(); }
    // A token named a key id the current set lacks.
    void refresh_soon();

    // One synchronous load, as the background thread does it (tests, and the first load).
    bool load_once(std::string* error);

private:
    explicit jwks_source(jwks_source_options options);
    void run();
    std::optional<std::string> read_document(std::string* error);

    jwks_source_options _options;
    std::atomic<std::shared_ptr<const jwk_set>> _current;
    std::mutex _mutex;
    std::condition_variable _wake;
    bool _stopping = false;
    bool _refresh_requested = false;
    std::chrono::steady_clock::time_point _last_requested_refresh{};
    // file: what the last load saw, so an unchanged file is not parsed again.
    std::optional<std::pair<int64_t, int64_t>> _file_seen;  // mtime ns, size
    std::thread _thread;
};

}  // namespace spool::broker::security
