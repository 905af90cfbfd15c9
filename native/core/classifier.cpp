#include "classifier.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "thread_pool.h"

namespace chronoql {

namespace {
bool finiteAll(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
}
}  // namespace

Classifier::Classifier(uint32_t featureCount, std::vector<float> mean, std::vector<float> scale,
                       std::vector<DenseLayer> layers)
    : featureCount_(featureCount), mean_(std::move(mean)), scale_(std::move(scale)), layers_(std::move(layers)) {
  if (featureCount_ == 0) throw std::invalid_argument("features: the model needs at least one input feature");
  if (mean_.size() != featureCount_ || scale_.size() != featureCount_) {
    throw std::invalid_argument("normalization: mean and std need one entry per feature");
  }
  if (!finiteAll(mean_)) throw std::invalid_argument("normalization.mean: values must be finite");
  for (float s : scale_) {
    if (!(s > 0.0f) || !std::isfinite(s)) throw std::invalid_argument("normalization.std: values must be finite and > 0");
  }
  if (layers_.empty()) throw std::invalid_argument("layers: the model needs at least one layer");
  uint32_t inputs = featureCount_;
  widest_ = featureCount_;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const DenseLayer& layer = layers_[i];
    const std::string where = "layers[" + std::to_string(i) + "]";
    if (layer.inputs != inputs) throw std::invalid_argument(where + ": expects " + std::to_string(inputs) + " inputs");
    if (layer.outputs == 0) throw std::invalid_argument(where + ": needs at least one output");
    if (layer.weights.size() != static_cast<size_t>(layer.inputs) * layer.outputs) {
      throw std::invalid_argument(where + ".weights: must be outputs x inputs");
    }
    if (layer.bias.size() != layer.outputs) throw std::invalid_argument(where + ".bias: must have one entry per output");
    if (!finiteAll(layer.weights) || !finiteAll(layer.bias)) throw std::invalid_argument(where + ": parameters must be finite");
    if (layer.relu && i + 1 == layers_.size()) throw std::invalid_argument(where + ": the output layer feeds the softmax and takes no activation");
    inputs = layer.outputs;
    widest_ = std::max(widest_, layer.outputs);
  }
  if (layers_.back().outputs < 2) throw std::invalid_argument("classes: a classifier needs at least two classes");
}

void Classifier::scoreRow(const float* features, float* probabilities, std::vector<double>& a,
                          std::vector<double>& b) const {
  for (uint32_t i = 0; i < featureCount_; ++i) a[i] = (static_cast<double>(features[i]) - mean_[i]) / scale_[i];
  for (const DenseLayer& layer : layers_) {
    for (uint32_t o = 0; o < layer.outputs; ++o) {
      const float* w = layer.weights.data() + static_cast<size_t>(o) * layer.inputs;
      double sum = layer.bias[o];
      for (uint32_t i = 0; i < layer.inputs; ++i) sum += static_cast<double>(w[i]) * a[i];
      b[o] = layer.relu && sum < 0.0 ? 0.0 : sum;
    }
    std::swap(a, b);
  }
  const uint32_t classes = classCount();
  double maxLogit = a[0];
  for (uint32_t c = 1; c < classes; ++c) maxLogit = std::max(maxLogit, a[c]);
  double total = 0.0;
  for (uint32_t c = 0; c < classes; ++c) total += std::exp(a[c] - maxLogit);  // shifted: no overflow
  for (uint32_t c = 0; c < classes; ++c) probabilities[c] = static_cast<float>(std::exp(a[c] - maxLogit) / total);
}

void Classifier::score(const float* features, uint32_t batch, float* probabilities) const {
  constexpr uint32_t kRowsPerItem = 256;
  const uint32_t items = (batch + kRowsPerItem - 1) / kRowsPerItem;
  ThreadPool& pool = ThreadPool::shared();
  std::vector<std::vector<double>> scratch(pool.concurrency() * 2, std::vector<double>(widest_));
  pool.parallelFor(items, pool.concurrency(), [&](size_t slot, size_t item) {
    std::vector<double>& a = scratch[slot * 2];
    std::vector<double>& b = scratch[slot * 2 + 1];
    const uint32_t end = std::min<uint32_t>(batch, static_cast<uint32_t>((item + 1) * kRowsPerItem));
    for (uint32_t row = static_cast<uint32_t>(item * kRowsPerItem); row < end; ++row) {
      const float* x = features + static_cast<size_t>(row) * featureCount_;
      for (uint32_t i = 0; i < featureCount_; ++i) {
        if (!std::isfinite(x[i])) {
          throw std::invalid_argument("features: row " + std::to_string(row) + " contains NaN or Infinity");
        }
      }
      scoreRow(x, probabilities + static_cast<size_t>(row) * classCount(), a, b);
    }
  });
}

}  // namespace chronoql
