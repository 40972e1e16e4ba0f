#pragma once

// Kafka handlers of the consumer-group APIs (one file each), served by the coordinator_service
// reachable from services::groups. Rows for them live in broker/handlers/api_table.cc.
//
// Every handler hops to the owner shard of the group's __consumer_offsets partition through
// coordinator_service::call and back; JoinGroup and SyncGroup stay suspended there until the
// rebalance phase completes (the connection's later requests wait, as with Kafka, which mutes
// the channel while a request is in flight).

#include "broker/handlers/request_context.h"
#include "broker/runtime/asio.h"

namespace spool::broker::handlers::groups {

using handler_result = boost::asio::awaitable<net::handled>;

handler_result handle_find_coordinator(request_ctx& ctx);
handler_result handle_join_group(request_ctx& ctx);
handler_result handle_sync_group(request_ctx& ctx);
handler_result handle_heartbeat(request_ctx& ctx);
handler_result handle_leave_group(request_ctx& ctx);
handler_result handle_offset_commit(request_ctx& ctx);
handler_result handle_offset_fetch(request_ctx& ctx);
handler_result handle_offset_delete(request_ctx& ctx);
handler_result handle_list_groups(request_ctx& ctx);
handler_result handle_describe_groups(request_ctx& ctx);
handler_result handle_delete_groups(request_ctx& ctx);
handler_result handle_consumer_group_heartbeat(request_ctx& ctx);
handler_result handle_consumer_group_describe(request_ctx& ctx);
handler_result handle_share_group_heartbeat(request_ctx& ctx);
handler_result handle_share_group_describe(request_ctx& ctx);
handler_result handle_describe_share_group_offsets(request_ctx& ctx);
handler_result handle_alter_share_group_offsets(request_ctx& ctx);
handler_result handle_delete_share_group_offsets(request_ctx& ctx);

}  // namespace spool::broker::handlers::groups
