// ExtractZip: writes a zip archive's files under a folder, refusing what a
// hostile or broken archive may hold.
//
// Refused with kInvalidArgument naming the archive and the entry: a file that
// is not a readable zip (or fails its consistency check), an entry whose path
// is absolute, holds a `..` component, a backslash or a NUL, a symbolic link,
// an entry whose data fails its CRC, and archives whose files add up to more
// than `max_bytes` once unpacked (a zip bomb).
// Blocks on the file system; any thread; no state.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace inferd::archive {

struct ExtractOptions {
  int64_t max_bytes = 16LL << 30;  // unpacked size of all entries together
};

Status ExtractZip(const std::string& zip_path, const std::string& dest_dir,
                  const ExtractOptions& options = {});

// Whether `name` (an entry's path inside an archive) stays inside the folder
// it is unpacked to: relative, no `..` component, no backslash, no NUL.
bool IsSafeEntryName(const std::string& name);

}  // namespace inferd::archive
