#include "route_table.h"

#include "json_text.h"

#include <algorithm>

namespace tg::gateway {

RouteTable::RouteTable(std::vector<RouteConfig> routes) : routes_(std::move(routes)) {
  std::stable_sort(routes_.begin(), routes_.end(),
                   [](const RouteConfig& a, const RouteConfig& b) { return a.prefix.size() > b.prefix.size(); });
}

RouteMatch RouteTable::match(std::string_view path) const {
  for (const auto& r : routes_) {
    if (path.size() < r.prefix.size() || path.compare(0, r.prefix.size(), r.prefix) != 0) continue;
    if (path.size() > r.prefix.size() && path[r.prefix.size()] != '/') continue;
    return {&r, std::string(path.substr(r.prefix.size()))};
  }
  return {};
}

std::string RouteTable::notFoundBody(std::string_view path) const {
  nlohmann::json routes = nlohmann::json::array();
  for (const auto& r : routes_) routes.push_back({{"prefix", r.prefix}, {"group", r.group}});
  nlohmann::json body = {{"error",
                          {{"type", "tollgate_no_route"},
                           {"message", "no gateway route matches this path; send requests under one of the routes' "
                                       "prefixes, e.g. " + (routes_.empty() ? std::string("/openai") : routes_.back().prefix) + "/v1/..."},
                           {"path", std::string(path.substr(0, 512))},
                           {"routes", routes}}}};
  return dumpJson(body);
}

}  // namespace tg::gateway
