// xlate: HIP's vector-type arithmetic for CUDA's vector types, on the HIP-on-NVIDIA route.
// HIP's float4, int2, ... are classes with element-wise operators (hip/amd_detail/amd_hip_vector_types.h), so a
// HIP port may write `f4 += g4` or `v * 0.5f` where its CUDA source used a helper header (helper_math.h), which
// the port no longer includes. CUDA's vector types are plain structs: these templates give them the same
// operators. They are templates, so a program's own non-template overloads still win, as they do under HIP.
// Only + - * / (and their compound forms) and unary -: a port using others fails to compile here, never runs
// with a guessed meaning.
#pragma once

template <typename V> struct xlate_vec { static const int lanes = 0; };
#define XLATE_VEC_FAMILY(S, NAME)                                                            \
  template <> struct xlate_vec<NAME##1> { typedef S scalar; static const int lanes = 1; };   \
  template <> struct xlate_vec<NAME##2> { typedef S scalar; static const int lanes = 2; };   \
  template <> struct xlate_vec<NAME##3> { typedef S scalar; static const int lanes = 3; };   \
  template <> struct xlate_vec<NAME##4> { typedef S scalar; static const int lanes = 4; };
XLATE_VEC_FAMILY(float, float)
XLATE_VEC_FAMILY(double, double)
XLATE_VEC_FAMILY(signed char, char)
XLATE_VEC_FAMILY(unsigned char, uchar)
XLATE_VEC_FAMILY(short, short)
XLATE_VEC_FAMILY(unsigned short, ushort)
XLATE_VEC_FAMILY(int, int)
XLATE_VEC_FAMILY(unsigned int, uint)
XLATE_VEC_FAMILY(long, long)
XLATE_VEC_FAMILY(unsigned long, ulong)
XLATE_VEC_FAMILY(long long, longlong)
XLATE_VEC_FAMILY(unsigned long long, ulonglong)
#undef XLATE_VEC_FAMILY

template <bool B, typename T> struct xlate_vec_if {};
template <typename T> struct xlate_vec_if<true, T> { typedef T type; };
#define XLATE_VEC_ONLY(V, R) typename xlate_vec_if<(xlate_vec<V>::lanes > 0), R>::type
#define XLATE_LANE(v, i) ((&(v).x)[i])  // x, y, z, w are consecutive members of one type

#define XLATE_VEC_BINARY(OP)                                                                                     \
  template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V) operator OP(V a, const V& b) {          \
    for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = XLATE_LANE(a, i) OP XLATE_LANE(b, i);       \
    return a;                                                                                                    \
  }                                                                                                              \
  template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V) operator OP(V a,                        \
                                                                               typename xlate_vec<V>::scalar s) { \
    for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = XLATE_LANE(a, i) OP s;                      \
    return a;                                                                                                    \
  }                                                                                                              \
  template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V) operator OP(typename xlate_vec<V>::scalar s, \
                                                                               V a) {                            \
    for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = s OP XLATE_LANE(a, i);                      \
    return a;                                                                                                    \
  }                                                                                                              \
  template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V&) operator OP##=(V& a, const V& b) {     \
    for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = XLATE_LANE(a, i) OP XLATE_LANE(b, i);       \
    return a;                                                                                                    \
  }                                                                                                              \
  template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V&) operator OP##=(V& a,                   \
                                                                                   typename xlate_vec<V>::scalar s) { \
    for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = XLATE_LANE(a, i) OP s;                      \
    return a;                                                                                                    \
  }
XLATE_VEC_BINARY(+)
XLATE_VEC_BINARY(-)
XLATE_VEC_BINARY(*)
XLATE_VEC_BINARY(/)
#undef XLATE_VEC_BINARY

template <typename V> __host__ __device__ inline XLATE_VEC_ONLY(V, V) operator-(V a) {
  for (int i = 0; i < xlate_vec<V>::lanes; ++i) XLATE_LANE(a, i) = -XLATE_LANE(a, i);
  return a;
}
#undef XLATE_VEC_ONLY
#undef XLATE_LANE
