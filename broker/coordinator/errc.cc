#include "broker/coordinator/errc.h"

#include <string>

namespace spool::broker::coordinator {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "coordinator"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::not_coordinator:
                return "not the coordinator for this group";
            case errc::load_in_progress:
                return "coordinator is loading the group";
            case errc::coordinator_not_available:
                return "coordinator not available";
            case errc::member_id_required:
                return "member id required";
            case errc::unknown_member_id:
                return "unknown member id";
            case errc::illegal_generation:
                return "illegal generation";
            case errc::rebalance_in_progress:
                return "rebalance in progress";
            case errc::fenced_instance_id:
                return "fenced group instance id";
            case errc::inconsistent_group_protocol:
                return "inconsistent group protocol";
            case errc::invalid_session_timeout:
                return "invalid session timeout";
            case errc::group_max_size_reached:
                return "group max size reached";
            case errc::non_empty_group:
                return "group is not empty";
            case errc::group_id_not_found:
                return "group id not found";
            case errc::group_subscribed_to_topic:
                return "group is subscribed to the topic";
            case errc::offset_metadata_too_large:
                return "offset metadata too large";
            case errc::invalid_group_id:
                return "invalid group id";
            case errc::storage_error:
                return "could not write to __consumer_offsets";
            case errc::unknown_topic_or_partition:
                return "unknown topic or partition";
            case errc::unstable_offset_commit:
                return "a transaction holds pending offsets for the partition";
            case errc::invalid_producer_epoch:
                return "the producer's epoch is fenced";
            case errc::fenced_member_epoch:
                return "the member epoch is fenced";
            case errc::unreleased_instance_id:
                return "the static member's instance id is still in use";
            case errc::unsupported_assignor:
                return "the server assignor is not supported";
            case errc::stale_member_epoch:
                return "the member epoch is stale";
            case errc::invalid_request:
                return "invalid consumer group heartbeat";
            case errc::invalid_regular_expression:
                return "invalid regular expression";
        }
        return "unknown coordinator error " + std::to_string(ev);
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

}  // namespace spool::broker::coordinator
