// UnpackMar: a TorchServe archive as a model folder of inferd's store layout.
//
// The archive is unpacked once into <cache>/<key>/1/ (its files as they are
// in the zip), beside a config.yaml written from its manifest
// (mar_manifest.h) and, for a native image classifier, model.pt and
// labels.txt; <key> is the SHA-256 of the archive's bytes and the settings,
// so a changed archive gets a folder of its own and an unchanged one is never
// unpacked twice. Unpacking goes to a temporary folder renamed into place,
// so concurrent loads and a crash mid-way leave no half folder behind.
// Everything ExtractZip and ReadMarManifest refuse is refused here, with the
// archive's name in front.
// Blocks on the file system; any thread.
#pragma once

#include <string>

#include "archive/mar_manifest.h"
#include "common/status.h"

namespace inferd::archive {

struct UnpackOptions {
  std::string cache_dir;  // DefaultCacheDir() when empty
  ServingSettings overrides;
};

// The model folder (holding config.yaml and 1/).
StatusOr<std::string> UnpackMar(const std::string& mar_path, const UnpackOptions& options);

// $INFERD_MAR_CACHE, else $TMPDIR (or /tmp) /inferd-mar-<uid>.
std::string DefaultCacheDir();

}  // namespace inferd::archive
