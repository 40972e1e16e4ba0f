#pragma once

// Entry points of the handler files, one per Kafka API (see api_table.cc for the versions).

#include "broker/handlers/request_context.h"
#include "broker/runtime/asio.h"

namespace spool::broker::handlers {

using handler_result = boost::asio::awaitable<net::handled>;

handler_result handle_api_versions(request_ctx& ctx);
handler_result handle_metadata(request_ctx& ctx);
handler_result handle_produce(request_ctx& ctx);
handler_result handle_fetch(request_ctx& ctx);
handler_result handle_share_fetch(request_ctx& ctx);
handler_result handle_share_acknowledge(request_ctx& ctx);
// Inter-broker (share_group_state.cc): a partition leader's share state for the share-group
// admin APIs of another broker's coordinator.
handler_result handle_read_share_group_state_summary(request_ctx& ctx);
handler_result handle_initialize_share_group_state(request_ctx& ctx);
handler_result handle_delete_share_group_state(request_ctx& ctx);
// The share coordinator's (share_group_state.cc): a partition leader's state writes and reads.
handler_result handle_read_share_group_state(request_ctx& ctx);
handler_result handle_write_share_group_state(request_ctx& ctx);
handler_result handle_list_offsets(request_ctx& ctx);
handler_result handle_offset_for_leader_epoch(request_ctx& ctx);
handler_result handle_init_producer_id(request_ctx& ctx);
handler_result handle_create_topics(request_ctx& ctx);
handler_result handle_delete_topics(request_ctx& ctx);
handler_result handle_create_partitions(request_ctx& ctx);
handler_result handle_delete_records(request_ctx& ctx);
handler_result handle_describe_configs(request_ctx& ctx);
handler_result handle_alter_configs(request_ctx& ctx);
handler_result handle_incremental_alter_configs(request_ctx& ctx);
handler_result handle_describe_cluster(request_ctx& ctx);
handler_result handle_alter_partition_reassignments(request_ctx& ctx);
handler_result handle_list_partition_reassignments(request_ctx& ctx);
handler_result handle_describe_log_dirs(request_ctx& ctx);
handler_result handle_elect_leaders(request_ctx& ctx);
handler_result handle_update_features(request_ctx& ctx);
handler_result handle_describe_acls(request_ctx& ctx);
handler_result handle_create_acls(request_ctx& ctx);
handler_result handle_delete_acls(request_ctx& ctx);
handler_result handle_sasl_handshake(request_ctx& ctx);
handler_result handle_sasl_authenticate(request_ctx& ctx);
handler_result handle_describe_user_scram_credentials(request_ctx& ctx);
handler_result handle_describe_client_quotas(request_ctx& ctx);
handler_result handle_list_config_resources(request_ctx& ctx);
handler_result handle_alter_user_scram_credentials(request_ctx& ctx);
handler_result handle_write_txn_markers(request_ctx& ctx);
handler_result handle_describe_producers(request_ctx& ctx);

// The ApiVersions answer to a version the broker does not speak: v0 encoding, error 35 and the
// full API list (KIP-511), so the client can retry with a version both sides know.
struct services;
net::handled unsupported_api_versions(const services& svc, int32_t correlation_id);

}  // namespace spool::broker::handlers
