// The fake API server the reconciler unit tests use behaves as the real one where the
// reconcilers depend on it: versions, generations, preconditions, finalizers, label selectors.

#include "operator/kube/testing/fake_client.h"

#include <gtest/gtest.h>

namespace spool::op::kube::testing {
namespace {

json config_map(const std::string& name, const std::string& value) {
    return obj({{"metadata", obj({{"name", str(name)},
                                  {"namespace", str("ns")},
                                  {"labels", obj({{"app", str("spool")}})}})},
                {"data", obj({{"k", str(value)}})}});
}

TEST(fake_client, apply_creates_then_bumps_generation_only_on_a_change) {
    fake_client api;
    auto first = api.apply(kinds::config_map, "ns", "a", config_map("a", "1"));
    ASSERT_TRUE(first);
    EXPECT_EQ(get_int(first.value().at("metadata"), "generation"), 1);
    auto rv1 = get_string(first.value().at("metadata"), "resourceVersion");
    auto same = api.apply(kinds::config_map, "ns", "a", config_map("a", "1"));
    EXPECT_EQ(get_string(same.value().at("metadata"), "resourceVersion"), rv1);
    auto changed = api.apply(kinds::config_map, "ns", "a", config_map("a", "2"));
    EXPECT_EQ(get_int(changed.value().at("metadata"), "generation"), 2);
    EXPECT_NE(get_string(changed.value().at("metadata"), "resourceVersion"), rv1);
    EXPECT_EQ(api.writes().size(), 3u);
}

TEST(fake_client, stale_resource_version_and_wrong_uid_conflict) {
    fake_client api;
    auto made = api.create(kinds::config_map, "ns", config_map("a", "1")).value();
    json stale = made;
    ASSERT_TRUE(api.replace(kinds::config_map, "ns", "a", made));
    auto again = api.replace(kinds::config_map, "ns", "a", stale);
    ASSERT_FALSE(again);
    EXPECT_TRUE(again.error().is_conflict());
    auto wrong_uid = api.remove(kinds::config_map, "ns", "a", "not-its-uid");
    ASSERT_FALSE(wrong_uid);
    EXPECT_TRUE(wrong_uid.error().is_conflict());
    ASSERT_TRUE(api.remove(kinds::config_map, "ns", "a"));
    EXPECT_TRUE(api.get(kinds::config_map, "ns", "a").error().is_not_found());
}

TEST(fake_client, finalizers_turn_delete_into_a_deletion_timestamp) {
    fake_client api;
    json with_finalizer = config_map("a", "1");
    with_finalizer["metadata"]["finalizers"] = arr({str("spool.dev/topic")});
    ASSERT_TRUE(api.create(kinds::config_map, "ns", with_finalizer));
    ASSERT_TRUE(api.remove(kinds::config_map, "ns", "a"));
    auto still = api.get(kinds::config_map, "ns", "a");
    ASSERT_TRUE(still);
    EXPECT_TRUE(still.value().at("metadata").has_field("deletionTimestamp"));
    ASSERT_TRUE(api.merge_patch(kinds::config_map, "ns", "a",
                                obj({{"metadata", obj({{"finalizers", json::null()}})}})));
    // The last finalizer gone from an object being deleted: the API server removes it.
    EXPECT_FALSE(api.object(kinds::config_map, "ns", "a"));
}

TEST(fake_client, an_object_not_being_deleted_keeps_living_without_finalizers) {
    fake_client api;
    json with_finalizer = config_map("a", "1");
    with_finalizer["metadata"]["finalizers"] = arr({str("spool.dev/topic")});
    ASSERT_TRUE(api.create(kinds::config_map, "ns", with_finalizer));
    ASSERT_TRUE(api.merge_patch(kinds::config_map, "ns", "a",
                                obj({{"metadata", obj({{"finalizers", json::null()}})}})));
    ASSERT_TRUE(api.object(kinds::config_map, "ns", "a"));
    EXPECT_FALSE(find(api.object(kinds::config_map, "ns", "a")->at("metadata"), "finalizers"));
}

TEST(fake_client, list_filters_by_namespace_and_labels_and_status_is_kept_apart) {
    fake_client api;
    ASSERT_TRUE(api.apply(kinds::config_map, "ns", "a", config_map("a", "1")));
    json other = config_map("b", "1");
    other["metadata"]["labels"] = obj({{"app", str("other")}});
    ASSERT_TRUE(api.apply(kinds::config_map, "ns", "b", other));
    ASSERT_TRUE(api.apply(kinds::config_map, "elsewhere", "c", config_map("c", "1")));
    EXPECT_EQ(api.list(kinds::config_map, "ns", {"app=spool", ""}).value().items.size(), 1u);
    EXPECT_EQ(api.list(kinds::config_map, "", {"app=spool", ""}).value().items.size(), 2u);
    EXPECT_EQ(api.list(kinds::config_map, "ns").value().items.size(), 2u);

    json with_status = api.object(kinds::config_map, "ns", "a").value();
    with_status["status"] = obj({{"phase", str("Done")}});
    ASSERT_TRUE(api.replace_status(kinds::config_map, "ns", "a", with_status));
    // A later apply of the manifest leaves status alone and does not count as a spec change.
    auto applied = api.apply(kinds::config_map, "ns", "a", config_map("a", "1")).value();
    EXPECT_EQ(get_string(applied.at("status"), "phase"), "Done");
    EXPECT_EQ(get_int(applied.at("metadata"), "generation"), 1);
}

TEST(fake_client, an_injected_failure_hits_the_next_matching_call_once) {
    fake_client api;
    api.fail_next("apply", error{500, "InternalError", "etcd is down", true}, "ConfigMap");
    auto failed = api.apply(kinds::config_map, "ns", "a", config_map("a", "1"));
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().http_status, 500);
    EXPECT_TRUE(api.apply(kinds::config_map, "ns", "a", config_map("a", "1")));
}

}  // namespace
}  // namespace spool::op::kube::testing
