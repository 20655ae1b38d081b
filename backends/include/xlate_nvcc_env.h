// xlate: what nvcc gives every .cu file without a single #include, for NVRTC, which gives none of it.
// nvcc implicitly includes cuda_runtime.h, which pulls in the C library's <math.h>, <limits.h>, <stdio.h>...:
// real kernels use M_PI, INFINITY, FLT_MAX, INT_MAX, int32_t, std::max and std::sqrt without including anything.
// Pre-included (--pre-include) on the NVRTC route; kept small (it costs about 0.1 s per compile).
#pragma once
// libcu++'s <cuda/std/cmath> (pulled in by <complex>, <cmath> users) redefines INFINITY and NAN below with the
// same values: a warning on every such compile that says nothing about the user's code
#pragma nv_diag_suppress 47

// -- <cstdint>, <climits>: libcu++'s NVRTC definitions, which CUDA's own headers (cooperative_groups.h...) use too,
// so that nothing is declared twice in two ways (int64_t is long long there, as it must stay).
#include <cuda/std/climits>
#include <cuda/std/cstdint>
typedef decltype((char*)0 - (char*)0) ptrdiff_t;

// -- <cfloat> / <float.h> ---------------------------------------------------------------------------------------
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define FLT_DIG 6
#define FLT_MIN_EXP (-125)
#define FLT_MAX_EXP 128
#define FLT_MIN_10_EXP (-37)
#define FLT_MAX_10_EXP 38
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7F
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45F
#define DBL_MANT_DIG 53
#define DBL_DIG 15
#define DBL_MIN_EXP (-1021)
#define DBL_MAX_EXP 1024
#define DBL_MIN_10_EXP (-307)
#define DBL_MAX_10_EXP 308
#define DBL_MAX ((double)1.79769313486231570814527423731704357e+308L)
#define DBL_MIN ((double)2.22507385850720138309023271733240406e-308L)
#define DBL_EPSILON ((double)2.22044604925031308084726333618164062e-16L)
#define DBL_TRUE_MIN ((double)4.94065645841246544176568792868221372e-324L)

// -- <cmath> / <math.h> (glibc's constants) --------------------------------------------------------------------
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define INFINITY __builtin_bit_cast(float, 0x7f800000U)
#define NAN __builtin_bit_cast(float, 0x7fc00000U)
#define HUGE_VALF INFINITY
#define HUGE_VAL __builtin_bit_cast(double, 0x7ff0000000000000ULL)
#define MAXFLOAT 3.40282346638528859811704183484516925e+38F

namespace std {
using nullptr_t = decltype(nullptr);
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t; using ::size_t; using ::ptrdiff_t;
using ::abs; using ::fabs; using ::sqrt; using ::cbrt; using ::exp; using ::exp2; using ::expm1; using ::log;
using ::log2; using ::log10; using ::log1p; using ::pow; using ::sin; using ::cos; using ::tan; using ::asin;
using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh; using ::tanh; using ::asinh; using ::acosh;
using ::atanh; using ::floor; using ::ceil; using ::round; using ::trunc; using ::fmod; using ::fmin; using ::fmax;
using ::fma; using ::erf; using ::erfc; using ::lgamma; using ::tgamma; using ::hypot; using ::isnan; using ::isinf;
using ::isfinite; using ::signbit; using ::copysign; using ::nearbyint; using ::rint; using ::lrint; using ::llrint;
using ::lround; using ::llround; using ::ldexp; using ::frexp; using ::modf; using ::remainder; using ::remquo;
using ::nextafter; using ::fdim; using ::scalbn; using ::ilogb; using ::logb;
using ::sqrtf; using ::expf; using ::logf; using ::powf; using ::sinf; using ::cosf; using ::tanhf; using ::fabsf;
using ::floorf; using ::ceilf; using ::roundf; using ::fminf; using ::fmaxf; using ::fmaf; using ::erff;

template <class T> __host__ __device__ constexpr const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <class T> __host__ __device__ constexpr const T& max(const T& a, const T& b) { return a < b ? b : a; }
template <class T> __host__ __device__ constexpr void swap(T& a, T& b) { T t = a; a = b; b = t; }

template <class T> struct numeric_limits;
#define XLATE_LIMITS(T, LO, HI, EPS, INF, QNAN, IS_INT) \
  template <> struct numeric_limits<T> { \
    static constexpr bool is_specialized = true; static constexpr bool is_integer = IS_INT; \
    static constexpr bool is_signed = (T)(-1) < (T)0; \
    __host__ __device__ static constexpr T min() { return IS_INT ? (T)(LO) : (T)(EPS##_MIN_NORMAL); } \
    __host__ __device__ static constexpr T max() { return (T)(HI); } \
    __host__ __device__ static constexpr T lowest() { return (T)(LO); } \
    __host__ __device__ static constexpr T epsilon() { return (T)(EPS##_EPS); } \
    __host__ __device__ static constexpr T infinity() { return (T)(INF); } \
    __host__ __device__ static constexpr T quiet_NaN() { return (T)(QNAN); } };
#define XLATE_INT_MIN_NORMAL 0
#define XLATE_INT_EPS 0
#define XLATE_FLT_MIN_NORMAL FLT_MIN
#define XLATE_FLT_EPS FLT_EPSILON
#define XLATE_DBL_MIN_NORMAL DBL_MIN
#define XLATE_DBL_EPS DBL_EPSILON
XLATE_LIMITS(float, -FLT_MAX, FLT_MAX, XLATE_FLT, INFINITY, NAN, false)
XLATE_LIMITS(double, -DBL_MAX, DBL_MAX, XLATE_DBL, HUGE_VAL, __builtin_bit_cast(double, 0x7ff8000000000000ULL), false)
XLATE_LIMITS(char, CHAR_MIN, CHAR_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(signed char, SCHAR_MIN, SCHAR_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(unsigned char, 0, UCHAR_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(short, SHRT_MIN, SHRT_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(unsigned short, 0, USHRT_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(int, INT_MIN, INT_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(unsigned int, 0, UINT_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(long, LONG_MIN, LONG_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(unsigned long, 0, ULONG_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(long long, LLONG_MIN, LLONG_MAX, XLATE_INT, 0, 0, true)
XLATE_LIMITS(unsigned long long, 0, ULLONG_MAX, XLATE_INT, 0, 0, true)
#undef XLATE_LIMITS
}  // namespace std

// -- host-only namespaces a file may name at file scope (`using namespace std::chrono;`): their headers are
// host code, which the device slice drops; the names alone keep such a file compiling. The clock and duration
// templates are declared, never defined: a file-scope `typedef high_resolution_clock myclock;` or
// `typedef duration<float> secs;` that only host code uses then still compiles.
namespace std {
template <long long Num, long long Den = 1> struct __xlate_ratio;  // not `ratio`: a file's own stays unambiguous
typedef __xlate_ratio<1, 1000000000> nano; typedef __xlate_ratio<1, 1000000> micro;
typedef __xlate_ratio<1, 1000> milli;
namespace chrono {
template <class Rep, class Period = __xlate_ratio<1>> class duration;
template <class Clock, class Duration = void> class time_point;
struct system_clock; struct steady_clock; typedef steady_clock high_resolution_clock;
typedef duration<long long, nano> nanoseconds; typedef duration<long long, micro> microseconds;
typedef duration<long long, milli> milliseconds; typedef duration<long long> seconds;
}  // namespace chrono
}  // namespace std

// -- glibc's <sys/types.h> short names, which nvcc's host headers give every program that includes <stdlib.h>,
// <cstdio> or the like (g++ defines _DEFAULT_SOURCE): the same typedefs, so a program's own copy still compiles.
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short ushort;

// -- GNU `__typeof__`, which nvcc (EDG in GNU mode) takes and NVRTC does not: an expression's type without its
// reference, const kept (`__typeof__(a) _a = (a);` in a max macro). The device slice rewrites the GNU statement
// expressions such macros are made of (`({ ...; v; })`) into lambdas NVRTC compiles.
template <class T> struct __xlate_typeof { typedef T type; };
template <class T> struct __xlate_typeof<T&> { typedef T type; };
template <class T> struct __xlate_typeof<T&&> { typedef T type; };
#define __typeof__(...) typename __xlate_typeof<decltype(__VA_ARGS__)>::type
#define __typeof(...) typename __xlate_typeof<decltype(__VA_ARGS__)>::type

// -- the device runtime's error functions, which cuda_runtime.h declares for device code under nvcc (an error
// check helper `__device__ void check(cudaError_t e) { ... cudaGetErrorString(e) ... }`) and NVRTC does not.
// Declarations only, as nvcc has them: a kernel that calls one still needs the device runtime to link.
extern "C" {
extern __device__ const char* cudaGetErrorString(cudaError_t error);
extern __device__ const char* cudaGetErrorName(cudaError_t error);
extern __device__ cudaError_t cudaGetLastError(void);
extern __device__ cudaError_t cudaPeekAtLastError(void);
}

// -- __NVCC__, which nvcc defines and NVRTC does not (`#ifdef __NVCC__` around a vector type's operator+=).
// Defined here, after libcu++'s configuration above has taken NVRTC for NVRTC, and only for a CUDA source (the
// CUDA backend passes -DXLATE_NVCC_SOURCE; a HIP port built by the same compiler is no nvcc code).
#if defined(XLATE_NVCC_SOURCE) && !defined(__NVCC__)
#define __NVCC__ 1
#endif
