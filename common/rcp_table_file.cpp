// rcp_table_file.cpp: the rcp.approx.ftz table file, read whole and refused with one line.
#include "common/rcp_table_file.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/exit_status.h"

namespace fuseproof {

ref::RcpApproxTable read_rcp_approx_table_file(const std::string& path, const std::string& option) {
  const std::string named = option + " " + path;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw UsageError("cannot read " + named + ": " + (ec ? ec.message() : std::string("no such file")));
  if (!std::filesystem::is_regular_file(status)) throw UsageError(named + " must be a regular file, it is not");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw UsageError("cannot read " + named + ": " + ec.message());
  // The size first: a large foreign file is refused without being read.
  if (size != ref::kRcpApproxTableBytes)
    throw CorruptDataError(named + " is not an rcp.approx.ftz table: it must hold " +
                           std::to_string(ref::kRcpApproxTableBytes) + " bytes, got " + std::to_string(size));
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!in || size_t(in.gcount()) != bytes.size())
    throw UsageError("cannot read " + named + ": it ended after " + std::to_string(in.gcount()) + " of " +
                     std::to_string(size) + " bytes");
  std::string why;
  std::optional<ref::RcpApproxTable> t = ref::parse_rcp_approx_table(bytes, &why);
  if (!t) throw CorruptDataError(named + " is not an rcp.approx.ftz table: " + why);
  return std::move(*t);
}

}  // namespace fuseproof
