// A whole file as a string, for the small files the server writes and reads
// back itself (reports, logs of its own children): empty when it cannot be
// read, which the callers take as "nothing written yet".
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace inferd {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace inferd
