// Request paths as history and logs keep them: the path of a URL, and its route (ids and credentials as "{id}").
#pragma once

#include <string>
#include <string_view>

namespace tg {

// The path of `url` (scheme and authority left out; "/" when none), without its query and fragment.
std::string urlPath(const std::string& url);

// A path as a route, not as one request: segments that are ids ("/v1/files/file-9fQe2Ad7Kx3mB8pL/content") become
// "{id}", so a minute's rows do not grow with every object an API names in its paths. An id: digits alone, a
// UUID, 16 or more hex digits, a short word and a separator before 14 or more letters, digits and underscores with
// both letters and digits in them ("file-...", "batch_...", "chatcmpl-...", Stripe's "cus_..." and "cs_test_..."),
// 24 or more letters and digits with both in them, or one holding a credential's look (after a colon, 24 or more
// letters, digits, '-' and '_' with both: a bot token in Telegram's paths; an unbroken run of 20 or more letters
// and digits with 2 digits, 3 capitals and 3 small letters: a JWT's parts). Model and deployment names
// ("gpt-4o-mini", "claude-3-5-sonnet-20241022", "prod-gpt4oMini0718", "Meta-Llama-3.1-8B-Instruct",
// "MyGpt4oDeployment01") and words ("balance_transactions") stay.
std::string endpointRoute(std::string_view path);

}  // namespace tg
