// Feed-forward classifier (a linear layer or a small MLP with ReLU) with
// per-feature standardisation and a softmax output, scored in batches. The
// model is parsed and validated in TypeScript; this side receives flat arrays.
#pragma once

#include <cstdint>
#include <vector>

namespace chronoql {

struct DenseLayer {
  uint32_t inputs = 0;
  uint32_t outputs = 0;
  std::vector<float> weights;  // outputs x inputs, row-major (PyTorch Linear layout)
  std::vector<float> bias;     // outputs
  bool relu = false;           // activation after this layer (never on the last one)
};

class Classifier {
 public:
  // Throws std::invalid_argument (naming the field) on inconsistent shapes,
  // non-finite parameters or non-positive scales.
  Classifier(uint32_t featureCount, std::vector<float> mean, std::vector<float> scale, std::vector<DenseLayer> layers);

  uint32_t featureCount() const { return featureCount_; }
  uint32_t classCount() const { return layers_.back().outputs; }

  // probabilities: batch x classCount. Rows are independent and split across
  // the thread pool for large batches. Accumulates in double so results agree
  // with the TypeScript reference to ~1e-7.
  void score(const float* features, uint32_t batch, float* probabilities) const;

 private:
  void scoreRow(const float* features, float* probabilities, std::vector<double>& a, std::vector<double>& b) const;

  uint32_t featureCount_;
  std::vector<float> mean_;
  std::vector<float> scale_;
  std::vector<DenseLayer> layers_;
  uint32_t widest_ = 0;
};

}  // namespace chronoql
