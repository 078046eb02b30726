#include "plan/internal/bin_elimination.h"

#include <algorithm>
#include <numeric>

namespace inferd::plan::internal {
namespace {

// One attempt's state: the bins it changed keep their old contents here, so a
// failed attempt is undone in time proportional to what it touched.
class Attempt {
 public:
  Attempt(const std::vector<ItemSize>& sizes, const std::vector<Capacity>& caps,
          std::vector<Bin>* bins)
      : sizes_(sizes), caps_(caps), bins_(*bins), touched_(bins->size(), 0) {}

  // Empties bin `target` and places its items elsewhere; true when all found a place.
  bool Empty(int target, int max_ejections) {
    Save(target);
    std::vector<int> pool = bins_[target].items;
    bins_[target].items.clear();
    bins_[target].cores = 0;
    bins_[target].memory = 0;
    int ejections = 0;
    while (!pool.empty()) {
      // Largest first (by the sum of its shares): big items have the fewest places.
      auto largest = std::max_element(pool.begin(), pool.end(), [&](int x, int y) {
        return sizes_[x].sum() < sizes_[y].sum();
      });
      const int x = *largest;
      *largest = pool.back();
      pool.pop_back();
      if (PlaceBestFit(target, x)) continue;
      if (ejections >= max_ejections) return false;
      const int ejected = SwapIn(target, x);
      if (ejected < 0) return false;
      ++ejections;
      pool.push_back(ejected);
    }
    return true;
  }

  void Undo() {
    for (auto& [index, bin] : saved_) bins_[index] = std::move(bin);
  }

 private:
  void Save(int b) {
    if (touched_[b]) return;
    touched_[b] = 1;
    saved_.emplace_back(b, bins_[b]);
  }

  // The node that x leaves fullest (by the sum of its two shares after placing).
  bool PlaceBestFit(int target, int x) {
    const ItemSize& s = sizes_[x];
    int best = -1;
    double best_fill = -1;
    for (int b = 0; b < static_cast<int>(bins_.size()); ++b) {
      const Capacity& cap = caps_[bins_[b].type];
      if (b == target || !Fits(cap, bins_[b], s) || HoldsGroup(bins_[b], s, sizes_)) continue;
      const double fill = (bins_[b].cores + s.cores) / cap.cores +
                          static_cast<double>(bins_[b].memory + s.memory) / cap.memory;
      if (fill > best_fill) {
        best_fill = fill;
        best = b;
      }
    }
    if (best < 0) return false;
    Save(best);
    Place(bins_[best], x, s);
    return true;
  }

  // Puts x in place of the smallest item y (strictly smaller than x) of any
  // node where the exchange fits; returns y, or -1 when there is none.
  int SwapIn(int target, int x) {
    const ItemSize& s = sizes_[x];
    int best_bin = -1;
    size_t best_pos = 0;
    double best_size = s.sum();
    for (int b = 0; b < static_cast<int>(bins_.size()); ++b) {
      if (b == target) continue;
      const Bin& bin = bins_[b];
      for (size_t k = 0; k < bin.items.size(); ++k) {
        const ItemSize& y = sizes_[bin.items[k]];
        if (y.sum() >= best_size) continue;
        if (!Fits(caps_[bin.type], bin.cores - y.cores, bin.memory - y.memory, s)) continue;
        if (HoldsGroup(bin, s, sizes_, bin.items[k])) continue;
        best_size = y.sum();
        best_bin = b;
        best_pos = k;
      }
    }
    if (best_bin < 0) return -1;
    Save(best_bin);
    Bin& bin = bins_[best_bin];
    const int y = bin.items[best_pos];
    bin.cores -= sizes_[y].cores;
    bin.memory -= sizes_[y].memory;
    bin.items[best_pos] = bin.items.back();
    bin.items.pop_back();
    Place(bin, x, s);
    return y;
  }

  const std::vector<ItemSize>& sizes_;
  const std::vector<Capacity>& caps_;
  std::vector<Bin>& bins_;
  std::vector<char> touched_;
  std::vector<std::pair<int, Bin>> saved_;
};

}  // namespace

EliminationStats EliminateBins(const std::vector<ItemSize>& sizes, const Capacity& cap,
                               const EliminationOptions& options, std::vector<Bin>* bins) {
  return EliminateBins(sizes, std::vector<Capacity>{cap}, options, bins);
}

EliminationStats EliminateBins(const std::vector<ItemSize>& sizes,
                               const std::vector<Capacity>& caps, const EliminationOptions& options,
                               std::vector<Bin>* bins) {
  // What keeping a bin wastes: its price times its unfilled share (with no
  // prices, its unfilled share alone: the least filled first).
  auto waste = [&](const Bin& b) {
    const double price = options.prices.empty() ? 1.0 : options.prices[b.type];
    return price * (1.0 - Fill(caps[b.type], b));
  };
  auto cost = [&] {
    double sum = 0;
    for (const Bin& b : *bins) sum += options.prices.empty() ? 1.0 : options.prices[b.type];
    return sum;
  };
  EliminationStats stats;
  bool removed = true;
  while (removed && static_cast<int>(bins->size()) > options.lower_bound &&
         stats.attempts < options.max_attempts && cost() > options.stop_cost) {
    removed = false;
    // Most waste first: with one shape, the least filled node, whose items are
    // likeliest to fit elsewhere; with prices, an expensive node half empty
    // before a cheap one.
    std::vector<int> order(bins->size());
    std::iota(order.begin(), order.end(), 0);
    std::vector<double> wasted(bins->size());
    for (size_t b = 0; b < bins->size(); ++b) wasted[b] = waste((*bins)[b]);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return wasted[x] > wasted[y]; });
    for (int target : order) {
      if (options.skip && options.skip(target)) continue;
      if (stats.attempts++ >= options.max_attempts) break;
      Attempt attempt(sizes, caps, bins);
      const int max_ejections =
          options.max_ejections_per_item * static_cast<int>((*bins)[target].items.size());
      if (attempt.Empty(target, max_ejections)) {
        if (options.on_remove) options.on_remove(target);
        bins->erase(bins->begin() + target);
        ++stats.removed;
        removed = true;
        break;
      }
      attempt.Undo();
    }
  }
  return stats;
}

}  // namespace inferd::plan::internal
