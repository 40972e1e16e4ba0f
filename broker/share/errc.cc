#include "broker/share/errc.h"

#include <string>

namespace spool::broker::share {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "share"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::not_coordinator:
                return "not the share coordinator for this share-partition";
            case errc::load_in_progress:
                return "the share coordinator is loading";
            case errc::coordinator_not_available:
                return "share coordinator not available";
            case errc::fenced_leader_epoch:
                return "the share-partition's leader epoch is older than the stored one";
            case errc::fenced_state_epoch:
                return "the share-partition's state epoch is older than the stored one";
            case errc::invalid_request:
                return "invalid request";
        }
        return "unknown share error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category c;
    return c;
}

}  // namespace spool::broker::share
