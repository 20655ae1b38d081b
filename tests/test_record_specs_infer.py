"""Inference of record types: a struct of mixed number fields passed by value or as a buffer's element becomes
`as {...}` from the struct's definition (fixed arrays, nested structs, vector types, alignas, template arguments
bound); one holding a pointer, or whose integer fields index buffers or bound loops, stays a hole that says why.
Programs written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from xlate.parse import parse_string
from xlate.specs import resolve_spec
from xlate.specs.infer.program import Program, load_file

PROGRAM = """
#include <cstdio>
#define NAXES 3
struct Option { float S, X; int T; bool call; };
struct Params { float dt; int steps; double scale; };
struct Holder { float* data; int n; };
struct Edge { float w; int col; };
struct Body { float3 pos; float m[NAXES]; unsigned char tag; };
template <typename T> struct Pair { T a; int b; };

__device__ float value(const Option& o, float dt) { return o.S * dt - o.X + (float)o.T; }

__global__ void price(const Option* __restrict__ opts, float* out, Params p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = value(opts[i], p.dt) * (float)p.scale;
    if (opts[i].S > opts[i].X * p.dt) v = -v;  // floats compared: a branch, not a bound
    out[i] = opts[i].call ? v : -v + p.steps;
  }
}
__global__ void scale_held(Holder h, float s) { int i = threadIdx.x; if (i < h.n) h.data[i] *= s; }
__global__ void gather(const Edge* e, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = e[i].w * x[e[i].col];
}
__global__ void scatter(const Edge* e, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[e[i].col] = e[i].w;
}
struct Site { float v[2]; int x, y; char parity; };
struct Particle { double x, v; bool alive; };
__device__ double to_cell(double x) { return (x - 0.5) / 0.1; }
__device__ void deposit(double lc, float* den) { int c = (int)lc; atomicAdd(&den[c], 1.f); }
__global__ void bins(const Particle* parts, float* den, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && parts[i].alive) deposit(to_cell(parts[i].x), den);
}
__global__ void loop_alias(const Option* opts, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto o = opts[i];
  float s = 0.f;
  for (int t = 0; t < o.T; t++) s += o.S;
  out[i] = s;
}
__global__ void sites(const Site* a, float* out, int n) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x < n) out[x] = a[x].v[0] * (float)(a[x].x - a[x].y) + (a[x].parity == 1 ? 1.f : 0.f);
}
__global__ void repeat(Params p, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  for (int k = 0; k < p.steps; k++) acc += p.dt;
  y[i] = acc;
}
__global__ void move(Body* b, Pair<double> q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { b[i].pos.x += b[i].m[0] * (float)q.a; b[i].tag = (unsigned char)q.b; }
}

int main() {
  const int n = 1000;
  Option* d_o; float* d_out; Params p; p.dt = 0.5f; p.steps = 3; p.scale = 2.0;
  cudaMalloc(&d_o, n * sizeof(Option)); cudaMalloc(&d_out, n * sizeof(float));
  price<<<(n + 255) / 256, 256>>>(d_o, d_out, p, n);
  Holder h; scale_held<<<1, 256>>>(h, 2.0f);
  Edge* d_e; float *d_x, *d_y;
  cudaMalloc(&d_e, n * sizeof(Edge)); cudaMalloc(&d_x, n * sizeof(float)); cudaMalloc(&d_y, n * sizeof(float));
  gather<<<(n + 127) / 128, 128>>>(d_e, d_x, d_y, n);
  scatter<<<(n + 127) / 128, 128>>>(d_e, d_y, n);
  repeat<<<(n + 127) / 128, 128>>>(p, d_y, n);
  loop_alias<<<(n + 127) / 128, 128>>>(d_o, d_y, n);
  Site* d_s; cudaMalloc(&d_s, n * sizeof(Site));
  sites<<<(n + 127) / 128, 128>>>(d_s, d_y, n);
  Particle* d_p; cudaMalloc(&d_p, n * sizeof(Particle));
  bins<<<(n + 127) / 128, 128>>>(d_p, d_y, n);
  Body* d_b; Pair<double> q; q.a = 1.0; q.b = 2;
  cudaMalloc(&d_b, n * sizeof(Body));
  move<<<(n + 63) / 64, 64>>>(d_b, q, n);
  return 0;
}
"""


def _resolve(tmp_path: Path, kernel: str):
    path = tmp_path / "main.cu"
    path.write_text(textwrap.dedent(PROGRAM).lstrip())
    return resolve_spec(parse_string(path.read_text(), str(path), "cuda"), kernel)


def test_a_buffer_of_records_and_a_record_by_value(tmp_path):
    res = _resolve(tmp_path, "price")
    assert res.complete, res.holes
    assert res.annotation() == (
        "opts: in[n] as {S: float32, X: float32, T: int32, call: bool}, out: out[n], "
        "p: scalar as {dt: float32, steps: int32, scale: float64}, n: size(1..1000), grid: cdiv(n, 256), block: 256")
    spec = res.spec
    assert spec is not None and spec.param("opts").ctype == "{S: float32, X: float32, T: int32, call: bool}"


def test_nested_arrays_vectors_and_bound_template_arguments(tmp_path):
    res = _resolve(tmp_path, "move")
    assert res.complete, res.holes
    assert res.annotation() == (
        "b: inout[n] as {pos: float32[3], m: float32[3], tag: uint8}, q: scalar as {a: float64, b: int32}, "
        "n: size(1..1000), grid: cdiv(n, 64), block: 64")


def test_a_struct_holding_a_pointer_stays_a_hole_that_says_so(tmp_path):
    res = _resolve(tmp_path, "scale_held")
    assert not res.complete and set(res.holes) == {"h"}
    # the host launches it without pointing h.data anywhere (xlate/specs/infer/pointer_records.py)
    assert "field h.data at an allocation" in res.holes["h"]


def test_an_integer_field_indexing_a_read_only_buffer_gets_its_range(tmp_path):
    gather = _resolve(tmp_path, "gather")
    assert gather.complete, gather.holes
    assert gather.annotation().startswith("e: in[n] as {w: float32, col: int32(0..n - 1)}, x: in[n], y: out[n]")


def test_integer_fields_that_bound_loops_or_index_written_buffers_stay_holes(tmp_path):
    scatter = _resolve(tmp_path, "scatter")
    assert set(scatter.holes) == {"e"} and "e.col" in scatter.holes["e"] and "writes" in scatter.holes["e"]
    repeat = _resolve(tmp_path, "repeat")
    assert set(repeat.holes) == {"p"} and "p.steps" in repeat.holes["p"] and "bounds a loop" in repeat.holes["p"]


def test_record_of_reads_alignas_and_the_blanked_align_qualifier(tmp_path):
    path = tmp_path / "a.cu"
    path.write_text("struct __align__(16) A { float x; int n; };\n"
                    "struct alignas(8) B { short s; A a[2]; bool ok; };\n"
                    "struct C { int bits : 3; };\n")
    program = Program([load_file(str(path))])
    assert program.record_of("A") == ("{x: float32, n: int32} align(16)", "")
    assert program.record_of("B") == ("{s: int16, a: {x: float32, n: int32} align(16)[2], ok: bool} align(8)", "")
    assert program.record_of("C") == (None, "'C' has bit-fields")


def test_fields_are_followed_through_auto_copies_and_not_confused_with_thread_indices(tmp_path):
    alias = _resolve(tmp_path, "loop_alias")
    assert set(alias.holes) == {"opts"} and "opts.T" in alias.holes["opts"] and "bounds a loop" in alias.holes["opts"]
    sites = _resolve(tmp_path, "sites")  # `threadIdx.x` and `x < n` say nothing about the field Site::x
    assert sites.complete, sites.holes
    assert sites.annotation().startswith("a: in[n] as {v: float32[2], x: int32, y: int32, parity: int8}")


def test_record_of_settles_ifs_in_the_body_skips_static_asserts_and_reads_sizes_from_macros(tmp_path):
    path = tmp_path / "s.cu"
    path.write_text(textwrap.dedent("""
        #define PREC 1
        #define NB 4
        struct cplx { float e[2]; };
        typedef struct {
          cplx link[NB * 2];
          int x, y;
        #if (PREC == 1)
          int pad[2];
        #else
          int pad[10];
        #endif
        #ifdef UNSET
          double junk;
        #endif
          static_assert(sizeof(int) == 4, "int");
        } site __attribute__ ((aligned));
        struct Node { struct Node* next; int v; };
        struct Q { float a[UNKNOWN + 1]; };
    """))
    program = Program([load_file(str(path))])
    assert program.record_of("site") == (
        "{link: {e: float32[2]}[8], x: int32, y: int32, pad: int32[2]} align(16)", "")
    assert program.record_of("Node") == (None, "'Node' holds a pointer or reference ('* next')")
    assert program.record_of("Q")[0] is None and "array size" in program.record_of("Q")[1]


def test_a_float_field_turned_into_a_bin_number_stays_a_hole(tmp_path):
    res = _resolve(tmp_path, "bins")
    assert set(res.holes) == {"parts"} and "parts.x" in res.holes["parts"]
    assert "deposit" in res.holes["parts"] and "indexes a buffer" in res.holes["parts"]


def test_members_of_an_array_typedef_are_fixed_arrays(tmp_path):
    path = tmp_path / "t.cu"
    path.write_text("#define LEN 8\ntypedef unsigned int Row[LEN];\ntypedef float Tile[2][3];\n"
                    "struct Planes { Row a, b; Tile t[4]; double w; };\n")
    program = Program([load_file(str(path))])
    assert program.record_of("Planes") == ("{a: uint32[8], b: uint32[8], t: float32[4, 2, 3], w: float64}", "")
