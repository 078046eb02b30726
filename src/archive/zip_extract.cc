#include "archive/zip_extract.h"

#include <sys/stat.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace inferd::archive {
namespace fs = std::filesystem;
namespace {

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string ZipErrorText(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

bool IsSymlink(zip_t* zip, zip_uint64_t index) {
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (zip_file_get_external_attributes(zip, index, 0, &opsys, &attributes) != 0) return false;
  return opsys == ZIP_OPSYS_UNIX && ((attributes >> 16) & S_IFMT) == S_IFLNK;
}

Status CopyEntry(zip_t* zip, zip_uint64_t index, const fs::path& out, int64_t* budget,
                 const std::string& what) {
  std::unique_ptr<zip_file_t, ZipFileCloser> file(zip_fopen_index(zip, index, 0));
  if (!file) return InvalidArgument(what + ": cannot be read: " + zip_strerror(zip));
  std::ofstream os(out, std::ios::binary | std::ios::trunc);
  if (!os) return Internal(what + ": cannot write " + out.string());
  std::vector<char> buffer(1 << 16);
  for (;;) {
    zip_int64_t n = zip_fread(file.get(), buffer.data(), buffer.size());
    if (n < 0) {
      return InvalidArgument(what + ": corrupt data (" + zip_file_strerror(file.get()) + ")");
    }
    if (n == 0) break;
    *budget -= n;
    if (*budget < 0) return InvalidArgument(what + ": the archive unpacks to more than allowed");
    os.write(buffer.data(), n);
  }
  os.close();
  if (!os) return Internal(what + ": cannot write " + out.string());
  return Status::Ok();
}

}  // namespace

bool IsSafeEntryName(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  if (name.find('\\') != std::string::npos || name.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    if (name.compare(start, end - start, "..") == 0 && end - start == 2) return false;
    start = end + 1;
  }
  return true;
}

Status ExtractZip(const std::string& zip_path, const std::string& dest_dir,
                  const ExtractOptions& options) {
  int code = 0;
  std::unique_ptr<zip_t, ZipCloser> zip(
      zip_open(zip_path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!zip) {
    return InvalidArgument("archive " + zip_path +
                           " is not a readable zip file: " + ZipErrorText(code));
  }
  const zip_int64_t count = zip_get_num_entries(zip.get(), 0);
  int64_t budget = options.max_bytes;
  std::error_code ec;
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* raw_name = zip_get_name(zip.get(), i, ZIP_FL_ENC_GUESS);
    if (!raw_name)
      return InvalidArgument("archive " + zip_path + ": entry " + std::to_string(i) +
                             " has no name");
    const std::string name = raw_name;
    const std::string what = "archive " + zip_path + ", entry '" + name + "'";
    if (!IsSafeEntryName(name)) {
      return InvalidArgument(
          what + ": its path leaves the archive's folder (absolute, `..` or a backslash)");
    }
    if (IsSymlink(zip.get(), i)) return InvalidArgument(what + ": symbolic links are not unpacked");
    const fs::path out = fs::path(dest_dir) / name;
    if (name.back() == '/') {
      fs::create_directories(out, ec);
      if (ec) return Internal(what + ": cannot create " + out.string() + ": " + ec.message());
      continue;
    }
    fs::create_directories(out.parent_path(), ec);
    if (ec)
      return Internal(what + ": cannot create " + out.parent_path().string() + ": " + ec.message());
    RETURN_IF_ERROR(CopyEntry(zip.get(), i, out, &budget, what));
  }
  return Status::Ok();
}

}  // namespace inferd::archive
