#include "broker/handlers/api_table.h"

#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/txn/txn_handlers.h"
#include "protocol/messages/api_table.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

namespace spool::broker::handlers {

namespace {

using protocol::api_key;

// Ranges follow /docs' client compatibility notes: every client's highest version up to what we
// advertise must be implemented, so each row is a contiguous range the handler fully serves.
const std::vector<api_entry>& table() {
    static const std::vector<api_entry> rows = {
        {api_key::produce, 0, 12, 3, handle_produce},
        {api_key::fetch, 4, 13, 4, handle_fetch},
        {api_key::list_offsets, 0, 10, 0, handle_list_offsets},
        {api_key::metadata, 0, 12, 0, handle_metadata},
        {api_key::find_coordinator, 0, 6, 0, groups::handle_find_coordinator},
        {api_key::join_group, 0, 9, 0, groups::handle_join_group},
        {api_key::sync_group, 0, 5, 0, groups::handle_sync_group},
        {api_key::heartbeat, 0, 4, 0, groups::handle_heartbeat},
        {api_key::leave_group, 0, 5, 0, groups::handle_leave_group},
        {api_key::offset_commit, 0, 9, 0, groups::handle_offset_commit},
        {api_key::offset_fetch, 0, 9, 0, groups::handle_offset_fetch},
        {api_key::offset_delete, 0, 0, 0, groups::handle_offset_delete},
        {api_key::list_groups, 0, 5, 0, groups::handle_list_groups},
        {api_key::describe_groups, 0, 5, 0, groups::handle_describe_groups},
        {api_key::delete_groups, 0, 2, 0, groups::handle_delete_groups},
        {api_key::consumer_group_heartbeat, 0, 1, 0, groups::handle_consumer_group_heartbeat},
        {api_key::consumer_group_describe, 0, 1, 0, groups::handle_consumer_group_describe},
        // KIP-932 share groups: v1 is the GA version (Kafka 4.1+); v0 was early access.
        {api_key::share_group_heartbeat, 1, 1, 1, groups::handle_share_group_heartbeat},
        {api_key::share_group_describe, 1, 1, 1, groups::handle_share_group_describe},
        {api_key::share_fetch, 1, 1, 1, handle_share_fetch},
        {api_key::share_acknowledge, 1, 1, 1, handle_share_acknowledge},
        // The share-group admin APIs (kafka-share-groups): v1 of Describe carries the lag.
        {api_key::describe_share_group_offsets, 0, 1, 0,
         groups::handle_describe_share_group_offsets},
        {api_key::alter_share_group_offsets, 0, 0, 0, groups::handle_alter_share_group_offsets},
        {api_key::delete_share_group_offsets, 0, 0, 0,
         groups::handle_delete_share_group_offsets},
        // Inter-broker: the share state a partition leader keeps, for those admin APIs when
        // another broker coordinates the group (share_state_access.h).
        {api_key::read_share_group_state_summary, 0, 1, 0,
         handle_read_share_group_state_summary},
        {api_key::initialize_share_group_state, 0, 0, 0, handle_initialize_share_group_state},
        {api_key::delete_share_group_state, 0, 0, 0, handle_delete_share_group_state},
        {api_key::read_share_group_state, 0, 0, 0, handle_read_share_group_state},
        {api_key::write_share_group_state, 0, 1, 0, handle_write_share_group_state},
        {api_key::api_versions, 0, 4, 0, handle_api_versions},
        {api_key::create_topics, 0, 7, 0, handle_create_topics},
        {api_key::delete_topics, 0, 6, 0, handle_delete_topics},
        {api_key::delete_records, 0, 2, 0, handle_delete_records},
        {api_key::init_producer_id, 0, 5, 0, handle_init_producer_id},
        {api_key::offset_for_leader_epoch, 0, 4, 0, handle_offset_for_leader_epoch},
        {api_key::describe_configs, 0, 4, 0, handle_describe_configs},
        {api_key::alter_configs, 0, 2, 0, handle_alter_configs},
        {api_key::describe_log_dirs, 0, 4, 0, handle_describe_log_dirs},
        {api_key::create_partitions, 0, 3, 0, handle_create_partitions},
        {api_key::incremental_alter_configs, 0, 1, 0, handle_incremental_alter_configs},
        {api_key::describe_cluster, 0, 1, 0, handle_describe_cluster},
        {api_key::elect_leaders, 0, 2, 0, handle_elect_leaders},
        {api_key::update_features, 0, 2, 0, handle_update_features},
        {api_key::alter_partition_reassignments, 0, 1, 0, handle_alter_partition_reassignments},
        {api_key::list_partition_reassignments, 0, 0, 0, handle_list_partition_reassignments},
        {api_key::describe_acls, 0, 3, 0, handle_describe_acls},
        {api_key::create_acls, 0, 3, 0, handle_create_acls},
        {api_key::delete_acls, 0, 3, 0, handle_delete_acls},
        {api_key::sasl_handshake, 0, 1, 0, handle_sasl_handshake},
        {api_key::sasl_authenticate, 0, 2, 0, handle_sasl_authenticate},
        {api_key::describe_user_scram_credentials, 0, 0, 0,
         handle_describe_user_scram_credentials},
        {api_key::alter_user_scram_credentials, 0, 0, 0, handle_alter_user_scram_credentials},
        {api_key::describe_client_quotas, 0, 1, 0, handle_describe_client_quotas},
        {api_key::list_config_resources, 0, 1, 0, handle_list_config_resources},
        // Produce v12, TxnOffsetCommit v5 and EndTxn v5 are transaction.version 2's (KIP-890
        // part 2); ApiVersions advertises them only when spool.transaction.version is 2.
        {api_key::add_partitions_to_txn, 0, 5, 0, txn::handle_add_partitions_to_txn},
        {api_key::add_offsets_to_txn, 0, 4, 0, txn::handle_add_offsets_to_txn},
        {api_key::txn_offset_commit, 0, 5, 0, txn::handle_txn_offset_commit},
        {api_key::end_txn, 0, 5, 0, txn::handle_end_txn},
        {api_key::describe_transactions, 0, 0, 0, txn::handle_describe_transactions},
        {api_key::list_transactions, 0, 1, 0, txn::handle_list_transactions},
        {api_key::write_txn_markers, 0, 1, 0, handle_write_txn_markers},
        {api_key::describe_producers, 0, 0, 0, handle_describe_producers},
    };
    return rows;
}

}  // namespace

std::span<const api_entry> supported_apis() {
    return table();
}

std::span<const metrics::api_label> api_labels() {
    // Built once; the names live as long as the program, as api_label's views require.
    static const auto names = [] {
        std::vector<std::string> out;
        for (const auto& e : table()) {
            std::string snake;
            for (char c : protocol::api_name(e.key)) {
                if (std::isupper(static_cast<unsigned char>(c))) {
                    if (!snake.empty())
                        snake += '_';
                    snake += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                } else {
                    snake += c;
                }
            }
            out.push_back(std::move(snake));
        }
        return out;
    }();
    static const auto labels = [] {
        std::vector<metrics::api_label> out;
        for (size_t i = 0; i < table().size(); ++i)
            out.push_back({static_cast<int16_t>(table()[i].key), names[i]});
        return out;
    }();
    return labels;
}

const api_entry* find_supported(int16_t key) {
    for (const auto& e : table()) {
        if (static_cast<int16_t>(e.key) == key) {
            return &e;
        }
    }
    return nullptr;
}

}  // namespace spool::broker::handlers
