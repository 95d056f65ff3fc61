// rcp_table_file_test.cpp: tests common/rcp_table_file.h: a good file is read, an unreadable one is exit 2, a foreign
// or corrupt one exit 4, each with one line naming the option and the path.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/exit_status.h"
#include "common/rcp_table_file.h"

namespace fuseproof {
namespace {

std::string write_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + name)).string();
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return path;
}

template <class Error>
void expect_refused(const std::string& path, const std::string& want) {
  try {
    read_rcp_approx_table_file(path, "--rcp-table");
    ADD_FAILURE() << path << " was read";
  } catch (const Error& e) {
    const std::string line = e.what();
    EXPECT_NE(line.find(want), std::string::npos) << line;
    EXPECT_NE(line.find("--rcp-table"), std::string::npos) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
}

TEST(Common_RcpTableFile_f32, ReadsAGoodFileAndRefusesTheRest) {
  std::vector<uint8_t> good = ref::serialize_rcp_approx_table(ref::RcpApproxTable::correctly_rounded());
  good[32] = 2;  // mantissa 0: +1
  const std::string path = write_file("fuseproof_rcp_good.bin", good);
  const ref::RcpApproxTable t = read_rcp_approx_table_file(path, "--rcp-table");
  EXPECT_EQ(t.result_bits(0), 0x3F800001u);
  EXPECT_EQ(t.result_bits(1), 0x3F7FFFFEu);

  expect_refused<UsageError>(path + ".missing", "cannot read --rcp-table");
  expect_refused<UsageError>(std::filesystem::temp_directory_path().string(), "must be a regular file");
  std::vector<uint8_t> b = good;
  b.resize(100);
  expect_refused<CorruptDataError>(write_file("fuseproof_rcp_short.bin", b), "must hold 2097184 bytes, got 100");
  b = good;
  b[40] = 0xC0;  // mantissa 35: code 3
  expect_refused<CorruptDataError>(write_file("fuseproof_rcp_code3.bin", b), "got 3 at mantissa 35");
  b = good;
  b[0] = 'F';
  expect_refused<CorruptDataError>(write_file("fuseproof_rcp_magic.bin", b), "magic");
  for (const char* n : {"fuseproof_rcp_good.bin", "fuseproof_rcp_short.bin", "fuseproof_rcp_code3.bin",
                        "fuseproof_rcp_magic.bin"})
    std::filesystem::remove(std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + n));
}

}  // namespace
}  // namespace fuseproof
