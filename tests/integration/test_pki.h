#pragma once

// Test certificates made with the openssl CLI in a directory: a CA (ca.pem, ca.key), a broker
// certificate for localhost and 127.0.0.1 (broker.key, broker.crt, and broker.pem holding key,
// certificate and CA as ssl.keystore.location takes them) with subject CN=<broker_cn>, and a
// client certificate /O=Spool/CN=alice (client.key, client.crt). Shared by the security suite
// (listeners) and the cluster suite (inter-broker TLS, etcd over TLS).
//
// Threading: test thread only (popen).

#include <array>
#include <cstdio>
#include <filesystem>
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

// Empty on success, else what openssl printed (a missing openssl included).
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
            "cat broker.key broker.crt ca.pem > broker.pem.tmp && mv broker.pem.tmp broker.pem && "
            "openssl req -newkey rsa:2048 -nodes -subj '/O=Spool/CN=alice' "
            "-keyout client.key -out client.csr && "
            "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
            "-out client.crt");
    return succeeded(out) ? std::string() : out;
}

}  // namespace spool::tests
