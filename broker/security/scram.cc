#include "broker/security/scram.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>

namespace spool::broker::security {

namespace {

const EVP_MD* digest(scram_mechanism m) {
    return m == scram_mechanism::sha256 ? EVP_sha256() : EVP_sha512();
}

std::vector<uint8_t> hmac(scram_mechanism m, const std::vector<uint8_t>& key,
                          std::string_view data) {
    std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
    unsigned len = 0;
    HMAC(digest(m), key.data(), static_cast<int>(key.size()),
         reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
    out.resize(len);
    return out;
}

std::vector<uint8_t> hash(scram_mechanism m, const std::vector<uint8_t>& data) {
    std::vector<uint8_t> out(EVP_MAX_MD_SIZE);
    unsigned len = 0;
    EVP_Digest(data.data(), data.size(), out.data(), &len, digest(m), nullptr);
    out.resize(len);
    return out;
}

std::vector<uint8_t> xor_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    std::vector<uint8_t> out(a.size());
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        out[i] = a[i] ^ b[i];
    }
    return out;
}

// "k=v" attributes of a SCRAM message, in order.
std::vector<std::pair<char, std::string_view>> attributes(std::string_view message) {
    std::vector<std::pair<char, std::string_view>> out;
    size_t pos = 0;
    while (pos <= message.size()) {
        size_t comma = message.find(',', pos);
        std::string_view part =
            message.substr(pos, comma == std::string_view::npos ? std::string_view::npos
                                                                : comma - pos);
        if (part.size() >= 2 && part[1] == '=') {
            out.emplace_back(part[0], part.substr(2));
        } else {
            out.emplace_back('\0', part);
        }
        if (comma == std::string_view::npos) {
            break;
        }
        pos = comma + 1;
    }
    return out;
}

// RFC 5802 saslname: "=2C" is ',' and "=3D" is '='; any other '=' is malformed.
std::optional<std::string> decode_saslname(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '=') {
            out += s[i];
            continue;
        }
        auto code = s.substr(i + 1, 2);
        if (code == "2C") {
            out += ',';
        } else if (code == "3D") {
            out += '=';
        } else {
            return std::nullopt;
        }
        i += 2;
    }
    return out;
}

std::string encode_saslname(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == ',') {
            out += "=2C";
        } else if (c == '=') {
            out += "=3D";
        } else {
            out += c;
        }
    }
    return out;
}

std::string printable_nonce() {
    // Base64 of random bytes minus ',' (never produced): a valid RFC 5802 nonce.
    return base64_encode(random_bytes(24));
}

}  // namespace

std::optional<scram_mechanism> scram_mechanism_named(std::string_view name) {
    if (name == "SCRAM-SHA-256") {
        return scram_mechanism::sha256;
    }
    if (name == "SCRAM-SHA-512") {
        return scram_mechanism::sha512;
    }
    return std::nullopt;
}

std::string_view scram_mechanism_name(scram_mechanism m) {
    return m == scram_mechanism::sha256 ? "SCRAM-SHA-256" : "SCRAM-SHA-512";
}

std::optional<scram_mechanism> scram_mechanism_from_type(int8_t type) {
    if (type == 1) {
        return scram_mechanism::sha256;
    }
    if (type == 2) {
        return scram_mechanism::sha512;
    }
    return std::nullopt;
}

std::vector<uint8_t> scram_salted_password(scram_mechanism m, std::string_view password,
                                           const std::vector<uint8_t>& salt, int32_t iterations) {
    std::vector<uint8_t> out(static_cast<size_t>(EVP_MD_size(digest(m))));
    PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), salt.data(),
                      static_cast<int>(salt.size()), iterations, digest(m),
                      static_cast<int>(out.size()), out.data());
    return out;
}

scram_credential scram_credential_from_salted(scram_mechanism m,
                                              const std::vector<uint8_t>& salted_password,
                                              std::vector<uint8_t> salt, int32_t iterations) {
    scram_credential c;
    c.salt = std::move(salt);
    c.iterations = iterations;
    c.stored_key = hash(m, hmac(m, salted_password, "Client Key"));
    c.server_key = hmac(m, salted_password, "Server Key");
    return c;
}

scram_credential scram_credential_from_password(scram_mechanism m, std::string_view password,
                                                std::vector<uint8_t> salt, int32_t iterations) {
    auto salted = scram_salted_password(m, password, salt, iterations);
    return scram_credential_from_salted(m, salted, std::move(salt), iterations);
}

bool scram_password_matches(scram_mechanism m, std::string_view password,
                            const scram_credential& credential) {
    if (credential.iterations <= 0 || credential.stored_key.empty()) {
        return false;
    }
    auto salted = scram_salted_password(m, password, credential.salt, credential.iterations);
    auto stored_key = hash(m, hmac(m, salted, "Client Key"));
    return stored_key.size() == credential.stored_key.size() &&
           CRYPTO_memcmp(stored_key.data(), credential.stored_key.data(), stored_key.size()) == 0;
}

std::string encode_scram_credential(const scram_credential& c) {
    return fmt::format("salt={},stored_key={},server_key={},iterations={}", base64_encode(c.salt),
                       base64_encode(c.stored_key), base64_encode(c.server_key), c.iterations);
}

std::optional<scram_credential> decode_scram_credential(std::string_view text) {
    scram_credential c;
    bool salt = false, stored = false, server = false, iterations = false;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t comma = text.find(',', pos);
        auto part = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos
                                                                     : comma - pos);
        auto eq = part.find('=');
        if (eq == std::string_view::npos) {
            return std::nullopt;
        }
        auto key = part.substr(0, eq);
        auto value = part.substr(eq + 1);
        if (key == "iterations") {
            auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), c.iterations);
            if (ec != std::errc() || p != value.data() + value.size()) {
                return std::nullopt;
            }
            iterations = true;
        } else {
            auto bytes = base64_decode(value);
            if (!bytes) {
                return std::nullopt;
            }
            if (key == "salt") {
                c.salt = std::move(*bytes);
                salt = true;
            } else if (key == "stored_key") {
                c.stored_key = std::move(*bytes);
                stored = true;
            } else if (key == "server_key") {
                c.server_key = std::move(*bytes);
                server = true;
            }
        }
        if (comma == std::string_view::npos) {
            break;
        }
        pos = comma + 1;
    }
    if (!salt || !stored || !server || !iterations) {
        return std::nullopt;
    }
    return c;
}

std::string base64_encode(const std::vector<uint8_t>& bytes) {
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                            static_cast<int>(bytes.size()));
    out.resize(static_cast<size_t>(n));
    return out;
}

std::optional<std::vector<uint8_t>> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) {
        return std::nullopt;
    }
    std::vector<uint8_t> out(text.size() / 4 * 3 + 1);
    int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0) {
        return std::nullopt;
    }
    // EVP_DecodeBlock counts the bytes the padding stands for.
    size_t pad = 0;
    for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) {
        ++pad;
    }
    out.resize(static_cast<size_t>(n) - pad);
    return out;
}

std::vector<uint8_t> random_bytes(size_t n) {
    std::vector<uint8_t> out(n);
    RAND_bytes(out.data(), static_cast<int>(n));
    return out;
}

scram_server::scram_server(scram_mechanism m, credential_lookup lookup, std::string server_nonce)
    : _mechanism(m),
      _lookup(std::move(lookup)),
      _server_nonce(server_nonce.empty() ? printable_nonce() : std::move(server_nonce)) {}

scram_server::step scram_server::first(std::string_view client_first) {
    // gs2 header: "n," or "y," (no channel binding), then "a=<authzid>," or ",".
    if (client_first.size() < 3 || (client_first[0] != 'n' && client_first[0] != 'y') ||
        client_first[1] != ',') {
        return {{}, "client-first message has no valid gs2 header"};
    }
    size_t second = client_first.find(',', 2);
    if (second == std::string_view::npos) {
        return {{}, "client-first message has no valid gs2 header"};
    }
    std::string_view authzid_part = client_first.substr(2, second - 2);
    _gs2_header = std::string(client_first.substr(0, second + 1));
    _client_first_bare = std::string(client_first.substr(second + 1));
    auto attrs = attributes(_client_first_bare);
    if (attrs.size() < 2 || attrs[0].first != 'n' || attrs[1].first != 'r' ||
        attrs[1].second.empty()) {
        return {{}, "client-first message is malformed"};
    }
    auto user = decode_saslname(attrs[0].second);
    if (!user || user->empty()) {
        return {{}, "client-first message has an invalid user name"};
    }
    if (!authzid_part.empty()) {
        auto authzid = authzid_part.starts_with("a=")
                           ? decode_saslname(authzid_part.substr(2))
                           : std::nullopt;
        if (!authzid || *authzid != *user) {
            return {{}, "authorization id differs from the user name"};
        }
    }
    _user = std::move(*user);
    _credential = _lookup(_user);
    if (!_credential) {
        return {{}, fmt::format("no {} credential for user {}", scram_mechanism_name(_mechanism),
                                _user)};
    }
    _nonce = std::string(attrs[1].second) + _server_nonce;
    _server_first = fmt::format("r={},s={},i={}", _nonce, base64_encode(_credential->salt),
                                _credential->iterations);
    return {_server_first, {}};
}

scram_server::step scram_server::final(std::string_view client_final) {
    if (!_credential || _complete) {
        return {{}, "client-final message out of order"};
    }
    size_t proof_at = client_final.rfind(",p=");
    if (proof_at == std::string_view::npos) {
        return {{}, "client-final message has no proof"};
    }
    std::string_view without_proof = client_final.substr(0, proof_at);
    auto attrs = attributes(without_proof);
    if (attrs.size() < 2 || attrs[0].first != 'c' || attrs[1].first != 'r') {
        return {{}, "client-final message is malformed"};
    }
    std::vector<uint8_t> header(_gs2_header.begin(), _gs2_header.end());
    if (attrs[0].second != base64_encode(header)) {
        return {{}, "channel binding does not match the gs2 header"};
    }
    // Kafka's ScramSaslServer only requires the nonce to end with the server's, and librdkafka
    // relies on it: it sends its own nonce again in front of the server's.
    if (!attrs[1].second.ends_with(_nonce)) {
        return {{}, "nonce does not match the server's"};
    }
    auto proof = base64_decode(client_final.substr(proof_at + 3));
    if (!proof || proof->size() != _credential->stored_key.size()) {
        return {{}, "client proof is malformed"};
    }
    std::string auth_message =
        fmt::format("{},{},{}", _client_first_bare, _server_first, without_proof);
    auto client_signature = hmac(_mechanism, _credential->stored_key, auth_message);
    auto client_key = xor_bytes(*proof, client_signature);
    auto stored_key = hash(_mechanism, client_key);
    if (CRYPTO_memcmp(stored_key.data(), _credential->stored_key.data(), stored_key.size()) !=
        0) {
        return {{}, "invalid client proof"};
    }
    _complete = true;
    auto server_signature = hmac(_mechanism, _credential->server_key, auth_message);
    return {"v=" + base64_encode(server_signature), {}};
}

scram_client::scram_client(scram_mechanism m, std::string user, std::string password)
    : _mechanism(m), _user(std::move(user)), _password(std::move(password)) {}

std::string scram_client::first() {
    _nonce = printable_nonce();
    _client_first_bare = fmt::format("n={},r={}", encode_saslname(_user), _nonce);
    return "n,," + _client_first_bare;
}

std::optional<std::string> scram_client::final(std::string_view server_first) {
    auto attrs = attributes(server_first);
    if (attrs.size() < 3 || attrs[0].first != 'r' || attrs[1].first != 's' ||
        attrs[2].first != 'i' || !attrs[0].second.starts_with(_nonce)) {
        return std::nullopt;
    }
    auto salt = base64_decode(attrs[1].second);
    int32_t iterations = 0;
    auto it = attrs[2].second;
    auto [p, ec] = std::from_chars(it.data(), it.data() + it.size(), iterations);
    // Kafka's ScramSaslClient refuses fewer than the mechanism's minimum; above the maximum a
    // server could make us spend unbounded CPU on PBKDF2.
    if (!salt || ec != std::errc() || iterations < scram_min_iterations ||
        iterations > scram_max_iterations) {
        return std::nullopt;
    }
    auto salted = scram_salted_password(_mechanism, _password, *salt, iterations);
    auto client_key = hmac(_mechanism, salted, "Client Key");
    auto stored_key = hash(_mechanism, client_key);
    std::string without_proof = fmt::format("c=biws,r={}", attrs[0].second);
    std::string auth_message =
        fmt::format("{},{},{}", _client_first_bare, server_first, without_proof);
    auto proof = xor_bytes(client_key, hmac(_mechanism, stored_key, auth_message));
    _server_signature = hmac(_mechanism, hmac(_mechanism, salted, "Server Key"), auth_message);
    return fmt::format("{},p={}", without_proof, base64_encode(proof));
}

bool scram_client::verify(std::string_view server_final) const {
    return server_final == "v=" + base64_encode(_server_signature);
}

}  // namespace spool::broker::security
