#pragma once

// The CRDs from crds/, compiled into the binary so that --apply-crds can upgrade them (helm
// upgrade never touches CRDs). Generated at configure time from the one hand-edited copy.

#include <string_view>
#include <utility>
#include <vector>

namespace spool::op::app {

// (CRD name, YAML text) for every file in crds/.
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_crds();

}  // namespace spool::op::app
