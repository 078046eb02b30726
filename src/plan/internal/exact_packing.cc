#include "plan/internal/exact_packing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace inferd::plan::internal {
namespace {

class Search {
 public:
  Search(const std::vector<ItemSize>& sizes, const Capacity& cap, int lower_bound, int upper_bound,
         int64_t node_limit)
      : sizes_(sizes),
        cap_(cap),
        lower_bound_(lower_bound),
        best_count_(upper_bound),
        node_limit_(node_limit),
        order_(sizes.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](int x, int y) { return sizes[x].dominant() > sizes[y].dominant(); });
    // Shares still to place from position i on, for the volume cut.
    rest_cores_.assign(sizes.size() + 1, 0);
    rest_memory_.assign(sizes.size() + 1, 0);
    for (size_t i = sizes.size(); i-- > 0;) {
      rest_cores_[i] = rest_cores_[i + 1] + sizes[order_[i]].core_share;
      rest_memory_[i] = rest_memory_[i + 1] + sizes[order_[i]].memory_share;
    }
  }

  ExactResult Run() {
    Descend(0);
    ExactResult r;
    r.search_nodes = explored_;
    r.proven = explored_ < node_limit_ || done_;
    if (found_) r.bins = best_;
    return r;
  }

 private:
  void Descend(size_t i) {
    if (done_ || ++explored_ >= node_limit_) return;
    const int used = static_cast<int>(open_.size());
    if (i == order_.size()) {
      best_count_ = used;
      best_ = open_;
      found_ = true;
      done_ = used <= lower_bound_;
      return;
    }
    if (used >= best_count_) return;
    double free_cores = 0, free_memory = 0;
    for (const Bin& b : open_) {
      free_cores += 1.0 - b.cores / cap_.cores;
      free_memory += 1.0 - static_cast<double>(b.memory) / static_cast<double>(cap_.memory);
    }
    const double extra =
        std::max({0.0, rest_cores_[i] - free_cores, rest_memory_[i] - free_memory});
    if (used + static_cast<int>(std::ceil(extra - 1e-9)) >= best_count_) return;

    const int item = order_[i];
    const ItemSize& s = sizes_[item];
    for (int b = 0; b < used && !done_; ++b) {
      if (!Fits(cap_, open_[b], s) || SameLoadEarlier(b)) continue;
      Place(open_[b], item, s);
      Descend(i + 1);
      Remove(open_[b], s);
    }
    if (!done_ && used + 1 < best_count_) {
      open_.push_back(Bin{});
      Place(open_.back(), item, s);
      Descend(i + 1);
      open_.pop_back();
    }
  }

  bool SameLoadEarlier(int b) const {
    for (int e = 0; e < b; ++e) {
      if (open_[e].cores == open_[b].cores && open_[e].memory == open_[b].memory) return true;
    }
    return false;
  }

  static void Remove(Bin& bin, const ItemSize& s) {
    bin.cores -= s.cores;
    bin.memory -= s.memory;
    bin.items.pop_back();
  }

  const std::vector<ItemSize>& sizes_;
  const Capacity& cap_;
  const int lower_bound_;
  int best_count_;
  const int64_t node_limit_;
  std::vector<int> order_;
  std::vector<double> rest_cores_, rest_memory_;
  std::vector<Bin> open_, best_;
  int64_t explored_ = 0;
  bool found_ = false;
  bool done_ = false;
};

}  // namespace

ExactResult PackExactly(const std::vector<ItemSize>& sizes, const Capacity& cap, int lower_bound,
                        int upper_bound, int64_t node_limit) {
  return Search(sizes, cap, lower_bound, upper_bound, node_limit).Run();
}

}  // namespace inferd::plan::internal
