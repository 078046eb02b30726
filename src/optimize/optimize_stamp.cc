#include "optimize/optimize_stamp.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "optimize/optimize_report.h"

namespace inferd::optimize {

StatusOr<std::string> Sha256File(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument("cannot read '" + path + "'");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Internal("OpenSSL could not start a SHA-256 digest");
  }
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0 &&
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount())) != 1) {
      return Internal("OpenSSL failed a SHA-256 digest of '" + path + "'");
    }
  }
  if (in.bad()) return InvalidArgument("error reading '" + path + "'");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &size) != 1) {
    return Internal("OpenSSL failed a SHA-256 digest of '" + path + "'");
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string TensorSignature(const config::ModelConfig& config) {
  std::string s;
  auto add = [&](const std::vector<config::TensorSpec>& specs) {
    for (const auto& spec : specs) {
      s += (s.empty() ? "" : " ") + spec.name + ":" + std::string(DataTypeName(spec.dtype)) +
           ShapeToString(spec.dims);
    }
  };
  add(config.inputs);
  s += " ->";
  add(config.outputs);
  s += " preprocess:" + std::string(config::Name(config.preprocess.kind));
  return s;
}

std::string MakeStamp(const std::string& model_digest, const std::string& script_digest,
                      const config::ModelConfig& config) {
  return "format " + std::to_string(kReportFormat) + "; model.pt sha256 " + model_digest +
         "; export script sha256 " + script_digest + "; tensors " + TensorSignature(config);
}

}  // namespace inferd::optimize
