// Text pre-processing (pipeline/text_preprocessor.h) with one tokenizer,
// chosen at build time (INFERD_FUZZ_TOKENIZER: wordpiece with the test
// vocab.txt, or sentencepiece with the test .model). The input is split on
// 0x1E (record separator) into up to 4 items of one request; the first byte
// picks whether long texts are cut (truncation) or refused.
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "pipeline/text_preprocessor.h"

namespace {

using inferd::pipeline::TextPreprocessor;

std::unique_ptr<TextPreprocessor> Make(bool truncation) {
  inferd::config::ModelConfig c;
  c.name = "text";
  c.max_batch_size = 4;
  c.inputs = {{"input_ids", inferd::DataType::kInt64, {-1}, std::nullopt},
              {"attention_mask", inferd::DataType::kInt64, {-1}, std::nullopt},
              {"token_type_ids", inferd::DataType::kInt32, {16}, std::nullopt}};
  c.preprocess.kind = inferd::config::PreprocessKind::kText;
  c.preprocess.tokenizer =
      inferd::config::ParseChoice<inferd::config::Tokenizer>(INFERD_FUZZ_TOKENIZER).value();
  c.preprocess.vocab = c.preprocess.tokenizer == inferd::config::Tokenizer::kWordpiece ? "wordpiece_vocab.txt"
                                                               : "spm_test.model";
  c.preprocess.max_length = 16;
  c.preprocess.truncation = truncation;
  auto p = TextPreprocessor::Create(c, inferd::fuzz::SourceDir() + "/tests/fixtures/pipeline");
  FUZZ_CHECK(p.ok(), p.status().ToString());
  return std::move(*p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto cut = Make(true);
  static const auto refuse = Make(false);
  if (size < 1) return 0;
  const TextPreprocessor& p = (data[0] & 1) ? *cut : *refuse;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string_view> texts;
  while (texts.size() < 3) {
    const size_t sep = in.find('\x1e');
    if (sep == std::string_view::npos) break;
    texts.push_back(in.substr(0, sep));
    in.remove_prefix(sep + 1);
  }
  texts.push_back(in);
  auto tensors = p.Run(texts);
  if (!tensors.ok()) {
    inferd::fuzz::CheckClientError(tensors.status());
    return 0;
  }
  FUZZ_CHECK(tensors->size() == 3, "three inputs");
  for (const auto& t : *tensors) {
    inferd::fuzz::CheckTensor(t.tensor);
    FUZZ_CHECK(t.tensor.shape().size() == 2 &&
                   t.tensor.shape()[0] == static_cast<int64_t>(texts.size()) &&
                   t.tensor.shape()[1] <= 16,
               t.name + " " + inferd::ShapeToString(t.tensor.shape()));
  }
  return 0;
}
