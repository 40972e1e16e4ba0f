#include "tests/fuzz/sasl_fuzz.h"

#include "broker/security/scram.h"
#include "protocol/messages/alter_user_scram_credentials.h"
#include "protocol/messages/api_versions.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/sasl_authenticate.h"
#include "protocol/messages/sasl_handshake.h"
#include "protocol/api/framing.h"

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

namespace spool::tests::fuzz {

namespace {

namespace pr = spool::protocol;
namespace sec = spool::broker::security;
using namespace std::chrono_literals;

constexpr std::string_view sasl_listener = "SASL";
// The broker is restarted now and then so state (sessions, parked failures) cannot pile up.
constexpr uint64_t restart_every = 2000;
constexpr size_t max_steps = 24;

// Takes bytes from the front of the input; past the end it yields zeros.
class input_reader {
public:
    explicit input_reader(std::span<const uint8_t> in) : _in(in) {}
    bool empty() const { return _at >= _in.size(); }
    uint8_t byte() { return _at < _in.size() ? _in[_at++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(byte() << 8 | byte()); }
    // Up to `max` bytes (length from the input).
    std::vector<uint8_t> bytes(size_t max) {
        size_t n = std::min<size_t>(u16() % (max + 1), _in.size() - std::min(_at, _in.size()));
        std::vector<uint8_t> out(_in.begin() + static_cast<std::ptrdiff_t>(_at),
                                 _in.begin() + static_cast<std::ptrdiff_t>(_at + n));
        _at += n;
        return out;
    }
    std::string text(size_t max) {
        auto b = bytes(max);
        return {b.begin(), b.end()};
    }

private:
    std::span<const uint8_t> _in;
    size_t _at = 0;
};

// The real message, or a mutation of it the input chooses.
std::string mutate(input_reader& in, std::string real) {
    switch (in.byte() % 6) {
        case 0:
        case 1:
            return real;
        case 2:  // flip bytes
            for (int i = 0, n = in.byte() % 4 + 1; i < n && !real.empty(); ++i) {
                real[in.u16() % real.size()] ^= static_cast<char>(in.byte() | 1);
            }
            return real;
        case 3:  // cut
            return real.substr(0, real.empty() ? 0 : in.u16() % real.size());
        case 4:  // extend
            return real + in.text(64);
        default:
            return in.text(256);
    }
}

const std::vector<std::string>& users() {
    static const std::vector<std::string> u{"alice", "bob", "nobody", ""};
    return u;
}
const std::vector<std::string>& passwords() {
    static const std::vector<std::string> p{"alice-secret", "bob-secret", "wrong", ""};
    return p;
}

// exchange mode: scram_server with bob's credential (both mechanisms).
uint64_t run_exchange(input_reader& in) {
    auto m = in.byte() % 2 == 0 ? sec::scram_mechanism::sha256 : sec::scram_mechanism::sha512;
    static const std::vector<uint8_t> salt(16, 0x5a);
    auto credential = sec::scram_credential_from_password(m, "bob-secret", salt, 4096);
    sec::scram_server server(
        m,
        [&](const std::string& user) -> std::optional<sec::scram_credential> {
            if (user == "bob") {
                return credential;
            }
            return std::nullopt;
        },
        "fuzzservernonce");
    const auto& user = users()[in.byte() % users().size()];
    const auto& password = passwords()[in.byte() % passwords().size()];
    sec::scram_client client(m, user, password);
    auto first = server.first(mutate(in, client.first()));
    if (!first.ok()) {
        return 0;
    }
    auto real_final = client.final(first.reply);
    auto final = server.final(mutate(in, real_final.value_or(std::string())));
    if (final.ok() && server.complete()) {
        (void)client.verify(final.reply);
        return 1;
    }
    return 0;
}

std::vector<uint8_t> without_size(std::vector<uint8_t> frame) {
    frame.erase(frame.begin(), frame.begin() + std::min<size_t>(4, frame.size()));
    return frame;
}

template <class Request>
std::vector<uint8_t> frame_of(int32_t correlation, int16_t version, const Request& req) {
    return without_size(pr::encode_request(correlation, "sasl-fuzz", version, req));
}

std::string mechanism(input_reader& in) {
    static const std::vector<std::string> known{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512",
                                                "GSSAPI", "OAUTHBEARER", "plain"};
    auto pick = in.byte();
    return pick < 240 ? known[pick % known.size()] : in.text(32);
}

pr::sasl_authenticate_request authenticate(std::vector<uint8_t> token) {
    pr::sasl_authenticate_request r;
    r.auth_bytes = std::move(token);
    return r;
}

// Reads happen in statement order (operands of + are unsequenced), so an input means the same
// to every compiler and the replay test's hand-made inputs hold.
std::vector<uint8_t> plain_token(input_reader& in) {
    const bool with_authzid = in.byte() % 8 == 0;
    const std::string& user = users()[in.byte() % users().size()];
    const std::string& password = passwords()[in.byte() % passwords().size()];
    std::string text = (with_authzid ? user : std::string()) + '\0' + user + '\0' + password;
    text = mutate(in, text);
    return {text.begin(), text.end()};
}

// One request of connection mode.
std::vector<uint8_t> next_frame(input_reader& in, int32_t correlation) {
    const uint8_t kind = in.byte() % 10;
    if (kind == 6) {
        // A bare token, as after a v0 handshake (or garbage where a header is expected).
        return in.byte() % 2 == 0 ? plain_token(in) : in.bytes(512);
    }
    if (kind == 7) {
        return frame_of(correlation, 3, pr::api_versions_request{});
    }
    if (kind == 8) {
        return frame_of(correlation, 9, pr::metadata_request{});
    }
    if (kind == 9) {
        return in.bytes(1024);
    }
    const auto version = static_cast<int16_t>(in.byte() % (kind <= 1 ? 2 : 3));
    if (kind <= 1) {
        pr::sasl_handshake_request hs;
        hs.mechanism = mechanism(in);
        return frame_of(correlation, version, hs);
    }
    std::vector<uint8_t> token;
    if (kind == 2) {
        token = plain_token(in);
    } else if (kind == 3) {
        auto m = in.byte() % 2 == 0 ? sec::scram_mechanism::sha256 : sec::scram_mechanism::sha512;
        sec::scram_client client(m, users()[in.byte() % users().size()], "bob-secret");
        auto first = mutate(in, client.first());
        token.assign(first.begin(), first.end());
    } else if (kind == 4) {
        // A client-final shaped message; its nonce and proof are the input's.
        std::string final = "c=biws,r=" + in.text(64);
        final += ",p=" + in.text(64);
        token.assign(final.begin(), final.end());
    } else {
        token = in.bytes(512);
    }
    return frame_of(correlation, version, authenticate(std::move(token)));
}

}  // namespace

sasl_under_fuzz::sasl_under_fuzz() {
    start_broker();
}

sasl_under_fuzz::~sasl_under_fuzz() {
    stop();
}

void sasl_under_fuzz::start_broker() {
    _broker = in_process_broker::start(
        &_error,
        {"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT",
         "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
         "connection.failed.authentication.delay.ms=0", "connections.max.reauth.ms=3600000",
         "listener.name.sasl.plain.sasl.jaas.config="
         "org.apache.kafka.common.security.plain.PlainLoginModule required "
         "user_alice=\"alice-secret\";"});
    if (!_broker) {
        return;
    }
    // bob's SCRAM credentials, as kafka-configs stores them.
    auto admin = _broker->open_connection();
    pr::alter_user_scram_credentials_request req;
    static const std::vector<uint8_t> salt(16, 0x11);
    for (auto m : {sec::scram_mechanism::sha256, sec::scram_mechanism::sha512}) {
        auto& u = req.upsertions.emplace_back();
        u.name = "bob";
        u.mechanism = static_cast<int8_t>(m);
        u.iterations = 4096;
        u.salt = salt;
        u.salted_password = sec::scram_salted_password(m, "bob-secret", salt, 4096);
    }
    _broker->submit(*admin, frame_of(1, 0, req));
    _broker->wait_idle(*admin, 10s);
}

size_t sasl_under_fuzz::run(std::span<const uint8_t> input) {
    input_reader in(input);
    if (in.byte() % 2 == 0) {
        _completed += run_exchange(in);
        return 0;
    }
    if (!_broker) {
        return 0;
    }
    if (++_inputs % restart_every == 0) {
        _broker->stop();
        _broker.reset();
        start_broker();
        if (!_broker) {
            return 0;
        }
    }
    auto conn = _broker->open_connection();
    conn->info.listener = std::string(sasl_listener);
    conn->info.security_protocol = "SASL_PLAINTEXT";
    conn->info.authenticated = false;
    size_t sent = 0;
    for (int32_t correlation = 1; !in.empty() && sent < max_steps; ++correlation) {
        if (!_broker->wait_ready(*conn, 2000ms)) {
            break;
        }
        _broker->submit(*conn, next_frame(in, correlation));
        ++sent;
    }
    _broker->wait_idle(*conn, 4000ms);
    return sent;
}

size_t sasl_under_fuzz::stop() {
    if (!_broker) {
        return 0;
    }
    size_t unanswered = _broker->stop();
    _broker.reset();
    return unanswered;
}

}  // namespace spool::tests::fuzz
