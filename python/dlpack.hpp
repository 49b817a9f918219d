#pragma once
// The DLPack tensor ABI (dlpack.h, v0.8: the unversioned DLManagedTensor that a "dltensor"
// capsule holds, which PyTorch, CuPy and NumPy all read and write). Declared here because
// Debian ships no dlpack header; the layout is the ABI and must not change.

#include <cstdint>

namespace pleshard::python {

enum DLDeviceType : std::int32_t {
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,  // pinned host memory
  kDLCUDAManaged = 13,
};

struct DLDevice {
  std::int32_t device_type;
  std::int32_t device_id;
};

enum DLDataTypeCode : std::uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// Capsule names: a producer's, and the one a consumer renames it to once it owns the tensor.
inline constexpr const char* k_dltensor = "dltensor";
inline constexpr const char* k_used_dltensor = "used_dltensor";

}  // namespace pleshard::python
