#pragma once

// Shell commands and a throwaway PKI for the tests that drive real TLS peers (kcat, curl, the
// openssl CLI) against a real broker: a CA (ca.pem, ca.key), a broker certificate for localhost
// and 127.0.0.1 (broker.key, broker.crt, and broker.pem holding key, certificate and CA as
// ssl.keystore.location takes them) with subject CN=<broker_cn>, and client certificates
// (client.key, client.crt: /O=Spool/CN=alice). Shared by the security suite (listeners), the
// admin API suite and the cluster suite (inter-broker TLS, etcd over TLS).
//
// Threading: test thread only (popen).

#include <array>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <string>

namespace spool::tests {

// Output and exit status ("rc=N" on the last line) of a shell command.
inline std::string sh(const std::string& command) {
    std::string out;
    FILE* p = ::popen(("(" + command + ") 2>&1; echo rc=$?").c_str(), "r");
    if (p == nullptr) {
        return "popen failed\nrc=127";
    }
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) {
        out.append(buf.data(), n);
    }
    ::pclose(p);
    return out;
}

inline bool succeeded(const std::string& out) {
    return out.find("rc=0\n") != std::string::npos && out.ends_with("rc=0\n");
}

// "" when every tool is on the PATH, else a line naming each missing one (a suite's setup error:
// a missing peer fails the suite, nothing is skipped).
inline std::string missing_tools(std::initializer_list<const char*> tools) {
    std::string out;
    for (const char* tool : tools) {
        if (!succeeded(sh(std::string("command -v ") + tool))) {
            out += std::string(tool) + " is not installed (scripts/setup.sh --with-tests); ";
        }
    }
    return out;
}

#ifdef SPOOL_SOURCE_DIR
// The Kafka 4.x jars (scripts/peers/fetch-kafka.sh prints where; it fetches them when absent).
inline std::string kafka_dir() {
    auto out = sh("bash " SPOOL_SOURCE_DIR "/scripts/peers/fetch-kafka.sh --jars-only");
    auto line_end = out.find('\n');
    return succeeded(out) ? out.substr(0, line_end) : std::string();
}
#endif

// A client certificate <name>.crt / <name>.key signed by the CA of make_pki, with the subject
// given as openssl's -subj ("/O=Spool/CN=alice"). "" or the openssl output on failure.
inline std::string make_client_certificate(const std::filesystem::path& d, const std::string& name,
                                           const std::string& subject) {
    auto out = sh("cd '" + d.string() + "' && openssl req -newkey rsa:2048 -nodes -subj '" +
                  subject + "' -keyout " + name + ".key -out " + name +
                  ".csr && openssl x509 -req -in " + name +
                  ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out " + name + ".crt");
    return succeeded(out) ? std::string() : out;
}

// ca.pem, broker.pem (CN=broker_cn, SAN localhost and 127.0.0.1) and client.crt/.key
// (CN=alice,O=Spool). "" or the openssl output on failure.
inline std::string make_pki(const std::filesystem::path& d,
                            const std::string& broker_cn = "localhost") {
    std::string q = "cd '" + d.string() + "' && ";
    auto out = sh(
        q + "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=spool-test-ca' "
            "-keyout ca.key -out ca.pem && "
            "openssl req -newkey rsa:2048 -nodes -subj '/CN=" + broker_cn + "' "
            "-keyout broker.key -out broker.csr && "
            "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext && "
            "openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
            "-extfile san.ext -out broker.crt && "
            "cat broker.key broker.crt ca.pem > broker.pem.tmp && mv broker.pem.tmp broker.pem");
    if (!succeeded(out)) {
        return out;
    }
    return make_client_certificate(d, "client", "/O=Spool/CN=alice");
}

}  // namespace spool::tests
