#include "broker/replication/errc.h"

#include <string>

namespace spool::broker::replication {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "spool.replication"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::not_leader_or_follower:
                return "this broker is not the leader (or a follower) of the partition";
            case errc::fenced_leader_epoch:
                return "the request's leader epoch is older than the partition's";
            case errc::unknown_leader_epoch:
                return "the request's leader epoch is newer than the partition's";
            case errc::not_enough_replicas:
                return "the in-sync replicas are fewer than min.insync.replicas";
            case errc::not_enough_replicas_after_append:
                return "written, but the in-sync replicas shrank below min.insync.replicas";
            case errc::request_timed_out:
                return "the records were not committed before the request's deadline";
            case errc::offset_out_of_range:
                return "the batches do not start at this replica's log end offset";
            case errc::offset_not_available:
                return "a new leader's high watermark has not reached its leader epoch's start";
            case errc::invalid_record_state:
                return "the record is not acquired by this share-group member";
        }
        return "unknown replication error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

}  // namespace spool::broker::replication
