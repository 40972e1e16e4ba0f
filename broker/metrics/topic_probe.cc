#include "broker/metrics/topic_probe.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

namespace spool::broker::metrics {

namespace {
prometheus::Family<prometheus::Counter>* counter_family(registry& reg, const char* name,
                                                        const char* help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(reg.families());
}
}  // namespace

void topic_probe::handle::produced(uint64_t bytes, uint64_t records) noexcept {
    _bytes_in->Increment(static_cast<double>(bytes));
    _records_in->Increment(static_cast<double>(records));
}

void topic_probe::handle::fetched(uint64_t bytes, uint64_t records) noexcept {
    _bytes_out->Increment(static_cast<double>(bytes));
    _records_out->Increment(static_cast<double>(records));
}

topic_probe::topic_probe(registry& reg)
    : _bytes_in(counter_family(reg, "spool_broker_bytes_in_total",
                               "Record-batch bytes appended by produce requests, by topic.")),
      _records_in(counter_family(reg, "spool_broker_records_in_total",
                                 "Records appended by produce requests, by topic.")),
      _bytes_out(counter_family(reg, "spool_broker_bytes_out_total",
                                "Record-batch bytes returned to fetch requests, by topic.")),
      _records_out(counter_family(reg, "spool_broker_records_out_total",
                                  "Records returned to fetch requests, by topic.")) {}

topic_probe::~topic_probe() = default;

topic_probe::handle& topic_probe::topic(std::string_view name) {
    std::lock_guard lock(_mutex);
    auto it = _topics.find(std::string(name));
    if (it != _topics.end())
        return *it->second;
    auto h = std::make_unique<handle>();
    std::map<std::string, std::string> labels{{"topic", std::string(name)}};
    h->_bytes_in = &_bytes_in->Add(labels);
    h->_records_in = &_records_in->Add(labels);
    h->_bytes_out = &_bytes_out->Add(labels);
    h->_records_out = &_records_out->Add(labels);
    return *_topics.emplace(std::string(name), std::move(h)).first->second;
}

void topic_probe::forget(std::string_view name) {
    std::lock_guard lock(_mutex);
    auto it = _topics.find(std::string(name));
    if (it == _topics.end())
        return;
    _bytes_in->Remove(it->second->_bytes_in);
    _records_in->Remove(it->second->_records_in);
    _bytes_out->Remove(it->second->_bytes_out);
    _records_out->Remove(it->second->_records_out);
    _topics.erase(it);
}

}  // namespace spool::broker::metrics
