#include "operator/kube/resource.h"

#include <gtest/gtest.h>

namespace spool::op::kube {
namespace {

TEST(resource_paths, test_core_grouped_and_cluster_scoped_paths) {
    EXPECT_EQ(kinds::config_map.object_path("ns", "a"), "/api/v1/namespaces/ns/configmaps/a");
    EXPECT_EQ(kinds::statefulset.collection_path("ns"), "/apis/apps/v1/namespaces/ns/statefulsets");
    EXPECT_EQ(kinds::topic.object_path("x", "t"), "/apis/spool.dev/v1alpha1/namespaces/x/topics/t");
    EXPECT_EQ(kinds::crd.object_path("ignored", "topics.spool.dev"),
              "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/topics.spool.dev");
    EXPECT_EQ(kinds::pod.collection_path(""), "/api/v1/pods");
    EXPECT_EQ(kinds::pdb.api_version(), "policy/v1");
    EXPECT_EQ(kinds::service.api_version(), "v1");
}

}  // namespace
}  // namespace spool::op::kube
