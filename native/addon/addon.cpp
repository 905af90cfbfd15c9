// N-API bindings of chronoql_native. The TypeScript wrapper in src/native/
// adds friendlier validation and types; these bindings re-check everything
// they read, because the module can also be required directly.
#include <napi.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "../core/classifier.h"
#include "../core/fusion.h"
#include "../core/simd.h"
#include "../core/thread_pool.h"
#include "../core/vector_index.h"
#include "../cuda/cuda_backend.h"
#include "napi_helpers.h"

namespace chronoql::napi {
namespace {

struct AddonData {
  Napi::FunctionReference vectorIndexConstructor;
};

DevicePreference parseDevice(Napi::Env env, const Napi::Value& value) {
  if (value.IsUndefined()) return DevicePreference::Auto;
  const std::string device = stringArgument(env, value, "device");
  if (device == "auto") return DevicePreference::Auto;
  if (device == "cpu") return DevicePreference::Cpu;
  if (device == "cuda") return DevicePreference::Cuda;
  throwRange(env, "device must be 'auto', 'cpu' or 'cuda'");
}

Napi::Object searchResultsToJs(Napi::Env env, SearchResults& results) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("k", Napi::Number::New(env, results.k));
  out.Set("ids", toTypedArray(env, results.ids));
  out.Set("scores", toTypedArray(env, results.scores));
  out.Set("counts", toTypedArray(env, results.counts));
  return out;
}

// ---------------------------------------------------------------------------
// VectorIndex

class VectorIndexWrap final : public Napi::ObjectWrap<VectorIndexWrap> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "NativeVectorIndex",
                       {
                           InstanceMethod<&VectorIndexWrap::addBatch>("addBatch"),
                           InstanceMethod<&VectorIndexWrap::remove>("remove"),
                           InstanceMethod<&VectorIndexWrap::invalidate>("invalidate"),
                           InstanceMethod<&VectorIndexWrap::search>("search"),
                           InstanceMethod<&VectorIndexWrap::searchBlended>("searchBlended"),
                           InstanceMethod<&VectorIndexWrap::save>("save"),
                           InstanceMethod<&VectorIndexWrap::measureStreamSeconds>("measureStreamSeconds"),
                           InstanceMethod<&VectorIndexWrap::size>("size"),
                           InstanceMethod<&VectorIndexWrap::memoryBytes>("memoryBytes"),
                           InstanceMethod<&VectorIndexWrap::deviceMemoryBytes>("deviceMemoryBytes"),
                           InstanceMethod<&VectorIndexWrap::deviceFootprint>("deviceFootprint"),
                           InstanceMethod<&VectorIndexWrap::describe>("describe"),
                           InstanceMethod<&VectorIndexWrap::close>("close"),
                       });
  }

  // new NativeVectorIndex(dimension, storage, metric, device), or internally
  // with an External holding an index produced by load().
  explicit VectorIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<VectorIndexWrap>(info) {
    Napi::Env env = info.Env();
    if (info.Length() == 1 && info[0].IsExternal()) {
      auto* loaded = info[0].As<Napi::External<std::shared_ptr<VectorIndex>>>().Data();
      index_ = *loaded;
      delete loaded;
      return;
    }
    guarded(env, [&]() -> Napi::Value {
      const uint32_t dimension = integerArgument(env, argument(info, 0), "dimension", 1, kMaxDimension);
      const std::string storage = stringArgument(env, argument(info, 1), "storage");
      if (storage != "fp32" && storage != "fp16") throwRange(env, "storage must be 'fp32' or 'fp16'");
      const std::string metric = stringArgument(env, argument(info, 2), "metric");
      if (metric != "cosine" && metric != "ip") throwRange(env, "metric must be 'cosine' or 'ip'");
      const DevicePreference device = parseDevice(env, argument(info, 3));
      index_ = std::make_shared<VectorIndex>(dimension, storage == "fp16" ? Storage::Fp16 : Storage::Fp32,
                                             metric == "ip" ? Metric::InnerProduct : Metric::Cosine, device);
      return env.Undefined();
    });
  }

 private:
  // addBatch(ids: Uint32Array, vectors: Float32Array, validFrom: Int32Array,
  //          validTo: Int32Array) -> Promise<number of live rows>
  // The buffers are read on the worker thread (no copy on the JS thread); the
  // caller must not modify them until the promise settles.
  Napi::Value addBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      auto ids = typedArray<uint32_t>(env, argument(info, 0), "ids");
      auto vectors = typedArray<float>(env, argument(info, 1), "vectors");
      auto validFrom = typedArray<int32_t>(env, argument(info, 2), "validFrom");
      auto validTo = typedArray<int32_t>(env, argument(info, 3), "validTo");
      const size_t count = ids.ElementLength();
      const size_t d = live(env)->dimension();
      if (vectors.ElementLength() != count * d) {
        throwRange(env, "vectors must hold ids.length x dimension = " + std::to_string(count * d) + " floats, got " +
                            std::to_string(vectors.ElementLength()));
      }
      if (validFrom.ElementLength() != count) throwRange(env, "validFrom must have one entry per id");
      if (validTo.ElementLength() != count) throwRange(env, "validTo must have one entry per id");
      auto index = live(env);
      const uint32_t* idData = ids.Data();
      const float* vectorData = vectors.Data();
      const int32_t* fromData = validFrom.Data();
      const int32_t* toData = validTo.Data();
      return PromiseTask<size_t>::start(
          env,
          [=]() {
            index->add(idData, vectorData, fromData, toData, count);
            return index->size();
          },
          [](Napi::Env e, size_t& size) -> Napi::Value { return Napi::Number::New(e, static_cast<double>(size)); },
          {info.This(), ids, vectors, validFrom, validTo});
    });
  }

  // remove(ids: Uint32Array) -> Promise<number removed>
  Napi::Value remove(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      auto ids = copyOf(typedArray<uint32_t>(env, argument(info, 0), "ids"));
      auto index = live(env);
      return PromiseTask<size_t>::start(
          env, [index, ids]() { return index->remove(ids.data(), ids.size()); },
          [](Napi::Env e, size_t& n) -> Napi::Value { return Napi::Number::New(e, static_cast<double>(n)); },
          {info.This()});
    });
  }

  // invalidate(ids: Uint32Array, validTo: Int32Array) -> Promise<number changed>
  Napi::Value invalidate(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      auto ids = copyOf(typedArray<uint32_t>(env, argument(info, 0), "ids"));
      auto validTo = copyOf(typedArray<int32_t>(env, argument(info, 1), "validTo"));
      if (validTo.size() != ids.size()) throwRange(env, "validTo must have one entry per id");
      auto index = live(env);
      return PromiseTask<size_t>::start(
          env, [index, ids, validTo]() { return index->invalidate(ids.data(), validTo.data(), ids.size()); },
          [](Napi::Env e, size_t& n) -> Napi::Value { return Napi::Number::New(e, static_cast<double>(n)); },
          {info.This()});
    });
  }

  struct SearchArguments {
    std::vector<float> queries;
    std::vector<float> secondQueries;
    std::vector<float> weights;
    uint32_t queryCount = 0;
    uint32_t k = 0;
    std::vector<int32_t> asOf;
    std::vector<uint32_t> excludeOffsets;
    std::vector<uint32_t> excludeIds;
    SearchPlacement placement = SearchPlacement::Preferred;
  };

  // Reads the queries at info[queriesAt], k at info[kAt], then asOf, the
  // optional exclusion CSR and the optional onHost flag right after k. Copies
  // them: query batches are small, and a copy frees the caller from keeping
  // the buffers unchanged.
  SearchArguments readSearchArguments(const Napi::CallbackInfo& info, size_t queriesAt, size_t kAt) {
    Napi::Env env = info.Env();
    SearchArguments out;
    auto queries = typedArray<float>(env, argument(info, queriesAt), "queries");
    const size_t d = live(env)->dimension();
    if (queries.ElementLength() == 0 || queries.ElementLength() % d != 0) {
      throwRange(env, "queries must hold a whole, non-zero number of vectors of dimension " + std::to_string(d));
    }
    if (queries.ElementLength() / d > kMaxQueriesPerCall) {
      throwRange(env, "queries: at most " + std::to_string(kMaxQueriesPerCall) + " queries per call");
    }
    out.queryCount = static_cast<uint32_t>(queries.ElementLength() / d);
    out.queries = copyOf(queries);
    out.k = integerArgument(env, argument(info, kAt), "k", 1, kMaxK);
    auto asOf = typedArray<int32_t>(env, argument(info, kAt + 1), "asOf");
    if (asOf.ElementLength() != out.queryCount) throwRange(env, "asOf must have one day per query");
    out.asOf = copyOf(asOf);
    const Napi::Value offsets = argument(info, kAt + 2);
    const Napi::Value excluded = argument(info, kAt + 3);
    if (!isNullish<uint32_t>(offsets) || !isNullish<uint32_t>(excluded)) {
      out.excludeOffsets = copyOf(typedArray<uint32_t>(env, offsets, "excludeOffsets"));
      out.excludeIds = copyOf(typedArray<uint32_t>(env, excluded, "excludeIds"));
      if (out.excludeOffsets.size() != out.queryCount + 1u) throwRange(env, "excludeOffsets must have queries + 1 entries");
      if (out.excludeOffsets[0] != 0) throwRange(env, "excludeOffsets must start at 0");
      for (uint32_t q = 0; q < out.queryCount; ++q) {
        if (out.excludeOffsets[q + 1] < out.excludeOffsets[q]) throwRange(env, "excludeOffsets must be non-decreasing");
      }
      if (out.excludeOffsets[out.queryCount] != out.excludeIds.size()) {
        throwRange(env, "excludeOffsets must end at excludeIds.length");
      }
    }
    const Napi::Value onHost = argument(info, kAt + 4);
    if (!onHost.IsUndefined()) {
      if (!onHost.IsBoolean()) throwType(env, "onHost must be a boolean");
      if (onHost.As<Napi::Boolean>().Value()) out.placement = SearchPlacement::Host;
    }
    return out;
  }

  // search(queries: Float32Array, k, asOf: Int32Array, excludeOffsets?, excludeIds?, onHost?)
  //   -> Promise<{k, ids: Uint32Array, scores: Float32Array, counts: Uint32Array}>
  Napi::Value search(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      auto args = std::make_shared<SearchArguments>(readSearchArguments(info, 0, 1));
      auto index = live(env);
      const CpuKernel kernel = activeCpuKernel();  // reads the environment: JS thread only
      return PromiseTask<SearchResults>::start(
          env,
          [index, args, kernel]() {
            return index->search(args->queries.data(), args->queryCount, args->k, args->asOf.data(),
                                 args->excludeOffsets.empty() ? nullptr : args->excludeOffsets.data(),
                                 args->excludeIds.data(), kernel, args->placement);
          },
          [](Napi::Env e, SearchResults& r) -> Napi::Value { return searchResultsToJs(e, r); }, {info.This()});
    });
  }

  // searchBlended(first: Float32Array, second: Float32Array, omega: Float32Array,
  //               k, asOf, excludeOffsets?, excludeIds?, onHost?) -> Promise<same as search>
  Napi::Value searchBlended(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      SearchArguments args = readSearchArguments(info, 0, 3);
      auto second = typedArray<float>(env, argument(info, 1), "secondQueries");
      auto omega = typedArray<float>(env, argument(info, 2), "omega");
      if (second.ElementLength() != args.queries.size()) throwRange(env, "secondQueries must have the same length as queries");
      if (omega.ElementLength() != args.queryCount) throwRange(env, "omega must have one weight per query");
      args.secondQueries = copyOf(second);
      args.weights = copyOf(omega);
      auto shared = std::make_shared<SearchArguments>(std::move(args));
      auto index = live(env);
      const CpuKernel kernel = activeCpuKernel();
      return PromiseTask<SearchResults>::start(
          env,
          [index, shared, kernel]() {
            return index->searchBlended(shared->queries.data(), shared->secondQueries.data(), shared->weights.data(),
                                        shared->queryCount, shared->k, shared->asOf.data(),
                                        shared->excludeOffsets.empty() ? nullptr : shared->excludeOffsets.data(),
                                        shared->excludeIds.data(), kernel, shared->placement);
          },
          [](Napi::Env e, SearchResults& r) -> Napi::Value { return searchResultsToJs(e, r); }, {info.This()});
    });
  }

  Napi::Value save(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      const std::string path = stringArgument(env, argument(info, 0), "path");
      if (path.empty()) throwRange(env, "path must not be empty");
      auto index = live(env);
      return PromiseTask<bool>::start(
          env,
          [index, path]() {
            index->save(path);
            return true;
          },
          [](Napi::Env e, bool&) -> Napi::Value { return e.Undefined(); }, {info.This()});
    });
  }

  Napi::Value measureStreamSeconds(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto index = live(env);
    return PromiseTask<double>::start(
        env, [index]() { return index->measureStreamSeconds(); },
        [](Napi::Env e, double& seconds) -> Napi::Value { return Napi::Number::New(e, seconds); }, {info.This()});
  }

  Napi::Value size(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(live(info.Env())->size()));
  }
  Napi::Value memoryBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(live(info.Env())->memoryBytes()));
  }
  Napi::Value deviceMemoryBytes(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(live(info.Env())->deviceMemoryBytes()));
  }

  // deviceFootprint() -> {requiredBytes, heldBytes}
  Napi::Value deviceFootprint(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const DeviceFootprint footprint = live(env)->deviceFootprint();
    Napi::Object out = Napi::Object::New(env);
    out.Set("requiredBytes", Napi::Number::New(env, static_cast<double>(footprint.requiredBytes)));
    out.Set("heldBytes", Napi::Number::New(env, static_cast<double>(footprint.heldBytes)));
    return out;
  }

  // describe() -> {dimension, storage, metric, backend}
  Napi::Value describe(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const auto& index = live(env);
    const FlatVectorStore& store = index->store();
    Napi::Object out = Napi::Object::New(env);
    out.Set("dimension", Napi::Number::New(env, store.dimension()));
    out.Set("storage", Napi::String::New(env, store.storage() == Storage::Fp16 ? "fp16" : "fp32"));
    out.Set("metric", Napi::String::New(env, store.metric() == Metric::Cosine ? "cosine" : "ip"));
    out.Set("backend", Napi::String::New(env, index->backendName()));
    return out;
  }

  // Releases this wrapper's hold on the index. Work already queued keeps its
  // own reference, so memory is freed when the last in-flight call finishes.
  Napi::Value close(const Napi::CallbackInfo& info) {
    index_.reset();
    return info.Env().Undefined();
  }

  // The index, or a JS error when close() was called.
  const std::shared_ptr<VectorIndex>& live(Napi::Env env) {
    if (!index_) throw Napi::Error::New(env, "the VectorIndex is closed");
    return index_;
  }

  std::shared_ptr<VectorIndex> index_;
};

// loadVectorIndex(path, device) -> Promise<NativeVectorIndex>
Napi::Value loadVectorIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    const std::string path = stringArgument(env, argument(info, 0), "path");
    const DevicePreference device = parseDevice(env, argument(info, 1));
    return PromiseTask<std::shared_ptr<VectorIndex>>::start(
        env, [path, device]() { return std::shared_ptr<VectorIndex>(VectorIndex::load(path, device)); },
        [](Napi::Env e, std::shared_ptr<VectorIndex>& loaded) -> Napi::Value {
          auto* holder = new std::shared_ptr<VectorIndex>(loaded);
          auto* data = e.GetInstanceData<AddonData>();
          return data->vectorIndexConstructor.New({Napi::External<std::shared_ptr<VectorIndex>>::New(e, holder)});
        });
  });
}

// ---------------------------------------------------------------------------
// Classifier

class ClassifierWrap final : public Napi::ObjectWrap<ClassifierWrap> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "NativeClassifier",
                       {
                           InstanceMethod<&ClassifierWrap::scoreBatch>("scoreBatch"),
                           InstanceMethod<&ClassifierWrap::featureCount>("featureCount"),
                           InstanceMethod<&ClassifierWrap::classCount>("classCount"),
                       });
  }

  // new NativeClassifier(featureCount, mean: Float32Array, std: Float32Array,
  //   layerSizes: Uint32Array [inputs, out0, out1, ...], weights: Float32Array,
  //   biases: Float32Array, relu: Uint8Array (one flag per layer))
  explicit ClassifierWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ClassifierWrap>(info) {
    Napi::Env env = info.Env();
    guarded(env, [&]() -> Napi::Value {
      const uint32_t features = integerArgument(env, argument(info, 0), "featureCount", 1, 1u << 20);
      auto mean = copyOf(typedArray<float>(env, argument(info, 1), "mean"));
      auto scale = copyOf(typedArray<float>(env, argument(info, 2), "std"));
      auto sizes = copyOf(typedArray<uint32_t>(env, argument(info, 3), "layerSizes"));
      auto weights = typedArray<float>(env, argument(info, 4), "weights");
      auto biases = typedArray<float>(env, argument(info, 5), "biases");
      auto relu = copyOf(typedArray<uint8_t>(env, argument(info, 6), "relu"));
      if (sizes.size() < 2 || sizes[0] != features) throwRange(env, "layerSizes must start with featureCount and list each layer's outputs");
      if (relu.size() != sizes.size() - 1) throwRange(env, "relu must have one flag per layer");
      std::vector<DenseLayer> layers(sizes.size() - 1);
      size_t weightOffset = 0;
      size_t biasOffset = 0;
      for (size_t l = 0; l < layers.size(); ++l) {
        DenseLayer& layer = layers[l];
        layer.inputs = sizes[l];
        layer.outputs = sizes[l + 1];
        const size_t weightCount = static_cast<size_t>(layer.inputs) * layer.outputs;
        if (layer.outputs == 0 || weightOffset + weightCount > weights.ElementLength() ||
            biasOffset + layer.outputs > biases.ElementLength()) {
          throwRange(env, "weights/biases are shorter than layerSizes requires");
        }
        layer.weights.assign(weights.Data() + weightOffset, weights.Data() + weightOffset + weightCount);
        layer.bias.assign(biases.Data() + biasOffset, biases.Data() + biasOffset + layer.outputs);
        layer.relu = relu[l] != 0;
        weightOffset += weightCount;
        biasOffset += layer.outputs;
      }
      if (weightOffset != weights.ElementLength() || biasOffset != biases.ElementLength()) {
        throwRange(env, "weights/biases are longer than layerSizes requires");
      }
      classifier_ = std::make_shared<Classifier>(features, std::move(mean), std::move(scale), std::move(layers));
      return env.Undefined();
    });
  }

 private:
  // scoreBatch(features: Float32Array [batch x featureCount]) -> Promise<Float32Array [batch x classes]>
  Napi::Value scoreBatch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return guarded(env, [&]() -> Napi::Value {
      auto features = typedArray<float>(env, argument(info, 0), "features");
      const size_t width = classifier_->featureCount();
      if (features.ElementLength() % width != 0) {
        throwRange(env, "features must hold whole rows of " + std::to_string(width) + " values");
      }
      const size_t batch = features.ElementLength() / width;
      if (batch > (1u << 26)) throwRange(env, "features: batch too large");
      auto input = std::make_shared<std::vector<float>>(copyOf(features));
      auto classifier = classifier_;
      return PromiseTask<std::vector<float>>::start(
          env,
          [classifier, input, batch]() {
            std::vector<float> out(batch * classifier->classCount());
            classifier->score(input->data(), static_cast<uint32_t>(batch), out.data());
            return out;
          },
          [](Napi::Env e, std::vector<float>& out) -> Napi::Value { return toTypedArray(e, out); }, {info.This()});
    });
  }

  Napi::Value featureCount(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), classifier_->featureCount()); }
  Napi::Value classCount(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), classifier_->classCount()); }

  std::shared_ptr<Classifier> classifier_;
};

// ---------------------------------------------------------------------------
// Fusion

// fuseArr(first: Float32Array, second: Float32Array, omega: Float32Array) -> Promise<Float32Array>
Napi::Value fuseArr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    auto first = copyOf(typedArray<float>(env, argument(info, 0), "first"));
    auto second = copyOf(typedArray<float>(env, argument(info, 1), "second"));
    auto omega = copyOf(typedArray<float>(env, argument(info, 2), "omega"));
    if (second.size() != first.size()) throwRange(env, "second must have the same length as first");
    if (omega.empty() || first.size() % omega.size() != 0) throwRange(env, "first must hold omega.length equal rows");
    auto data = std::make_shared<std::vector<std::vector<float>>>(
        std::vector<std::vector<float>>{std::move(first), std::move(second), std::move(omega)});
    return PromiseTask<std::vector<float>>::start(
        env,
        [data]() {
          const auto& f = (*data)[0];
          const auto& w = (*data)[2];
          std::vector<float> out(f.size());
          fuseArrScores(f.data(), (*data)[1].data(), w.data(), static_cast<uint32_t>(w.size()),
                        static_cast<uint32_t>(f.size() / w.size()), out.data());
          return out;
        },
        [](Napi::Env e, std::vector<float>& out) -> Napi::Value { return toTypedArray(e, out); });
  });
}

std::vector<uint32_t> readOffsets(Napi::Env env, const Napi::Value& value, size_t idCount) {
  auto offsets = copyOf(typedArray<uint32_t>(env, value, "offsets"));
  if (offsets.empty() || offsets[0] != 0 || offsets.back() != idCount) {
    throwRange(env, "offsets must start at 0 and end at ids.length");
  }
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) throwRange(env, "offsets must be non-decreasing");
  }
  return offsets;
}

Napi::Value rankingToJs(Napi::Env env, FusedRanking& ranking) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("ids", toTypedArray(env, ranking.ids));
  out.Set("scores", toTypedArray(env, ranking.scores));
  return out;
}

// weightedSum(offsets: Uint32Array, ids: Uint32Array, scores: Float64Array, weights: Float64Array)
Napi::Value weightedSum(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    auto ids = copyOf(typedArray<uint32_t>(env, argument(info, 1), "ids"));
    auto offsets = readOffsets(env, argument(info, 0), ids.size());
    auto scores = copyOf(typedArray<double>(env, argument(info, 2), "scores"));
    auto weights = copyOf(typedArray<double>(env, argument(info, 3), "weights"));
    if (scores.size() != ids.size()) throwRange(env, "scores must have one entry per id");
    if (weights.size() != offsets.size() - 1) throwRange(env, "weights must have one entry per list");
    return PromiseTask<FusedRanking>::start(
        env,
        [offsets, ids, scores, weights]() {
          return weightedSumFusion(offsets.data(), static_cast<uint32_t>(offsets.size() - 1), ids.data(), scores.data(),
                                   weights.data());
        },
        [](Napi::Env e, FusedRanking& r) -> Napi::Value { return rankingToJs(e, r); });
  });
}

// rrf(offsets: Uint32Array, ids: Uint32Array, k: number, weights?: Float64Array)
Napi::Value rrf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guarded(env, [&]() -> Napi::Value {
    auto ids = copyOf(typedArray<uint32_t>(env, argument(info, 1), "ids"));
    auto offsets = readOffsets(env, argument(info, 0), ids.size());
    const Napi::Value kValue = argument(info, 2);
    if (!kValue.IsNumber()) throwType(env, "k must be a number");
    const double k = kValue.As<Napi::Number>().DoubleValue();
    if (!(k >= 0.0) || !std::isfinite(k)) throwRange(env, "k must be a finite number >= 0");
    std::vector<double> weights;
    if (!isNullish<double>(argument(info, 3))) {
      weights = copyOf(typedArray<double>(env, argument(info, 3), "weights"));
      if (weights.size() != offsets.size() - 1) throwRange(env, "weights must have one entry per list");
    }
    return PromiseTask<FusedRanking>::start(
        env,
        [offsets, ids, k, weights]() {
          return reciprocalRankFusion(offsets.data(), static_cast<uint32_t>(offsets.size() - 1), ids.data(), k,
                                      weights.empty() ? nullptr : weights.data());
        },
        [](Napi::Env e, FusedRanking& r) -> Napi::Value { return rankingToJs(e, r); });
  });
}

// ---------------------------------------------------------------------------
// Backend description

Napi::Value backendInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("cudaCompiled", Napi::Boolean::New(env, cudaCompiledIn()));
  Napi::Array devices = Napi::Array::New(env);
  uint32_t i = 0;
  for (const CudaDeviceInfo& device : cudaDevices()) {
    Napi::Object d = Napi::Object::New(env);
    d.Set("index", Napi::Number::New(env, device.index));
    d.Set("name", Napi::String::New(env, device.name));
    d.Set("totalMemoryBytes", Napi::Number::New(env, static_cast<double>(device.totalMemoryBytes)));
    d.Set("freeMemoryBytes", Napi::Number::New(env, static_cast<double>(device.freeMemoryBytes)));
    d.Set("computeCapability", Napi::String::New(env, std::to_string(device.computeMajor) + "." + std::to_string(device.computeMinor)));
    d.Set("multiprocessors", Napi::Number::New(env, device.multiprocessors));
    devices.Set(i++, d);
  }
  out.Set("devices", devices);
  if (i == 0) out.Set("cudaUnavailableReason", Napi::String::New(env, cudaUnavailableReason()));
  out.Set("cpuKernel", Napi::String::New(env, cpuKernelName(activeCpuKernel())));
  out.Set("cpuThreads", Napi::Number::New(env, static_cast<double>(ThreadPool::shared().concurrency())));
  out.Set("maxK", Napi::Number::New(env, kMaxK));
  out.Set("cudaMaxK", Napi::Number::New(env, kCudaMaxK));
  return out;
}

// deviceMemory() -> {freeBytes, totalBytes} of the first CUDA device, now
// (zeros without one).
Napi::Value deviceMemory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const CudaMemory memory = cudaDeviceMemory(0);
  Napi::Object out = Napi::Object::New(env);
  out.Set("freeBytes", Napi::Number::New(env, static_cast<double>(memory.freeBytes)));
  out.Set("totalBytes", Napi::Number::New(env, static_cast<double>(memory.totalBytes)));
  return out;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  // Start the worker pool now, on the JS thread, which is the only thread
  // that reads CHRONOQL_THREADS from the environment.
  ThreadPool::shared();
  auto* data = new AddonData();
  env.SetInstanceData(data);
  Napi::Function vectorIndex = VectorIndexWrap::define(env);
  data->vectorIndexConstructor = Napi::Persistent(vectorIndex);
  exports.Set("NativeVectorIndex", vectorIndex);
  exports.Set("NativeClassifier", ClassifierWrap::define(env));
  exports.Set("loadVectorIndex", Napi::Function::New(env, loadVectorIndex));
  exports.Set("fuseArr", Napi::Function::New(env, fuseArr));
  exports.Set("weightedSum", Napi::Function::New(env, weightedSum));
  exports.Set("rrf", Napi::Function::New(env, rrf));
  exports.Set("backendInfo", Napi::Function::New(env, backendInfo));
  exports.Set("deviceMemory", Napi::Function::New(env, deviceMemory));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  return exports;
}

}  // namespace
}  // namespace chronoql::napi

static Napi::Object InitChronoqlNative(Napi::Env env, Napi::Object exports) { return chronoql::napi::init(env, exports); }

NODE_API_MODULE(chronoql_native, InitChronoqlNative)
