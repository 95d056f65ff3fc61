// lpips_model.h: a user-supplied TorchScript LPIPS network run on RGB24 frame pairs (libtorch only in lpips_model.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace fuseproof::e2e {

/// A TorchScript module whose forward(x, y) takes two float32 [1, 3, H, W] RGB images scaled to [-1, 1] (LPIPS's
/// convention) and returns one distance (a tensor of one element). Runs on the CPU, in inference mode.
class LpipsModel {
 public:
  /// Loads `path`; throws std::runtime_error (one line naming the file) when it cannot be read or is not TorchScript.
  explicit LpipsModel(const std::string& path);
  ~LpipsModel();
  LpipsModel(const LpipsModel&) = delete;
  LpipsModel& operator=(const LpipsModel&) = delete;

  /// The distance of two RGB24 frames; throws std::runtime_error when the model fails or returns other than one value.
  double distance(const uint8_t* a, const uint8_t* b, int width, int height);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fuseproof::e2e
