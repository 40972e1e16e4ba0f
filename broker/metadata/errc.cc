#include "broker/metadata/errc.h"

#include <string>

namespace spool::broker::metadata {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "spool.metadata"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::topic_exists:
                return "topic already exists";
            case errc::unknown_topic:
                return "unknown topic";
            case errc::invalid_topic_name:
                return "invalid topic name";
            case errc::invalid_partitions:
                return "invalid number of partitions";
            case errc::invalid_replication_factor:
                return "invalid replication factor";
            case errc::invalid_config:
                return "invalid configuration";
            case errc::persist_failed:
                return "could not persist metadata";
            case errc::not_controller:
                return "not the controller";
            case errc::unavailable:
                return "the metadata store (etcd) is unreachable";
            case errc::timed_out:
                return "the metadata change was not carried out in time";
            case errc::stale_partition:
                return "the partition changed since it was read (stale leader or partition epoch)";
            case errc::invalid_isr:
                return "the ISR change does not fit the partition's record";
            case errc::ineligible_replica:
                return "the ISR change adds a replica that is not live or is shutting down";
            case errc::invalid_replica_assignment:
                return "the replica assignment is invalid";
            case errc::no_reassignment_in_progress:
                return "no reassignment is in progress for the partition";
            case errc::unknown_broker:
                return "no such broker";
            case errc::stale_features:
                return "the finalized feature levels changed since they were read";
            case errc::unsupported_feature_level:
                return "the cluster's finalized feature level is not supported by this binary";
        }
        return "unknown metadata error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category c;
    return c;
}

}  // namespace spool::broker::metadata
