#pragma once

// What OffsetCommit and TxnOffsetCommit share: sorting the request's partitions into refused
// ones (answered here) and those sent to the group coordinator, and the call to it.

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/authz.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/request_context.h"
#include "protocol/errors.h"

#include <memory>
#include <utility>
#include <vector>

namespace spool::broker::handlers::groups {

// Adds a response topic/partition for every requested one. `denied` (non-zero) fails them all;
// otherwise a topic without Read fails with TOPIC_AUTHORIZATION_FAILED and an unknown
// partition with UNKNOWN_TOPIC_OR_PARTITION. The rest are appended to cr.offsets; returns
// their (topic index, partition index), in cr.offsets order.
template <class Snapshot, class ReqTopics, class RespTopics>
std::vector<std::pair<size_t, size_t>> sort_commit_partitions(
    request_authz& authz, const Snapshot& snap, int16_t denied, const ReqTopics& topics,
    RespTopics& out_topics, coordinator::offset_commit_request& cr) {
    std::vector<std::pair<size_t, size_t>> sent;
    for (size_t t = 0; t < topics.size(); ++t) {
        const auto& topic = topics[t];
        auto& out_topic = out_topics.emplace_back();
        out_topic.name = topic.name;
        const auto* meta = snap.find(topic.name);
        const int16_t topic_denied =
            denied != 0 ? denied
            : !authz.topic(security::acl_operation::read, topic.name)
                ? static_cast<int16_t>(protocol::error_code::topic_authorization_failed)
                : int16_t{0};
        for (size_t p = 0; p < topic.partitions.size(); ++p) {
            const auto& part = topic.partitions[p];
            auto& out = out_topic.partitions.emplace_back();
            out.partition_index = part.partition_index;
            if (topic_denied != 0) {
                out.error_code = topic_denied;
                continue;
            }
            if (!meta || !meta->has_partition(part.partition_index)) {
                out.error_code =
                    static_cast<int16_t>(protocol::error_code::unknown_topic_or_partition);
                continue;
            }
            cr.offsets.push_back({{topic.name, model::partition_id{part.partition_index}},
                                  part.committed_offset,
                                  part.committed_leader_epoch,
                                  part.committed_metadata});
            sent.emplace_back(t, p);
        }
    }
    return sent;
}

// Commits cr on its group's coordinator: one error per cr->offsets entry. A shared_ptr, not a
// value: GCC 12 may relocate coroutine parameters bitwise (see coordinator_service::call).
boost::asio::awaitable<coordinator::offset_commit_result> commit_on_coordinator(
    request_ctx& ctx, std::shared_ptr<coordinator::offset_commit_request> cr);

}  // namespace spool::broker::handlers::groups
