// Checked integer arithmetic for sizes a client controls (element counts, byte
// sizes, offsets): an overflow gives nullopt instead of wrapping round to a
// small number that later reads and writes would trust.
// Pure functions; any thread.
#pragma once

#include <optional>
#include <type_traits>

namespace inferd {

template <typename T>
constexpr std::optional<T> CheckedAdd(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <typename T>
constexpr std::optional<T> CheckedMul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

}  // namespace inferd
