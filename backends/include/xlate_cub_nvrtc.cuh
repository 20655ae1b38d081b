// xlate: what <cub/cub.cuh> gives device code, for NVRTC. cub.cuh also pulls in CUB's device-wide algorithms,
// which are host code that NVRTC refuses; a kernel's device code can only use the block-, warp- and
// thread-level parts, which are these.
#pragma once
#include <type_traits>  // what a program got from cub.cuh through the host's <type_traits>
#include <utility>
#include <cub/config.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_shuffle.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <cub/warp/warp_load.cuh>
#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cub/warp/warp_store.cuh>
#include <cub/thread/thread_operators.cuh>
#include <cub/thread/thread_reduce.cuh>
#include <cub/thread/thread_scan.cuh>
#include <cub/iterator/cache_modified_input_iterator.cuh>
#include <cub/util_ptx.cuh>
#ifdef HIP_XLATE_ON_NVIDIA
// a HIP port of a header is compiled in its CUDA includer's context, whose <cub/cub.cuh> lands here: hipCUB's
// namespace is CUB's on NVIDIA (an alias may be declared again for the same namespace)
namespace hipcub = cub;
#endif
