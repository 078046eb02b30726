#include "mirror/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "bench/percentiles.h"

namespace inferd::mirror {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Element i of a numeric tensor as a double.
double At(const Tensor& t, int64_t i) {
  const std::byte* p = t.data();
  auto load = [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    return v;
  };
  switch (t.dtype()) {
    case DataType::kBool:
    case DataType::kUint8:
      return load(uint8_t{});
    case DataType::kInt8:
      return load(int8_t{});
    case DataType::kInt16:
      return load(int16_t{});
    case DataType::kInt32:
      return load(int32_t{});
    case DataType::kInt64:
      return static_cast<double>(load(int64_t{}));
    case DataType::kFp16:
      return HalfToFloat(load(uint16_t{}));
    case DataType::kBf16: {
      const uint32_t bits = uint32_t{load(uint16_t{})} << 16;
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      return f;
    }
    case DataType::kFp32:
      return load(float{});
    case DataType::kFp64:
      return load(double{});
    case DataType::kBytes:
      break;
  }
  return 0;
}

int64_t ArgMaxRow(const Tensor& t, int64_t row, int64_t classes) {
  int64_t best = 0;
  double best_v = At(t, row * classes);
  for (int64_t c = 1; c < classes; ++c) {
    const double v = At(t, row * classes + c);
    if (v > best_v) {
      best_v = v;
      best = c;
    }
  }
  return best;
}

std::string Describe(const Tensor& t) {
  return std::string(DataTypeName(t.dtype())) + ShapeToString(t.shape());
}

// Compares one output pair into `d`; returns a mismatch message or "".
std::string CompareOutput(const NamedTensor& a, const NamedTensor& b, OutputDiff* d) {
  d->name = a.name;
  const Tensor& p = a.tensor;
  const Tensor& c = b.tensor;
  const bool p_bytes = p.dtype() == DataType::kBytes, c_bytes = c.dtype() == DataType::kBytes;
  if (p.shape() != c.shape() || p_bytes != c_bytes) {
    return "output '" + a.name + "': primary " + Describe(p) + ", candidate '" + b.name + "' " +
           Describe(c);
  }
  if (p_bytes) {  // equal or not
    d->elements = p.num_elements();
    const bool same = p.byte_size() == c.byte_size() &&
                      std::memcmp(p.data(), c.data(), p.byte_size()) == 0;
    d->max_abs_error = same ? 0 : 1;
    d->sum_abs_error = same ? 0 : static_cast<double>(d->elements);
    return "";
  }
  const int64_t n = p.num_elements();
  d->elements = n;
  for (int64_t i = 0; i < n; ++i) {
    const double e = std::fabs(At(p, i) - At(c, i));
    // NaN on one side only is the largest disagreement there is.
    const double err = std::isnan(e) ? (std::isnan(At(p, i)) && std::isnan(At(c, i)) ? 0 : INFINITY)
                                     : e;
    d->sum_abs_error += err;
    d->max_abs_error = std::max(d->max_abs_error, err);
    const double magnitude = std::fabs(At(p, i));
    if (std::isfinite(magnitude)) d->max_abs_primary = std::max(d->max_abs_primary, magnitude);
  }
  const Shape& s = p.shape();
  if (s.size() == 2 && s[1] >= 2) {
    d->classifier = true;
    d->top1_rows = s[0];
    for (int64_t r = 0; r < s[0]; ++r) {
      const int64_t pa = ArgMaxRow(p, r, s[1]), ca = ArgMaxRow(c, r, s[1]);
      if (pa == ca) ++d->top1_agree;
      if (r == 0) {
        d->first_primary_top1 = pa;
        d->first_candidate_top1 = ca;
      }
    }
  }
  return "";
}

void Fnv1a(uint64_t* h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    *h ^= p[i];
    *h *= 1099511628211ull;
  }
}

std::string Hex(const void* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

double PairDiff::max_abs_error() const {
  double m = 0;
  for (const auto& o : outputs) m = std::max(m, o.max_abs_error);
  return m;
}

int64_t PairDiff::top1_disagree() const {
  int64_t n = 0;
  for (const auto& o : outputs) n += o.top1_rows - o.top1_agree;
  return n;
}

PairDiff ComparePair(const std::vector<NamedTensor>& primary,
                     const std::vector<NamedTensor>& candidate) {
  PairDiff diff;
  if (primary.size() != candidate.size()) {
    diff.mismatch = "the primary answered " + std::to_string(primary.size()) +
                    " outputs, the candidate " + std::to_string(candidate.size());
    return diff;
  }
  // By name when every primary name is among the candidate's, else by position.
  std::vector<const NamedTensor*> partner;
  for (const auto& p : primary) {
    const NamedTensor* found = nullptr;
    for (const auto& c : candidate)
      if (c.name == p.name) found = &c;
    if (!found) break;
    partner.push_back(found);
  }
  if (partner.size() != primary.size()) {
    partner.clear();
    for (const auto& c : candidate) partner.push_back(&c);
  }
  for (size_t i = 0; i < primary.size(); ++i) {
    OutputDiff d;
    std::string why = CompareOutput(primary[i], *partner[i], &d);
    if (!why.empty()) {
      diff.outputs.clear();
      diff.mismatch = std::move(why);
      return diff;
    }
    diff.outputs.push_back(std::move(d));
  }
  return diff;
}

InputRef MakeInputRef(uint64_t seq, const scheduler::InferenceRequest& request) {
  InputRef ref;
  ref.seq = seq;
  ref.id = request.id.substr(0, 128);
  ref.hash = 14695981039346656037ull;
  constexpr size_t kHead = 32;
  auto add = [&](const void* data, size_t n) {
    Fnv1a(&ref.hash, data, n);
    if (ref.head_hex.empty()) ref.head_hex = Hex(data, std::min(kHead, n));
    ref.bytes += static_cast<int64_t>(n);
  };
  for (const auto& t : request.inputs) add(t.tensor.data(), t.tensor.byte_size());
  for (const auto& r : request.raw) add(r.bytes.data(), r.bytes.size());
  return ref;
}

void Comparison::AddLatency(double primary_ms, double candidate_ms) {
  primary_ms_.push_back(primary_ms);
  candidate_ms_.push_back(candidate_ms);
  while (static_cast<int>(primary_ms_.size()) > options_.latency_window) {
    primary_ms_.pop_front();
    candidate_ms_.pop_front();
  }
}

void Comparison::AddDiff(const PairDiff& diff) {
  ++compared_;
  for (size_t i = 0; i < diff.outputs.size(); ++i) {
    const OutputDiff& d = diff.outputs[i];
    auto it = std::find_if(outputs_.begin(), outputs_.end(),
                           [&](const OutputTotals& t) { return t.name == d.name; });
    if (it == outputs_.end()) it = outputs_.insert(outputs_.end(), OutputTotals{d.name});
    ++it->compared;
    it->elements += d.elements;
    it->max_abs_error = std::max(it->max_abs_error, d.max_abs_error);
    it->sum_abs_error += d.sum_abs_error;
    it->classifier |= d.classifier;
    it->top1_rows += d.top1_rows;
    it->top1_agree += d.top1_agree;
  }
}

namespace {
// Worse first: more top-1 disagreements, then a larger error.
bool Worse(int64_t top1_a, double err_a, int64_t top1_b, double err_b) {
  return top1_a != top1_b ? top1_a > top1_b : err_a > err_b;
}
}  // namespace

bool Comparison::Keeps(const PairDiff& diff) const {
  if (options_.top_k <= 0) return false;
  if (diff.top1_disagree() == 0 && diff.max_abs_error() == 0) return false;  // agrees exactly
  if (static_cast<int>(top_.size()) < options_.top_k) return true;
  const Disagreement& last = top_.back();
  return Worse(diff.top1_disagree(), diff.max_abs_error(), last.top1_disagree, last.max_abs_error);
}

void Comparison::Keep(const PairDiff& diff, InputRef input) {
  Disagreement d;
  d.input = std::move(input);
  d.max_abs_error = diff.max_abs_error();
  d.top1_disagree = diff.top1_disagree();
  for (const auto& o : diff.outputs) {
    if (o.classifier) {
      d.primary_top1 = o.first_primary_top1;
      d.candidate_top1 = o.first_candidate_top1;
      break;
    }
  }
  auto pos = std::find_if(top_.begin(), top_.end(), [&](const Disagreement& t) {
    return Worse(d.top1_disagree, d.max_abs_error, t.top1_disagree, t.max_abs_error);
  });
  top_.insert(pos, std::move(d));
  if (static_cast<int>(top_.size()) > options_.top_k) top_.pop_back();
}

ComparisonSummary Comparison::Summarize(bool with_latency) const {
  ComparisonSummary s;
  s.compared = compared_;
  s.mismatched = mismatched_;
  int64_t elements = 0, rows = 0, agree = 0;
  double sum = 0;
  for (const auto& t : outputs_) {
    OutputSummary o;
    o.name = t.name;
    o.compared = t.compared;
    o.elements = t.elements;
    o.max_abs_error = t.max_abs_error;
    o.mean_abs_error = t.elements ? t.sum_abs_error / static_cast<double>(t.elements) : 0;
    if (t.classifier && t.top1_rows > 0) {
      o.top1_agreement = static_cast<double>(t.top1_agree) / static_cast<double>(t.top1_rows);
    }
    s.outputs.push_back(o);
    s.max_abs_error = std::max(s.max_abs_error, t.max_abs_error);
    elements += t.elements;
    sum += t.sum_abs_error;
    rows += t.top1_rows;
    agree += t.top1_agree;
  }
  s.mean_abs_error = elements ? sum / static_cast<double>(elements) : 0;
  if (rows > 0) s.top1_agreement = static_cast<double>(agree) / static_cast<double>(rows);
  auto summarize = [](const std::deque<double>& ms) {
    bench::LatencySummary l = bench::Summarize(std::vector<double>(ms.begin(), ms.end()));
    return LatencySummary{l.p50_ms, l.p99_ms, static_cast<int64_t>(l.count)};
  };
  if (!with_latency) return s;
  s.primary = summarize(primary_ms_);
  s.candidate = summarize(candidate_ms_);
  s.top_disagreements = top_;
  return s;
}

}  // namespace inferd::mirror
