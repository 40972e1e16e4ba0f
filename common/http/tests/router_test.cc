// Route matching without sockets.

#include "common/http/router.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace spool::http {
namespace {

request make(verb m, std::string target) {
    return request{m, target, 11};
}

router two_routes() {
    router r;
    r.add(verb::get, "/v1/topics", [](const request&, const path_params&) {
        return text_response(status::ok, "list", "text/plain");
    });
    r.add(verb::get, "/v1/topics/{name}", [](const request&, const path_params& p) {
        return text_response(status::ok, std::string(*p.get("name")), "text/plain");
    });
    return r;
}

TEST(router, test_literal_route_wins_only_on_exact_segment_count) {
    auto r = two_routes();
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics")).body(), "list");
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics/")).body(), "list");
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics/orders")).body(), "orders");
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics/orders/x")).result(), status::not_found);
}

TEST(router, test_malformed_percent_encoding_is_400) {
    auto r = two_routes();
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics/a%2")).result(), status::bad_request);
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics/a%zz")).result(), status::bad_request);
}

TEST(router, test_first_registration_wins_for_duplicate_routes) {
    auto r = two_routes();
    r.add(verb::get, "/v1/topics", [](const request&, const path_params&) {
        return text_response(status::ok, "second", "text/plain");
    });
    EXPECT_EQ(r.dispatch(make(verb::get, "/v1/topics")).body(), "list");
}

TEST(router, test_missing_capture_name_is_nullopt) {
    path_params p;
    p.add("name", "x");
    EXPECT_EQ(p.get("name"), "x");
    EXPECT_FALSE(p.get("other"));
}

}  // namespace
}  // namespace spool::http
