// CreateAcls and DeleteAcls on the etcd store: one key per binding (etcd_layout.h, P/acls/<hex>),
// so every broker's watch rebuilds its ACL index from the same keys (etcd_state.h).

#include "broker/metadata/etcd/etcd_store.h"

#include <algorithm>

namespace spool::broker::metadata {

namespace asio = boost::asio;

// Each binding is its own transaction: a put always makes a revision; a delete is guarded by the
// key existing, so a binding another broker deleted meanwhile makes no write, and no revision
// this broker would wait for in vain. Returns the last revision written (0: none).
asio::awaitable<result<int64_t>> etcd_store::write_acls_here(
    etcd_store* self, std::vector<security::acl_binding> bindings, bool remove) {
    int64_t last = 0;
    for (const auto& b : bindings) {
        const auto key = self->_keys.acl(b);
        etcd::txn_request t;
        if (remove) {
            t.compares.push_back(
                {key, etcd::compare::target::version, etcd::compare::op::greater, 0, {}, {}});
            t.success.emplace_back(etcd::delete_op{key, {}});
        } else {
            t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(b), 0});
        }
        auto done_op = self->_client->txn(std::move(t));
        auto done = co_await std::move(done_op);
        if (!done) {
            co_return self->failed(done.error());
        }
        self->note_reachable();
        if (done.value().succeeded) {
            last = std::max(last, done.value().revision);
        }
    }
    co_return last;
}

store::op<void> etcd_store::create_acls(std::vector<security::acl_binding> bindings) {
    // What is there already is not written again (Kafka's AclControlManager skips it too).
    auto snap = snapshot();
    std::erase_if(bindings,
                  [&](const security::acl_binding& b) { return snap->acls->contains(b); });
    auto op = finish(lift(write_acls_here(this, std::move(bindings), false), this));
    auto r = co_await std::move(op);
    if (!r) {
        co_return r.error();
    }
    co_return success();
}

store::op<void> etcd_store::delete_acls(std::vector<security::acl_binding> bindings) {
    auto op = finish(lift(write_acls_here(this, std::move(bindings), true), this));
    auto r = co_await std::move(op);
    if (!r) {
        co_return r.error();
    }
    co_return success();
}

}  // namespace spool::broker::metadata
