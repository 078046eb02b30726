// inferd_preprocess_dump: runs the image pre-processing on files and writes the
// tensor as raw little-endian float32, for tools/pipeline_reference.py compare.
//   inferd_preprocess_dump [--resize N] [--crop N] [--width W --height H]
//       [--color rgb|bgr|grayscale] [--invert] [--mean a,b,c] [--std a,b,c]
//       [--repeat N] --out FILE IMAGE...
// --repeat N times the pre-processing (decode included) N times per image, five
// rounds, and prints the median per image in thread CPU time (steady on a
// shared, loaded machine) and in wall time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/image_preprocessor.h"

namespace {

double ThreadCpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

std::vector<float> ParseFloats(const std::string& s) {
  std::vector<float> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stof(item));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  using inferd::pipeline::ImagePreprocessor;
  inferd::config::PreprocessConfig config;
  config.kind = inferd::config::PreprocessKind::kImage;
  std::string out_path;
  int repeat = 0;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--resize")
      config.resize = std::stoi(next());
    else if (a == "--crop")
      config.center_crop = std::stoi(next());
    else if (a == "--width")
      config.width = std::stoi(next());
    else if (a == "--height")
      config.height = std::stoi(next());
    else if (a == "--color") {
      const std::string color = next();
      auto parsed = inferd::config::ParseChoice<inferd::config::ColorOrder>(color);
      if (!parsed) {
        std::cerr << "--color: expected " << inferd::config::ChoiceList<inferd::config::ColorOrder>()
                  << ", got '" << color << "'\n";
        return 2;
      }
      config.color = *parsed;
    }
    else if (a == "--invert")
      config.invert = true;
    else if (a == "--mean")
      config.mean = ParseFloats(next());
    else if (a == "--std")
      config.std = ParseFloats(next());
    else if (a == "--out")
      out_path = next();
    else if (a == "--repeat")
      repeat = std::stoi(next());
    else
      files.push_back(a);
  }
  if (files.empty()) {
    std::cerr << "usage: inferd_preprocess_dump [options] --out FILE IMAGE...\n";
    return 2;
  }
  inferd::config::TensorSpec spec;
  spec.name = "input";
  spec.dims = {config.color == inferd::config::ColorOrder::kGrayscale ? 1 : 3, -1, -1};
  auto pre = ImagePreprocessor::Create(config, spec);
  if (!pre.ok()) {
    std::cerr << pre.status().ToString() << "\n";
    return 1;
  }
  std::vector<std::string> bytes;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::cerr << "cannot read " << f << "\n";
      return 1;
    }
    bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::vector<std::string_view> views(bytes.begin(), bytes.end());
  auto tensor = (*pre)->Run(views);
  if (!tensor.ok()) {
    std::cerr << tensor.status().ToString() << "\n";
    return 1;
  }
  if (!out_path.empty()) {
    std::ofstream out(out_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(tensor->data()),
              static_cast<std::streamsize>(tensor->byte_size()));
  }
  if (repeat > 0) {
    for (size_t f = 0; f < views.size(); ++f) {
      std::vector<double> cpu, wall;
      for (int round = 0; round < 5; ++round) {
        const double cpu0 = ThreadCpuMicros();
        const auto wall0 = std::chrono::steady_clock::now();
        for (int r = 0; r < repeat; ++r) {
          auto t = (*pre)->Run({views[f]});
          if (!t.ok()) return 1;
        }
        cpu.push_back((ThreadCpuMicros() - cpu0) / repeat);
        wall.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - wall0)
                .count() /
            repeat);
      }
      std::sort(cpu.begin(), cpu.end());
      std::sort(wall.begin(), wall.end());
      std::printf(
          "%s: %.0f us CPU, %.0f us wall per image (median of 5; decode + resize + crop + "
          "normalize)\n",
          files[f].c_str(), cpu[2], wall[2]);
    }
  }
  return 0;
}
