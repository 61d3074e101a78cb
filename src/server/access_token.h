// The server's bearer token: read from a file only its owner can read, compared in
// constant time, and required wherever the server is reachable from the network.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace eacgm::server {

// The token in `path`: refused unless a regular file of this user with no group or
// other permission bits (0600, 0400), holding one token of at most 4096 visible ASCII
// characters (surrounding whitespace is ignored).
Result<std::string> load_token_file(const std::string& path);

// Compares without stopping at the first difference, so the time taken does not tell
// how much of a guess was right (it depends only on the longer length).
bool constant_time_equal(std::string_view a, std::string_view b);

// Whether an Authorization header value is "Bearer <token>" (the scheme in any case,
// spaces after it ignored) with this token.
bool bearer_matches(std::string_view authorization, std::string_view token);

// The token a server listening on `address` requires: the one in `token_file`, or none
// ("") on a loopback address; elsewhere no token file is an error naming `where`.
Result<std::string> server_token(const std::string& token_file, std::string_view address,
                                 std::string_view where);

}  // namespace eacgm::server
