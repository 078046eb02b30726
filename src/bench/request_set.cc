#include "bench/request_set.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "bench/grpc_request.h"

namespace inferd::bench {
namespace fs = std::filesystem;

namespace {

StatusOr<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("--input: cannot read '" + path.string() + "'");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

StatusOr<std::vector<fs::path>> ListInputs(const std::string& input) {
  std::error_code ec;
  if (fs::is_regular_file(input, ec)) return std::vector<fs::path>{fs::path(input)};
  if (!fs::is_directory(input, ec)) {
    return NotFound("--input: '" + input + "' is neither a file nor a folder");
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(input, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] != '.' && entry.is_regular_file()) files.push_back(entry.path());
  }
  if (ec) return NotFound("--input: cannot list '" + input + "': " + ec.message());
  if (files.empty()) return NotFound("--input: folder '" + input + "' holds no files");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::string TargetPath(const BenchOptions& o, const std::string& path_prefix) {
  if (o.protocol == Protocol::kGrpc) return kModelInferMethod;
  if (o.form == RequestForm::kRaw) {
    std::string path = path_prefix + "/predictions/" + o.model;
    if (!o.version.empty()) path += "/" + o.version;
    return path;
  }
  std::string path = path_prefix + "/v2/models/" + o.model;
  if (!o.version.empty()) path += "/versions/" + o.version;
  return path + "/infer";
}

std::string_view ContentTypeFor(std::string_view file_name) {
  const auto dot = file_name.rfind('.');
  if (dot == std::string_view::npos) return "application/octet-stream";
  std::string ext(file_name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == "jpg" || ext == "jpeg") return "image/jpeg";
  if (ext == "png") return "image/png";
  if (ext == "bmp") return "image/bmp";
  if (ext == "webp") return "image/webp";
  if (ext == "json") return "application/json";
  if (ext == "txt") return "text/plain";
  return "application/octet-stream";
}

StatusOr<std::size_t> JsonHeaderLength(std::string_view body) {
  std::size_t i = 0;
  while (i < body.size() && std::isspace(static_cast<unsigned char>(body[i]))) ++i;
  if (i == body.size() || body[i] != '{') {
    return InvalidArgument("v2binary body does not start with a JSON object; give --header-length");
  }
  int depth = 0;
  bool in_string = false;
  for (; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return InvalidArgument("v2binary body: the JSON header never closes; give --header-length");
}

StatusOr<PreparedRequest> RequestSet::Prepare(const BenchOptions& o, const ParsedUrl& url,
                                              const std::string& source, std::string body) {
  if (o.protocol == Protocol::kGrpc) {
    ASSIGN_OR_RETURN(std::string message, PrepareGrpcRequest(o, source, body));
    return PreparedRequest{source, std::move(message)};
  }
  std::string content_type;
  std::string extra;
  switch (o.form) {
    case RequestForm::kRaw:
      content_type = ContentTypeFor(source);
      break;
    case RequestForm::kV2Json:
      content_type = "application/json";
      break;
    case RequestForm::kV2Binary: {
      std::size_t header_length;
      if (o.header_length >= 0) {
        header_length = static_cast<std::size_t>(o.header_length);
        if (header_length > body.size()) {
          return InvalidArgument("--header-length " + std::to_string(header_length) +
                                 " exceeds the size of '" + source + "' (" +
                                 std::to_string(body.size()) + " bytes)");
        }
      } else {
        ASSIGN_OR_RETURN(header_length, JsonHeaderLength(body));
      }
      content_type = "application/octet-stream";
      extra = "Inference-Header-Content-Length: " + std::to_string(header_length) + "\r\n";
      break;
    }
  }
  for (const std::string& h : o.http_headers) {
    if (h.find(':') == std::string::npos || h.find_first_of("\r\n") != std::string::npos) {
      // Not quoted: it may hold a key.
      return InvalidArgument("--http-header: expected 'Name: value' on one line");
    }
    extra += h + "\r\n";
  }
  PreparedRequest out;
  out.source = source;
  std::string host = url.host;
  if (url.port != "80") host += ":" + url.port;
  out.bytes = "POST " + TargetPath(o, url.path_prefix) + " HTTP/1.1\r\nHost: " + host +
              "\r\nUser-Agent: inferd-bench\r\nContent-Type: " + content_type +
              "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "\r\n";
  out.bytes += body;
  return out;
}

StatusOr<RequestSet> RequestSet::Build(const BenchOptions& o) {
  ASSIGN_OR_RETURN(ParsedUrl url, ParseUrl(o.url));
  ASSIGN_OR_RETURN(std::vector<fs::path> files, ListInputs(o.input));
  RequestSet set;
  set.target_ = TargetPath(o, url.path_prefix);
  for (const fs::path& file : files) {
    ASSIGN_OR_RETURN(std::string body, ReadFile(file));
    ASSIGN_OR_RETURN(PreparedRequest req, Prepare(o, url, file.string(), std::move(body)));
    set.requests_.push_back(std::move(req));
  }
  return set;
}

}  // namespace inferd::bench
