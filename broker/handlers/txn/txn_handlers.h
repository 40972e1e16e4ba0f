#pragma once

// Kafka handlers of the transaction APIs (broker/txn is the coordinator behind them).

#include "broker/handlers/request_context.h"
#include "broker/net/connection.h"

#include <boost/asio/awaitable.hpp>

namespace spool::broker::handlers::txn {

using handler_result = boost::asio::awaitable<net::handled>;

handler_result handle_add_partitions_to_txn(request_ctx& ctx);
handler_result handle_add_offsets_to_txn(request_ctx& ctx);
handler_result handle_txn_offset_commit(request_ctx& ctx);
handler_result handle_end_txn(request_ctx& ctx);
handler_result handle_describe_transactions(request_ctx& ctx);
handler_result handle_list_transactions(request_ctx& ctx);

}  // namespace spool::broker::handlers::txn
