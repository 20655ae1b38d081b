// xlate: ATen's TensorInfo for the device compiler (ATen/cuda/detail/TensorInfo.cuh and IndexUtils.cuh are not
// on the gate's include path). Only what kernels use: the struct, with the layout the spec's record gives it
// (xlate/data/library_types.yaml: a data pointer, 25 sizes, 25 strides, the rank), and IndexToOffset, the offset
// of a linear element index in the tensor's strided layout (the innermost dimension varies fastest).
#pragma once

namespace at { namespace cuda { namespace detail {

constexpr int MAX_TENSORINFO_DIMS = 25;

template <typename T, typename IndexType>
struct TensorInfo {
  T* data;
  IndexType sizes[MAX_TENSORINFO_DIMS];
  IndexType strides[MAX_TENSORINFO_DIMS];
  int dims;

  __host__ __device__ bool isContiguous() const { return dims == 1 && strides[0] == 1; }
};

// Dims: the rank when the kernel fixes it at compile time; -1 reads it from the struct
template <typename T, typename IndexType, int Dims>
struct IndexToOffset {
  static __host__ __device__ IndexType get(IndexType linear, const TensorInfo<T, IndexType>& info) {
    const int rank = Dims >= 0 ? Dims : info.dims;
    IndexType offset = 0;
    for (int d = rank - 1; d > 0; --d) {  // peel the innermost dimensions off the linear index
      offset += (linear % info.sizes[d]) * info.strides[d];
      linear /= info.sizes[d];
    }
    return offset + linear * info.strides[0];
  }
};

}}}  // namespace at::cuda::detail
