#pragma once

// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka serves them: the salted
// credentials Kafka stores per user and mechanism, and the server side of one exchange.
//
//     client-first  n,[a=<authzid>],n=<user>,r=<client nonce>[,<extensions>]
//     server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
//     client-final  c=<base64 gs2 header>,r=<nonce>,p=<base64 proof>
//     server-final  v=<base64 server signature>
//
// Only StoredKey and ServerKey are kept, never the password: a stolen credential cannot be
// replayed as a password (RFC 5802 section 9).
//
// Threading: the functions are pure; a scram_server belongs to one connection.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

// Kafka's ScramMechanism numbers (AlterUserScramCredentials).
enum class scram_mechanism : int8_t { sha256 = 1, sha512 = 2 };

std::optional<scram_mechanism> scram_mechanism_named(std::string_view name);  // "SCRAM-SHA-256"
std::string_view scram_mechanism_name(scram_mechanism m);
std::optional<scram_mechanism> scram_mechanism_from_type(int8_t type);
// Kafka's bounds on iterations (ScramMechanism.minIterations(), maxIterations for the API).
inline constexpr int32_t scram_min_iterations = 4096;
inline constexpr int32_t scram_max_iterations = 16384;

struct scram_credential {
    std::vector<uint8_t> salt;
    std::vector<uint8_t> stored_key;
    std::vector<uint8_t> server_key;
    int32_t iterations = 0;
    friend bool operator==(const scram_credential&, const scram_credential&) = default;
};

// From what AlterUserScramCredentials carries (the client salts the password).
scram_credential scram_credential_from_salted(scram_mechanism m,
                                              const std::vector<uint8_t>& salted_password,
                                              std::vector<uint8_t> salt, int32_t iterations);
// From the password (PBKDF2-HMAC); for tests and tools.
scram_credential scram_credential_from_password(scram_mechanism m, std::string_view password,
                                                std::vector<uint8_t> salt, int32_t iterations);
std::vector<uint8_t> scram_salted_password(scram_mechanism m, std::string_view password,
                                           const std::vector<uint8_t>& salt, int32_t iterations);

// Whether `password` is the one the credential was made from: derives SaltedPassword with the
// credential's salt and iterations and compares the StoredKey it gives in constant time. For
// logins that carry a password rather than a SCRAM exchange (the admin API's HTTP Basic).
bool scram_password_matches(scram_mechanism m, std::string_view password,
                            const scram_credential& credential);

// Kafka's ScramCredentialUtils text: "salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=N".
std::string encode_scram_credential(const scram_credential& c);
std::optional<scram_credential> decode_scram_credential(std::string_view text);

std::string base64_encode(const std::vector<uint8_t>& bytes);
std::optional<std::vector<uint8_t>> base64_decode(std::string_view text);
std::vector<uint8_t> random_bytes(size_t n);

// The server side of one exchange. first() and final() each take the client's message and
// return the server's; an error ends the exchange (authentication failed) and carries Kafka's
// message for the client.
class scram_server {
public:
    using credential_lookup =
        std::function<std::optional<scram_credential>(const std::string& user)>;

    struct step {
        std::string reply;
        std::string error;  // non-empty: authentication failed
        bool ok() const { return error.empty(); }
    };

    // server_nonce: the server's part of the nonce; empty (always, outside tests) picks a random
    // one.
    scram_server(scram_mechanism m, credential_lookup lookup, std::string server_nonce = {});

    step first(std::string_view client_first);
    step final(std::string_view client_final);

    // The authenticated user (after a successful final()).
    const std::string& user() const { return _user; }
    bool complete() const { return _complete; }

private:
    scram_mechanism _mechanism;
    credential_lookup _lookup;
    std::string _user;
    std::string _gs2_header;
    std::string _client_first_bare;
    std::string _server_first;
    std::string _server_nonce;
    std::string _nonce;
    std::optional<scram_credential> _credential;
    bool _complete = false;
};

// The client side, for tests and the inter-broker client: builds client-first, answers the
// server-first and checks the server-final.
class scram_client {
public:
    scram_client(scram_mechanism m, std::string user, std::string password);
    std::string first();
    // The client-final for `server_first`; nullopt when it is malformed or its iterations are
    // outside [scram_min_iterations, scram_max_iterations].
    std::optional<std::string> final(std::string_view server_first);
    bool verify(std::string_view server_final) const;

private:
    scram_mechanism _mechanism;
    std::string _user;
    std::string _password;
    std::string _nonce;
    std::string _client_first_bare;
    std::vector<uint8_t> _server_signature;
};

}  // namespace spool::broker::security
