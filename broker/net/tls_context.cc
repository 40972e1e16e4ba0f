#include "broker/net/tls_context.h"

#include "common/log.h"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <algorithm>
#include <mutex>

namespace spool::broker::net {

namespace asio = boost::asio;

namespace {

std::optional<int> protocol_version(std::string_view name) {
    if (name == "TLSv1.3") {
        return TLS1_3_VERSION;
    }
    if (name == "TLSv1.2") {
        return TLS1_2_VERSION;
    }
    if (name == "TLSv1.1") {
        return TLS1_1_VERSION;
    }
    if (name == "TLSv1") {
        return TLS1_VERSION;
    }
    return std::nullopt;
}

std::string openssl_errors() {
    std::string out;
    while (unsigned long e = ERR_get_error()) {
        char buf[256];
        ERR_error_string_n(e, buf, sizeof buf);
        if (!out.empty()) {
            out += "; ";
        }
        out += buf;
    }
    return out;
}

// Kafka names suites as IANA does (TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256); OpenSSL's TLS 1.2 list
// wants its own names, TLS 1.3 suites keep the IANA ones. Unknown names pass through as OpenSSL
// names, so either spelling works.
bool set_cipher_suites(SSL_CTX* ctx, const std::vector<std::string>& names, std::string* error) {
    if (names.empty()) {
        return true;
    }
    SSL* probe = SSL_new(ctx);
    STACK_OF(SSL_CIPHER)* all = probe != nullptr ? SSL_get1_supported_ciphers(probe) : nullptr;
    std::string tls12;
    std::string tls13;
    for (const auto& name : names) {
        if (name.starts_with("TLS_AES_") || name.starts_with("TLS_CHACHA20_")) {
            tls13 += (tls13.empty() ? "" : ":") + name;
            continue;
        }
        std::string openssl_name = name;
        for (int i = 0; all != nullptr && i < sk_SSL_CIPHER_num(all); ++i) {
            const SSL_CIPHER* c = sk_SSL_CIPHER_value(all, i);
            if (const char* standard = SSL_CIPHER_standard_name(c);
                standard != nullptr && name == standard) {
                openssl_name = SSL_CIPHER_get_name(c);
            }
        }
        tls12 += (tls12.empty() ? "" : ":") + openssl_name;
    }
    sk_SSL_CIPHER_free(all);
    SSL_free(probe);
    if (!tls12.empty() && SSL_CTX_set_cipher_list(ctx, tls12.c_str()) != 1) {
        *error = fmt::format("ssl.cipher.suites: no usable TLS 1.2 suite in '{}'", tls12);
        return false;
    }
    if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1) {
        *error = fmt::format("ssl.cipher.suites: no usable TLS 1.3 suite in '{}'", tls13);
        return false;
    }
    return true;
}

}  // namespace

std::optional<tls_material> build_tls(const tls_settings& s, std::string* error) {
    auto fail = [&](std::string why) -> std::optional<tls_material> {
        auto details = openssl_errors();
        *error = details.empty() ? why : fmt::format("{} ({})", why, details);
        return std::nullopt;
    };
    const bool has_key = s.keystore_location || (s.keystore_key && s.keystore_certificate_chain);
    if (s.keystore_type != "PEM" && (s.role == tls_role::server || has_key)) {
        return fail(fmt::format("ssl.keystore.type {} is not supported: Spool reads PEM key stores",
                                s.keystore_type));
    }
    bool has_trust = s.truststore_location || s.truststore_certificates;
    if (has_trust && s.truststore_type != "PEM") {
        return fail(fmt::format(
            "ssl.truststore.type {} is not supported: Spool reads PEM trust stores",
            s.truststore_type));
    }
    const bool client = s.role == tls_role::client;
    auto ctx = std::make_shared<asio::ssl::context>(client ? asio::ssl::context::tls_client
                                                           : asio::ssl::context::tls_server);
    SSL_CTX* native = ctx->native_handle();
    boost::system::error_code ec;
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                         asio::ssl::context::no_sslv3 | asio::ssl::context::single_dh_use,
                     ec);
    // Protocols: the lowest and highest enabled version bound what OpenSSL negotiates.
    int min_version = 0;
    int max_version = 0;
    for (const auto& p : s.enabled_protocols) {
        auto v = protocol_version(p);
        if (!v) {
            return fail(fmt::format("ssl.enabled.protocols: unknown protocol '{}' (TLSv1.2, "
                                    "TLSv1.3)",
                                    p));
        }
        min_version = min_version == 0 ? *v : std::min(min_version, *v);
        max_version = std::max(max_version, *v);
    }
    if (min_version == 0) {
        return fail("ssl.enabled.protocols is empty");
    }
    SSL_CTX_set_min_proto_version(native, min_version);
    SSL_CTX_set_max_proto_version(native, max_version);
    if (!set_cipher_suites(native, s.cipher_suites, error)) {
        return std::nullopt;
    }
    if (s.key_password) {
        ctx->set_password_callback(
            [password = *s.key_password](size_t, asio::ssl::context::password_purpose) {
                return password;
            },
            ec);
    }
    if (s.keystore_location) {
        ctx->use_certificate_chain_file(*s.keystore_location, ec);
        if (ec) {
            return fail(fmt::format("ssl.keystore.location {}: no certificate chain: {}",
                                    *s.keystore_location, ec.message()));
        }
        const auto& key_file = s.key_location ? *s.key_location : *s.keystore_location;
        ctx->use_private_key_file(key_file, asio::ssl::context::pem, ec);
        if (ec) {
            return fail(fmt::format("{}: no usable private key: {}", key_file, ec.message()));
        }
    } else if (s.keystore_key && s.keystore_certificate_chain) {
        ctx->use_certificate_chain(asio::buffer(*s.keystore_certificate_chain), ec);
        if (ec) {
            return fail(fmt::format("ssl.keystore.certificate.chain: {}", ec.message()));
        }
        ctx->use_private_key(asio::buffer(*s.keystore_key), asio::ssl::context::pem, ec);
        if (ec) {
            return fail(fmt::format("ssl.keystore.key: {}", ec.message()));
        }
    } else if (!client) {
        return fail("a TLS listener needs ssl.keystore.location, or ssl.keystore.key with "
                    "ssl.keystore.certificate.chain");
    }
    if (has_key && SSL_CTX_check_private_key(native) != 1) {
        return fail("the key store's private key does not match its certificate");
    }
    if (s.truststore_location) {
        ctx->load_verify_file(*s.truststore_location, ec);
        if (ec) {
            return fail(fmt::format("ssl.truststore.location {}: {}", *s.truststore_location,
                                    ec.message()));
        }
    } else if (s.truststore_certificates) {
        ctx->add_certificate_authority(asio::buffer(*s.truststore_certificates), ec);
        if (ec) {
            return fail(fmt::format("ssl.truststore.certificates: {}", ec.message()));
        }
    } else if (client) {
        // Kafka's client falls back to the JVM's default trust store; ours is OpenSSL's.
        ctx->set_default_verify_paths(ec);
    }
    if (client) {
        ctx->set_verify_mode(asio::ssl::verify_peer, ec);
    } else if (s.client_auth == "required" || s.client_auth == "requested") {
        if (!has_trust) {
            return fail(fmt::format("ssl.client.auth={} needs a trust store "
                                    "(ssl.truststore.location or ssl.truststore.certificates)",
                                    s.client_auth));
        }
        auto mode = asio::ssl::verify_peer;
        if (s.client_auth == "required") {
            mode |= asio::ssl::verify_fail_if_no_peer_cert;
        }
        ctx->set_verify_mode(mode, ec);
    } else {
        ctx->set_verify_mode(asio::ssl::verify_none, ec);
    }
    // Resumed sessions of verified clients need an id context (else OpenSSL refuses them).
    static constexpr unsigned char session_context[] = "spool";
    SSL_CTX_set_session_id_context(native, session_context, sizeof session_context - 1);

    auto rules = security::principal_rules::parse(s.principal_mapping_rules, error);
    if (!rules) {
        return std::nullopt;
    }
    return tls_material{
        std::move(ctx), std::make_shared<const security::principal_rules>(std::move(*rules))};
}

std::vector<tls_listener::file_stamp> tls_listener::stamps_of(const tls_settings& s) {
    std::vector<file_stamp> out;
    for (const auto& path : {s.keystore_location, s.key_location, s.truststore_location}) {
        if (!path) {
            continue;
        }
        file_stamp stamp{*path};
        struct stat st {};
        if (::stat(path->c_str(), &st) == 0) {
            stamp.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
            stamp.size = st.st_size;
        }
        out.push_back(std::move(stamp));
    }
    return out;
}

tls_client_source tls_client(std::string name, std::function<tls_settings()> source,
                             std::string* error) {
    auto settings = [source = std::move(source)] {
        auto s = source();
        s.role = tls_role::client;
        return s;
    };
    std::shared_ptr<tls_listener> tls = tls_listener::create(std::move(name), settings, error);
    if (!tls) {
        return nullptr;
    }
    // current() is meant for one thread; clients connect from several (every shard's fetchers,
    // the etcd client's thread). A connect holds the lock for a stat() of each file, and for a
    // rebuild when one changed.
    auto lock = std::make_shared<std::mutex>();
    return [tls, lock] {
        std::lock_guard<std::mutex> held(*lock);
        return tls->current().context;
    };
}

std::unique_ptr<tls_listener> tls_listener::create(std::string listener, settings_source source,
                                                   std::string* error) {
    std::unique_ptr<tls_listener> out(new tls_listener(std::move(listener), std::move(source)));
    out->_settings = out->_source();
    out->_stamps = stamps_of(out->_settings);
    auto material = build_tls(out->_settings, error);
    if (!material) {
        *error = fmt::format("listener {}: {}", out->_listener, *error);
        return nullptr;
    }
    out->_material = std::move(*material);
    out->_checked = std::chrono::steady_clock::now();
    return out;
}

tls_material tls_listener::current() {
    auto now = std::chrono::steady_clock::now();
    if (now - _checked < reload_check_interval) {
        return _material;
    }
    _checked = now;
    auto settings = _source();
    auto stamps = stamps_of(settings);
    if (settings == _settings && stamps == _stamps) {
        return _material;
    }
    std::string error;
    auto material = build_tls(settings, &error);
    // Remembered either way: a broken file is reported once, and retried when it changes again.
    _settings = std::move(settings);
    _stamps = std::move(stamps);
    if (!material) {
        log::get("net")->error("listener {}: TLS settings changed but do not load, keeping the "
                               "previous ones: {}",
                               _listener, error);
        return _material;
    }
    log::get("net")->info("listener {}: TLS key store and trust store reloaded", _listener);
    _material = std::move(*material);
    return _material;
}

}  // namespace spool::broker::net
