#include "archive/mar_unpack.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "archive/zip_extract.h"

namespace inferd::archive {
namespace fs = std::filesystem;
namespace {

struct DigestCloser {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// SHA-256 over the archive's bytes, then `salt`; the first 32 hex digits.
StatusOr<std::string> ContentKey(const std::string& path, const std::string& salt) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read archive " + path);
  std::unique_ptr<EVP_MD_CTX, DigestCloser> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), buffer.size());
    if (in.gcount() > 0) EVP_DigestUpdate(ctx.get(), buffer.data(), in.gcount());
  }
  EVP_DigestUpdate(ctx.get(), salt.data(), salt.size());
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &size);
  std::string hex;
  char two[3];
  for (unsigned int i = 0; i < size && hex.size() < 32; ++i) {
    std::snprintf(two, sizeof two, "%02x", digest[i]);
    hex += two;
  }
  return hex;
}

std::string SettingsText(const ServingSettings& s) {
  auto field = [](const auto& v) { return v ? std::to_string(*v) : std::string("-"); };
  return "|batch=" + field(s.batch_size) + "|delay=" + field(s.max_batch_delay_ms) +
         "|workers=" + field(s.workers) + "|timeout=" + field(s.response_timeout_s);
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Internal("cannot write " + path.string());
  return Status::Ok();
}

// Unpacks into `tmp` (the future model folder).
Status Build(const std::string& mar_path, const ServingSettings& overrides, const fs::path& tmp) {
  const fs::path version = tmp / "1";
  RETURN_IF_ERROR(ExtractZip(mar_path, version.string()));
  ASSIGN_OR_RETURN(MarManifest manifest, ReadMarManifest(version.string()));
  std::string labels;
  if (RunsNatively(manifest)) {
    std::error_code ec;
    if (manifest.serialized_file != "model.pt") {
      fs::copy_file(version / manifest.serialized_file, version / "model.pt",
                    fs::copy_options::overwrite_existing, ec);
      if (ec) return Internal("cannot copy the serialized file: " + ec.message());
    }
    if (fs::exists(version / "index_to_name.json")) {
      ASSIGN_OR_RETURN(std::string text,
                       LabelsFromIndexToName((version / "index_to_name.json").string()));
      RETURN_IF_ERROR(WriteText(tmp / "labels.txt", text));
      labels = "labels.txt";
    }
  }
  return WriteText(tmp / "config.yaml", WriteServingConfig(manifest, overrides, labels));
}

}  // namespace

std::string DefaultCacheDir() {
  if (const char* dir = std::getenv("INFERD_MAR_CACHE"); dir && *dir) return dir;
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/inferd-mar-" + std::to_string(getuid());
}

StatusOr<std::string> UnpackMar(const std::string& mar_path, const UnpackOptions& options) {
  const std::string cache = options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir;
  ASSIGN_OR_RETURN(std::string key, ContentKey(mar_path, SettingsText(options.overrides)));
  const fs::path final_dir = fs::path(cache) / key;
  std::error_code ec;
  if (fs::exists(final_dir / "config.yaml", ec)) return final_dir.string();
  fs::create_directories(cache, ec);
  if (ec) return Internal("archive cache " + cache + ": " + ec.message());
  const fs::path tmp = fs::path(cache) / (key + ".tmp-" + std::to_string(getpid()) + "-" +
                                          std::to_string(reinterpret_cast<uintptr_t>(&ec)));
  fs::remove_all(tmp, ec);
  Status built = Build(mar_path, options.overrides, tmp);
  if (!built.ok()) {
    fs::remove_all(tmp, ec);
    return Status(built.code(), "archive " + mar_path + ": " + built.message());
  }
  fs::rename(tmp, final_dir, ec);
  if (ec) {  // another load of the same archive won the race: use its folder
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    if (!fs::exists(final_dir / "config.yaml", ignored)) {
      return Internal("archive cache " + final_dir.string() + ": " + ec.message());
    }
  }
  return final_dir.string();
}

}  // namespace inferd::archive
