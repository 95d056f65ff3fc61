// rcp_table_file.h: reads the rcp.approx.ftz table file (reference/rcp_approx_model.h) under the exit-status policy.
#pragma once

#include <string>

#include "reference/rcp_approx_model.h"

namespace fuseproof {

/// The table in `path`, named by `option` in messages (`--rcp-table`). A file that cannot be read (missing, a
/// directory, a read error) is a UsageError (exit 2); a foreign or corrupt one (wrong size, wrong magic, a code 3) a
/// CorruptDataError (exit 4). Each message is one line naming the option, the path and what is allowed.
ref::RcpApproxTable read_rcp_approx_table_file(const std::string& path, const std::string& option);

}  // namespace fuseproof
