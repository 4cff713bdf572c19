// Which route a gateway path belongs to: the longest configured prefix that ends on a path-segment boundary.
// Pure and thread-safe (the table is immutable after construction).
#pragma once

#include "gateway_config.h"

#include <string>
#include <string_view>
#include <vector>

namespace tg::gateway {

struct RouteMatch {
  const RouteConfig* route = nullptr;  // null: no route
  std::string rest;                    // the path after the prefix, "" or starting with '/'
};

class RouteTable {
 public:
  explicit RouteTable(std::vector<RouteConfig> routes);
  // `path` is the raw request path (no query). "/openai/v1/x" matches "/openai" with rest "/v1/x"; "/openaiX"
  // does not match "/openai".
  RouteMatch match(std::string_view path) const;
  // The 404 body: a JSON error naming the path asked for (escaped) and every route.
  std::string notFoundBody(std::string_view path) const;
  const std::vector<RouteConfig>& routes() const { return routes_; }

 private:
  std::vector<RouteConfig> routes_;  // longest prefix first
};

}  // namespace tg::gateway
