// quoted_value.h: a value from outside (an argument, a JSON field) quoted for a one-line message.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace fuseproof {

/// 'value' with every control byte written as \xNN (a newline in the value cannot split the message's line), cut
/// after 200 bytes with "...".
inline std::string quoted_value(std::string_view value) {
  constexpr size_t kMaxBytes = 200;
  std::string out = "'";
  for (size_t i = 0; i < value.size() && i < kMaxBytes; ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (value.size() > kMaxBytes) out += "...";
  return out + "'";
}

}  // namespace fuseproof
