// Signed JWTs against a JWKS with the rules of Kafka's broker-side OAUTHBEARER validator, and the
// OAUTHBEARER client-first message grammar.

#include "broker/security/jwks_source.h"
#include "broker/security/jwt.h"
#include "broker/security/oauthbearer.h"
#include "broker/security/tests/jwt_signer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace spool::broker::security {
namespace {

using testing::jwks_of;
using testing::jwt_signer;
using json = nlohmann::json;

int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

class jwt_test : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        rsa = new jwt_signer(jwt_signer::rsa("rsa-1"));
        ec = new jwt_signer(jwt_signer::ec("ec-1"));
        other = new jwt_signer(jwt_signer::rsa("rsa-1"));  // same kid, another key
        std::string error;
        auto parsed = parse_jwks(jwks_of(*rsa, *ec), &error);
        ASSERT_TRUE(parsed) << error;
        set = new jwk_set(std::move(*parsed));
    }
    static void TearDownTestSuite() {
        delete rsa;
        delete ec;
        delete other;
        delete set;
    }
    static jwt_verdict check(const std::string& token, const jwt_rules& rules = {}) {
        return validate_jwt(token, *set, rules, now_ms());
    }
    static inline jwt_signer* rsa = nullptr;
    static inline jwt_signer* ec = nullptr;
    static inline jwt_signer* other = nullptr;
    static inline jwk_set* set = nullptr;
};

TEST_F(jwt_test, test_rs256_ps256_and_es256_tokens_are_valid_and_name_the_subject) {
    EXPECT_EQ(set->keys.size(), 2u);
    for (const auto& [signer, alg] :
         std::vector<std::pair<jwt_signer*, std::string>>{
             {rsa, "RS256"}, {rsa, "RS512"}, {rsa, "PS256"}, {ec, "ES256"}}) {
        auto v = check(signer->sign(jwt_signer::claims("alice"), alg));
        ASSERT_TRUE(v.claims) << alg << ": " << v.error;
        EXPECT_EQ(v.claims->principal, "alice");
        EXPECT_GT(v.claims->expires_ms, now_ms());
    }
}

TEST_F(jwt_test, test_a_token_signed_by_another_key_is_refused) {
    auto v = check(other->sign(jwt_signer::claims("alice")));
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("invalid RS256 signature"), std::string::npos) << v.error;
}

TEST_F(jwt_test, test_a_changed_payload_breaks_the_signature) {
    auto token = rsa->sign(jwt_signer::claims("alice"));
    auto first = token.find('.');
    auto second = token.find('.', first + 1);
    auto forged = token.substr(0, first + 1) + base64url_encode(jwt_signer::claims("admin").dump()) +
                  token.substr(second);
    EXPECT_FALSE(check(forged).claims);
}

TEST_F(jwt_test, test_alg_none_hmac_and_a_mismatched_key_type_are_refused) {
    json header = {{"alg", "none"}};
    auto unsigned_token = base64url_encode(header.dump()) + "." +
                          base64url_encode(jwt_signer::claims("alice").dump()) + ".";
    auto v = check(unsigned_token);
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("not accepted"), std::string::npos) << v.error;
    // ES256 claimed over the RSA key's id.
    auto token = rsa->sign(jwt_signer::claims("alice"));
    json es = {{"alg", "ES256"}, {"kid", "rsa-1"}};
    auto swapped = base64url_encode(es.dump()) + token.substr(token.find('.'));
    v = check(swapped);
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("cannot verify"), std::string::npos) << v.error;
}

TEST_F(jwt_test, test_an_unknown_kid_says_so_so_the_set_can_be_refreshed) {
    auto stranger = jwt_signer::rsa("rsa-2");
    auto v = check(stranger.sign(jwt_signer::claims("alice")));
    EXPECT_FALSE(v.claims);
    EXPECT_TRUE(v.unknown_key);
    // No kid with two keys in the set: refused, not a refresh.
    v = check(rsa->sign(jwt_signer::claims("alice"), "RS256", /*kid=*/false));
    EXPECT_FALSE(v.claims);
    EXPECT_FALSE(v.unknown_key);
}

TEST_F(jwt_test, test_expiry_not_before_and_issued_at_honour_the_clock_skew) {
    auto claims = jwt_signer::claims("alice");
    auto now = claims["iat"].get<int64_t>();
    claims["exp"] = now - 10;  // within the default 30 s of skew
    EXPECT_TRUE(check(rsa->sign(claims)).claims);
    claims["exp"] = now - 31;
    auto v = check(rsa->sign(claims));
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("expired"), std::string::npos) << v.error;
    jwt_rules strict;
    strict.clock_skew_s = 0;
    claims["exp"] = now - 1;
    EXPECT_FALSE(check(rsa->sign(claims), strict).claims);

    claims = jwt_signer::claims("alice");
    claims["nbf"] = now + 120;
    EXPECT_FALSE(check(rsa->sign(claims)).claims);
    auto no_exp = jwt_signer::claims("alice");
    no_exp.erase("exp");
    v = check(rsa->sign(no_exp));
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("exp"), std::string::npos) << v.error;
    auto no_iat = jwt_signer::claims("alice");
    no_iat.erase("iat");
    v = check(rsa->sign(no_iat));
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("iat"), std::string::npos) << v.error;
}

TEST_F(jwt_test, test_issuer_and_audience_are_checked_when_configured) {
    jwt_rules rules;
    rules.issuer = "https://idp.example";
    rules.audiences = {"kafka", "spool"};
    auto claims = jwt_signer::claims("alice");
    EXPECT_FALSE(check(rsa->sign(claims), rules).claims);  // neither
    claims["iss"] = "https://idp.example";
    claims["aud"] = "other";
    EXPECT_FALSE(check(rsa->sign(claims), rules).claims);
    claims["aud"] = json::array({"other", "spool"});
    EXPECT_TRUE(check(rsa->sign(claims), rules).claims);
    claims["aud"] = "kafka";
    EXPECT_TRUE(check(rsa->sign(claims), rules).claims);
    claims["iss"] = "https://evil.example";
    EXPECT_FALSE(check(rsa->sign(claims), rules).claims);
}

TEST_F(jwt_test, test_the_principal_claim_and_scopes_are_configurable) {
    jwt_rules rules;
    rules.principal_claim = "client_id";
    auto claims = jwt_signer::claims("alice");
    claims["scope"] = "kafka.read kafka.write";
    EXPECT_FALSE(check(rsa->sign(claims), rules).claims);  // no client_id
    claims["client_id"] = "svc-orders";
    auto v = check(rsa->sign(claims), rules);
    ASSERT_TRUE(v.claims) << v.error;
    EXPECT_EQ(v.claims->principal, "svc-orders");
    EXPECT_EQ(v.claims->scopes, (std::vector<std::string>{"kafka.read", "kafka.write"}));
}

TEST_F(jwt_test, test_malformed_tokens_are_refused_without_throwing) {
    for (std::string bad : std::vector<std::string>{"", ".", "..", "a.b", "a.b.c.d", "!!!.@@@.###", "eyJ.eyJ.sig",
                            base64url_encode("[]") + "." + base64url_encode("{}") + ".AA"}) {
        auto v = check(bad);
        EXPECT_FALSE(v.claims) << bad;
        EXPECT_FALSE(v.error.empty()) << bad;
    }
}

TEST_F(jwt_test, test_jwks_keys_spool_cannot_use_are_left_out_and_named) {
    auto doc = json::parse(jwks_of(*rsa));
    doc["keys"].push_back({{"kty", "oct"}, {"kid", "hmac"}, {"k", "c2VjcmV0"}});
    doc["keys"].push_back({{"kty", "RSA"}, {"kid", "enc"}, {"use", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}});
    doc["keys"].push_back({{"kty", "EC"}, {"kid", "bad-point"}, {"crv", "P-256"},
                           {"x", base64url_encode(std::string(32, '\1'))},
                           {"y", base64url_encode(std::string(32, '\2'))}});
    std::string error;
    std::vector<std::string> skipped;
    auto parsed = parse_jwks(doc.dump(), &error, &skipped);
    ASSERT_TRUE(parsed) << error;
    EXPECT_EQ(parsed->keys.size(), 1u);
    EXPECT_EQ(skipped.size(), 3u);
    EXPECT_FALSE(parse_jwks("{\"nokeys\":1}", &error));
    EXPECT_FALSE(parse_jwks("not json", &error));
}

TEST_F(jwt_test, test_rsa_keys_under_2048_bits_are_refused) {
    auto small = jwt_signer::rsa("small", 1024);
    std::string error;
    auto parsed = parse_jwks(jwks_of(small), &error);
    ASSERT_TRUE(parsed) << error;
    auto v = validate_jwt(small.sign(jwt_signer::claims("alice")), *parsed, {}, now_ms());
    EXPECT_FALSE(v.claims);
    EXPECT_NE(v.error.find("2048"), std::string::npos) << v.error;
}

TEST(oauthbearer_message, test_kafka_and_librdkafka_first_messages_parse) {
    auto m = parse_oauthbearer_initial_response("n,,\x01" "auth=Bearer abc.def-_.ghi\x01\x01");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->token, "abc.def-_.ghi");
    EXPECT_EQ(m->authzid, "");
    m = parse_oauthbearer_initial_response(
        "n,a=al=2Cice,\x01" "auth=bearer  tok\x01" "traceId=123 x\x01\x01");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->authzid, "al,ice");
    EXPECT_EQ(m->token, "tok");
    EXPECT_EQ(m->extensions.at("traceId"), "123 x");
}

TEST(oauthbearer_message, test_anything_else_is_refused) {
    for (std::string bad :
         {std::string(""), std::string("n,,"), std::string("y,,\x01" "auth=Bearer t\x01\x01"),
          std::string("n,,\x01" "auth=Basic t\x01\x01"), std::string("n,,\x01" "auth=Bearer\x01\x01"),
          std::string("n,,\x01" "auth=Bearer t\x01"), std::string("n,,\x01\x01"),
          std::string("n,a=,\x01" "auth=Bearer t\x01\x01"),
          std::string("n,,\x01" "auth=Bearer t!t\x01\x01"),
          std::string("n,,\x01" "k3y=v\x01" "auth=Bearer t\x01\x01"), std::string("\x01")}) {
        EXPECT_FALSE(parse_oauthbearer_initial_response(bad)) << ::testing::PrintToString(bad);
    }
}

TEST(jwks_source, test_a_file_set_is_loaded_and_reloaded_when_it_changes) {
    namespace fs = std::filesystem;
    auto dir = fs::temp_directory_path() / ("spool-jwks-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto path = dir / "jwks.json";
    auto a = jwt_signer::rsa("a");
    auto b = jwt_signer::ec("b");
    std::ofstream(path) << jwks_of(a);
    std::string error;
    auto source = jwks_source::make({.url = "file://" + path.string()}, &error);
    ASSERT_TRUE(source) << error;
    ASSERT_TRUE(source->load_once(&error)) << error;
    ASSERT_EQ(source->current()->keys.size(), 1u);
    // A half-written file keeps the previous set.
    std::ofstream(path) << "{\"keys\":[";
    EXPECT_FALSE(source->load_once(&error));
    EXPECT_EQ(source->current()->keys.size(), 1u);
    std::ofstream(path) << jwks_of(a, b);
    ASSERT_TRUE(source->load_once(&error)) << error;
    EXPECT_EQ(source->current()->keys.size(), 2u);
    fs::remove_all(dir);

    EXPECT_FALSE(jwks_source::make({.url = "ftp://x/y"}, &error));
    EXPECT_FALSE(jwks_source::make({.url = "file:"}, &error));
}

}  // namespace
}  // namespace spool::broker::security
