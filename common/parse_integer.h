// parse_integer.h: the one checked parse of an integer argument: decimal digits in a stated range, never a wrap or a
// library's exception text, and the one line that refuses it.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

namespace fuseproof {

/// `text` as a decimal integer of type T in [min, max]: digits, with a leading '-' only for a signed T; nullopt for
/// anything else (a sign on an unsigned type, '+', blanks, a value out of T or of the range). Never wraps or throws.
template <class T>
std::optional<T> parse_integer(const std::string& text, T min = std::numeric_limits<T>::min(),
                               T max = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (text.empty() || (text[0] == '-' && std::is_unsigned_v<T>)) return std::nullopt;
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return std::nullopt;
  return v;
}

/// "--seed: must be an integer in [0, 18446744073709551615], got '-5'"
template <class T>
std::string integer_refusal(const std::string& flag, T min, T max, const std::string& got) {
  return flag + ": must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got '" + got +
         "'";
}

/// A CLI11 check of an integer option of type T in [min, max] (default: all of T), run on the text before CLI11
/// converts it: CLI11 then prints "<flag>: must be an integer in [min, max], got '...'".
template <class T>
CLI::Validator integer_in(T min = std::numeric_limits<T>::min(), T max = std::numeric_limits<T>::max()) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        if (parse_integer<T>(s, min, max)) return "";
        const std::string line = integer_refusal<T>("", min, max, s);
        return line.substr(2);  // CLI11 puts the flag and ": " in front
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

}  // namespace fuseproof
