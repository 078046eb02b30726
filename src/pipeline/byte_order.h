// Unsigned integers read from image headers and EXIF blocks, big- and
// little-endian, from a pointer the caller has bounds-checked.
#pragma once

#include <cstdint>

namespace inferd::pipeline {

inline uint32_t Be16(const unsigned char* p) { return (uint32_t{p[0]} << 8) | p[1]; }
inline uint32_t Be32(const unsigned char* p) { return (Be16(p) << 16) | Be16(p + 2); }
inline uint32_t Le16(const unsigned char* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
inline uint32_t Le24(const unsigned char* p) { return Le16(p) | (uint32_t{p[2]} << 16); }
inline uint32_t Le32(const unsigned char* p) { return Le16(p) | (Le16(p + 2) << 16); }

}  // namespace inferd::pipeline
