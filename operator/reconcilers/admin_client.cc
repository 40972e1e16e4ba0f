#include "operator/reconcilers/admin_client.h"

namespace spool::op::reconcilers {

namespace {

error unsupported(const char* what) {
    return make_error("Unsupported", std::string("this admin client does not ") + what, false);
}

}  // namespace

result<std::vector<int8_t>> admin_client::describe_scram(const std::string&) {
    return unsupported("describe SCRAM credentials");
}
result<void> admin_client::upsert_scram(const scram_upsert&) {
    return unsupported("set SCRAM credentials");
}
result<void> admin_client::delete_scram(const std::string&, int8_t) {
    return unsupported("delete SCRAM credentials");
}
result<std::vector<acl_binding>> admin_client::describe_acls(const std::string&) {
    return unsupported("describe ACLs");
}
result<void> admin_client::create_acls(const std::vector<acl_binding>&) {
    return unsupported("create ACLs");
}
result<void> admin_client::delete_acls(const std::vector<acl_binding>&) {
    return unsupported("delete ACLs");
}

}  // namespace spool::op::reconcilers
