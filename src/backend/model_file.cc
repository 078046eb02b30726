#include "backend/model_file.h"

#include <filesystem>

namespace inferd::backend {

StatusOr<int64_t> ModelFileBytes(const LoadOptions& load) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(load.model_path, ec)) {
    return InvalidArgument("model '" + load.config.name + "': model file '" + load.model_path +
                           "' does not exist or is not a file");
  }
  const auto size = std::filesystem::file_size(load.model_path, ec);
  return ec ? int64_t{0} : static_cast<int64_t>(size);
}

}  // namespace inferd::backend
