#include "broker/share/share_service.h"

#include "broker/share/errc.h"
#include "broker/share/share_hash.h"

namespace spool::broker::share {

namespace asio = boost::asio;

share_service_config share_service_config_from(const config::broker_config& broker) {
    share_service_config c;
    c.partitions = broker.get(config::keys::share_coordinator_state_topic_num_partitions);
    c.replication_factor = static_cast<int16_t>(
        broker.get(config::keys::share_coordinator_state_topic_replication_factor));
    c.min_isr = broker.get(config::keys::share_coordinator_state_topic_min_isr);
    c.segment_bytes = broker.get(config::keys::share_coordinator_state_topic_segment_bytes);
    coordinator::set_broker_keys(c, broker);
    return c;
}

namespace {

coordinator::partition_host_names host_names() {
    return {{std::string(share_state_topic), "share"},
            std::string(config::keys::share_coordinator_state_topic_num_partitions.name),
            "the share groups of",
            make_error_code(errc::not_coordinator),
            make_error_code(errc::not_coordinator)};
}

}  // namespace

share_service::share_service(metadata::store& store, cluster::partition_manager& partitions,
                             share_service_config config, const coordinator::clock& clk)
    : _config(config),
      _clock(clk),
      _host(store, partitions, host_names(), _config, clk, make_hooks()) {}

int32_t share_service::partition_for(const share_key& key) const {
    return share_partition_for(key, _config.partitions);
}

share_service::host::hooks share_service::make_hooks() {
    host::hooks h;
    h.open = [this](host::slot& s) {
        s.coordinator = std::make_unique<share_coordinator>(s.partition, _clock, *s.log);
    };
    h.load = [](host::slot& s, int32_t) { return s.coordinator->load(); };
    return h;
}

asio::awaitable<result<share_state>> share_service::read(share_key key, int32_t leader_epoch) {
    using r_t = result<share_state>;
    call_fn<r_t> fn = [key, leader_epoch](share_coordinator* c, std::function<void(r_t)> done) {
        if (c == nullptr) {
            done(make_error_code(errc::not_coordinator));
            return;
        }
        c->read(key, leader_epoch, std::move(done));
    };
    co_return co_await call<r_t>(key, std::move(fn));
}

asio::awaitable<std::error_code> share_service::write(share_key key, share_state state) {
    call_fn<std::error_code> fn = [key, state](share_coordinator* c,
                                               std::function<void(std::error_code)> done) {
        if (c == nullptr) {
            done(make_error_code(errc::not_coordinator));
            return;
        }
        c->write(key, state, std::move(done));
    };
    co_return co_await call<std::error_code>(key, std::move(fn));
}

}  // namespace spool::broker::share
