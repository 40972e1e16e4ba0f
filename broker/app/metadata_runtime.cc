#include "broker/app/metadata_runtime.h"

#include "broker/metadata/embedded_store.h"
#include "common/log.h"
#include "protocol/wire/uuid.h"

#include <fmt/format.h>

namespace spool::broker::app {

metadata::broker_registration self_registration(
    const config::broker_config& config, const std::vector<net::listener_address>& advertised,
    const std::string& hostname) {
    metadata::broker_registration self;
    self.node_id = static_cast<int32_t>(config.node_id());
    self.incarnation_id = protocol::uuid::random().to_string();
    if (auto rack = config.get_string("broker.rack"); !rack.empty()) {
        self.rack = rack;
    }
    for (const auto& l : advertised) {
        auto host = l.host.empty() || l.host == "0.0.0.0" || l.host == "::" ? hostname : l.host;
        self.endpoints.push_back({l.name, host, l.port, "PLAINTEXT"});
    }
    return self;
}

std::unique_ptr<metadata_runtime> metadata_runtime::open(const config::broker_config& config,
                                                         const std::filesystem::path& log_dir,
                                                         metadata::broker_registration self,
                                                         std::string* error) {
    std::unique_ptr<metadata_runtime> out(new metadata_runtime());
    auto store = metadata::embedded_store::open(log_dir);
    if (!store) {
        *error = fmt::format("cannot open the metadata store in {}: {}", log_dir.string(),
                             store.error().message());
        return nullptr;
    }
    out->_embedded = std::move(store).value();
    // One broker is the whole cluster: itself, live and controller, in every snapshot.
    out->_embedded->set_local_broker(std::move(self));
    out->_store = out->_embedded.get();
    return out;
}

metadata_runtime::~metadata_runtime() {
    stop();
}

void metadata_runtime::attach(net::shard_pool& pool) {
    if (_embedded) {
        _embedded->attach(pool);  // each shard reads its own copy of the metadata from now on
    }
}

void metadata_runtime::start() {}

void metadata_runtime::resign() {}

void metadata_runtime::stop() {
    if (_stopped) {
        return;
    }
    _stopped = true;
    if (_embedded) {
        _embedded->stop();  // finishes a commit in flight while the shards it publishes to run
    }
}

}  // namespace spool::broker::app
