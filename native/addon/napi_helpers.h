// Argument checking and promise plumbing shared by the bindings. Every value
// coming from JavaScript is checked here before native code reads it; a bad
// type or length becomes a thrown JS error naming the argument.
#pragma once

#include <napi.h>

#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace chronoql::napi {

[[noreturn]] inline void throwType(Napi::Env env, const std::string& message) {
  throw Napi::TypeError::New(env, message);
}
[[noreturn]] inline void throwRange(Napi::Env env, const std::string& message) {
  throw Napi::RangeError::New(env, message);
}

// Runs a binding body, turning C++ standard exceptions into JS errors (N-API's
// own C++ wrapper only converts Napi::Error; anything else would terminate
// the process).
template <typename Body>
Napi::Value guarded(Napi::Env env, Body&& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Napi::RangeError::New(env, "out of memory");
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

template <typename T>
struct TypedArrayTraits;
template <>
struct TypedArrayTraits<float> {
  static constexpr napi_typedarray_type kind = napi_float32_array;
  static constexpr const char* name = "Float32Array";
};
template <>
struct TypedArrayTraits<double> {
  static constexpr napi_typedarray_type kind = napi_float64_array;
  static constexpr const char* name = "Float64Array";
};
template <>
struct TypedArrayTraits<uint32_t> {
  static constexpr napi_typedarray_type kind = napi_uint32_array;
  static constexpr const char* name = "Uint32Array";
};
template <>
struct TypedArrayTraits<int32_t> {
  static constexpr napi_typedarray_type kind = napi_int32_array;
  static constexpr const char* name = "Int32Array";
};
template <>
struct TypedArrayTraits<uint8_t> {
  static constexpr napi_typedarray_type kind = napi_uint8_array;
  static constexpr const char* name = "Uint8Array";
};

template <typename T>
Napi::TypedArrayOf<T> typedArray(Napi::Env env, const Napi::Value& value, const char* argument) {
  if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != TypedArrayTraits<T>::kind) {
    throwType(env, std::string(argument) + " must be a " + TypedArrayTraits<T>::name);
  }
  return value.As<Napi::TypedArrayOf<T>>();
}

template <typename T>
bool isNullish(const Napi::Value& value) {
  return value.IsUndefined() || value.IsNull();
}

inline Napi::Value argument(const Napi::CallbackInfo& info, size_t index) {
  return index < info.Length() ? info[index] : info.Env().Undefined();
}

inline uint32_t integerArgument(Napi::Env env, const Napi::Value& value, const char* argument, uint32_t min,
                                uint32_t max) {
  if (!value.IsNumber()) throwType(env, std::string(argument) + " must be a number");
  const double number = value.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(number) || std::floor(number) != number || number < min || number > max) {
    throwRange(env, std::string(argument) + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return static_cast<uint32_t>(number);
}

inline std::string stringArgument(Napi::Env env, const Napi::Value& value, const char* argument) {
  if (!value.IsString()) throwType(env, std::string(argument) + " must be a string");
  return value.As<Napi::String>().Utf8Value();
}

template <typename T>
std::vector<T> copyOf(const Napi::TypedArrayOf<T>& array) {
  return std::vector<T>(array.Data(), array.Data() + array.ElementLength());
}

// An AsyncWorker resolving a promise: `work` runs on a libuv thread and
// returns a value of type Result; `convert` turns it into JS on the main
// thread. References in `keepAlive` pin JS objects (input buffers, the index
// wrapper) until the promise settles.
template <typename Result>
class PromiseTask final : public Napi::AsyncWorker {
 public:
  using Work = std::function<Result()>;
  using Convert = std::function<Napi::Value(Napi::Env, Result&)>;

  static Napi::Promise start(Napi::Env env, Work work, Convert convert, const std::vector<Napi::Value>& keepAlive = {}) {
    auto* task = new PromiseTask(env, std::move(work), std::move(convert));
    for (const auto& value : keepAlive) {
      if (value.IsObject()) task->keepAlive_.push_back(Napi::Persistent(value.As<Napi::Object>()));
    }
    Napi::Promise promise = task->deferred_.Promise();
    task->Queue();
    return promise;
  }

 private:
  PromiseTask(Napi::Env env, Work work, Convert convert)
      : Napi::AsyncWorker(env, "chronoql_native"),
        deferred_(Napi::Promise::Deferred::New(env)),
        work_(std::move(work)),
        convert_(std::move(convert)) {}

  void Execute() override {
    try {
      result_ = work_();
    } catch (const std::bad_alloc&) {
      SetError("out of memory");
    } catch (const std::exception& e) {
      SetError(e.what());
    } catch (...) {
      SetError("unknown native error");
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    try {
      deferred_.Resolve(convert_(env, result_));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    } catch (const std::exception& e) {
      deferred_.Reject(Napi::Error::New(env, e.what()).Value());
    }
  }

  void OnError(const Napi::Error& error) override {
    Napi::HandleScope scope(Env());
    deferred_.Reject(error.Value());
  }

  Napi::Promise::Deferred deferred_;
  Work work_;
  Convert convert_;
  Result result_{};
  std::vector<Napi::ObjectReference> keepAlive_;
};

template <typename T>
Napi::TypedArrayOf<T> toTypedArray(Napi::Env env, const std::vector<T>& values) {
  auto out = Napi::TypedArrayOf<T>::New(env, values.size());
  if (!values.empty()) std::memcpy(out.Data(), values.data(), values.size() * sizeof(T));
  return out;
}

}  // namespace chronoql::napi
