// Helpers for the torch backend tests: the test model store made by
// `tools/make_models.py --test-store DIR`, found through $INFERD_TEST_STORE.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/torch/torch_backend.h"
#include "common/tensor.h"
#include "config/model_config.h"

namespace inferd::backend::testing {

inline std::string TestStore() {
  const char* dir = std::getenv("INFERD_TEST_STORE");
  return dir ? dir : "";
}

#define SKIP_WITHOUT_TEST_STORE()                                                        \
  if (::inferd::backend::testing::TestStore().empty())                                   \
  GTEST_SKIP() << "INFERD_TEST_STORE is not set: run `/usr/bin/python3 "                 \
                  "tools/make_models.py --test-store DIR` and set INFERD_TEST_STORE=DIR"

inline config::ModelConfig TestConfig(const std::string& model) {
  auto config = config::LoadModelConfig(TestStore() + "/" + model + "/config.yaml", model);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : config::ModelConfig{};
}

inline LoadOptions TestLoadOptions(const std::string& model) {
  return LoadOptions{TestStore() + "/" + model + "/1/model.pt", TestConfig(model)};
}

inline std::shared_ptr<Model> LoadOrDie(const LoadOptions& options,
                                        const TorchBackend::Options& backend_options = {}) {
  auto backend = TorchBackend::Create(backend_options);
  EXPECT_TRUE(backend.ok());
  auto model = (*backend)->Load(options);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : nullptr;
}

inline std::shared_ptr<Model> LoadTestModel(const std::string& model) {
  return LoadOrDie(TestLoadOptions(model));
}

template <typename T>
Tensor MakeTensor(DataType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::Allocate(dtype, std::move(shape));
  EXPECT_EQ(t.byte_size(), values.size() * sizeof(T));
  std::memcpy(t.mutable_data(), values.data(), t.byte_size());
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  std::vector<T> out(t.byte_size() / sizeof(T));
  std::memcpy(out.data(), t.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace inferd::backend::testing
