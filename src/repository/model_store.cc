#include "repository/model_store.h"

#include <algorithm>
#include <filesystem>

#include "archive/archive_registry.h"
#include "archive/mar_unpack.h"
#include "backend/registry.h"
#include "repository/model_name.h"

namespace inferd::repository {
namespace fs = std::filesystem;
namespace {

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool IsDirectory(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// Positive integer folder names holding one of `files`, ascending.
std::vector<StoredVersion> ScanVersions(const fs::path& model_dir,
                                        const std::vector<std::string>& files) {
  std::vector<StoredVersion> versions;
  std::error_code ec;
  fs::directory_iterator it(model_dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18 || name[0] == '0' ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    fs::path file;
    for (const auto& f : files) {
      if (IsFile(it->path() / f)) {
        file = it->path() / f;
        break;
      }
    }
    if (file.empty()) continue;
    std::error_code size_ec;
    const auto size = fs::file_size(file, size_ec);
    versions.push_back({std::stoll(name), file.string(), size_ec ? 0 : static_cast<int64_t>(size)});
  }
  std::sort(versions.begin(), versions.end(),
            [](const StoredVersion& a, const StoredVersion& b) { return a.version < b.version; });
  return versions;
}

bool IsArchiveName(const std::string& file) {
  return file.size() > 4 && file.compare(file.size() - 4, 4, ".mar") == 0;
}

}  // namespace

Status ModelStore::Check() const {
  if (!IsDirectory(dir_)) return NotFound("model store '" + dir_ + "' is not a directory");
  return Status::Ok();
}

std::vector<std::string> ModelStore::ListModels(std::vector<std::string>* skipped) const {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir_, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (IsArchiveName(name) && IsFile(it->path())) {
      name.resize(name.size() - 4);  // NAME.mar serves as NAME (a folder NAME wins)
      if (IsFile(fs::path(dir_) / name / "config.yaml")) continue;
    } else if (!IsFile(it->path() / "config.yaml")) {
      continue;
    }
    Status valid = ValidateModelName(name);
    if (!valid.ok()) {
      if (skipped) skipped->push_back(valid.message());
      continue;
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<StoredModel> ModelStore::Read(const std::string& name) const {
  RETURN_IF_ERROR(ValidateModelName(name));
  fs::path dir = fs::path(dir_) / name;
  fs::path config_path = dir / "config.yaml";
  if (!IsFile(config_path)) {
    // A TorchServe archive: registered under this name, or NAME.mar in the
    // store, served from its unpacked folder (archive/mar_unpack.h).
    archive::UnpackOptions unpack;
    std::string mar = (fs::path(dir_) / (name + ".mar")).string();
    if (auto registered = archive::FindRegisteredArchive(name)) {
      mar = (fs::path(dir_) / registered->mar_file).string();
      unpack.overrides = registered->settings;
    }
    if (IsFile(mar)) {
      auto unpacked = archive::UnpackMar(mar, unpack);
      if (!unpacked.ok()) {  // listed, with the reason, so that /models tells it
        StoredModel refused;
        refused.name = name;
        refused.dir = dir.string();
        refused.config_error = unpacked.status().message();
        return refused;
      }
      dir = *unpacked;
      config_path = dir / "config.yaml";
    }
  }
  if (!IsFile(config_path)) {
    return NotFound("no model '" + name + "' in the model store " + dir_ + " (expected " +
                    config_path.string() + ")");
  }
  StoredModel model;
  model.name = name;
  model.dir = dir.string();
  auto config = config::LoadModelConfig(config_path.string(), name);
  Status supported =
      config.ok() ? backend::Registry::CheckConfig(*config, config_path.string()) : config.status();
  if (supported.ok()) {
    model.config = std::move(*config);
  } else {
    model.config_error = supported.message();
  }
  // model.pt when the config is invalid (the load then says why).
  model.versions = ScanVersions(
      dir, model.config ? backend::Registry::ModelFiles(*model.config)
                        : std::vector<std::string>{"model.pt"});
  return model;
}

}  // namespace inferd::repository
