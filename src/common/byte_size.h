// Sizes of memory as people write them in flags and config files, and as
// messages print them. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace inferd {

// Bytes, or a number with a binary suffix: K, M, G, T (also written KiB, MiB,
// GiB, TiB; 1K = 1024), e.g. 512M or 1.5G: "512M" -> 536870912.
// kInvalidArgument naming the text and the accepted forms for anything else
// (negative, empty, unknown suffix, overflow).
StatusOr<int64_t> ParseByteSize(std::string_view text);

// 1536 -> "1.5 KiB", for messages.
std::string FormatBytes(int64_t bytes);

// 1536 << 10 -> "1.5 MiB", 3 << 30 -> "3072.0 MiB": one unit, for messages
// that compare figures.
std::string FormatMiB(int64_t bytes);

}  // namespace inferd
