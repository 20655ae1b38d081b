"""Module globals: kernels whose inputs and outputs are file-scope `__device__` / `__constant__` variables.

The spec item `NAME: global ROLE[LEN]` (parsed, written back), its inference (element type and length from the
declaration, role from the accesses, through device functions; holes where drawn values could break a correct
kernel), and the harness plumbing that needs no GPU (the worker's framing, the runner's arguments, the refusal of
backends without module variables, NVRTC naming the variables). tests/test_module_globals_gpu.py runs the gate.
Every kernel here was written for these tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from xlate.errors import SpecError
from xlate.parse import parse_string
from xlate.specs import build_spec, resolve_spec
from xlate.specs.language import global_buffer, param_item, spec_items
from xlate.verify.cases import Case


def unit_of(tmp_path: Path, text: str, name: str = "k.cu"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return parse_string(path.read_text(), str(path), "cuda")


COUNTER = """
#define LANES 8
#define ROWS (LANES * 4)
__device__ float d_hist[ROWS * 2];
__device__ int d_total;
__constant__ float c_weights[LANES];

__device__ float weight_of(int k) { return c_weights[k % LANES]; }

__global__ void tally(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    d_hist[i % (ROWS * 2)] += x[i] * weight_of(i);
    atomicAdd(&d_total, 1);
  }
}

__global__ void reset_only() {
  int i = threadIdx.x;
  if (i < ROWS * 2) d_hist[i] = 0.0f;
}

int main() {
  int n = 1000;
  float* x;
  cudaMalloc(&x, n * sizeof(float));
  tally<<<(n + 127) / 128, 128>>>(x, n);
  reset_only<<<1, 64>>>();
  return 0;
}
"""


# -- the spec language -----------------------------------------------------------------------------------------


def test_global_item_syntax():
    assert global_buffer("global inout[N * N](0..9) as int32") == "inout[N * N](0..9) as int32"
    assert global_buffer(" global in[16]") == "in[16]"
    assert global_buffer("inout[n]") is None
    assert global_buffer("globals in[3]") is None
    assert global_buffer("global size(1..4)") is None


def test_annotated_globals_build_and_print_back(tmp_path):
    unit = unit_of(tmp_path, """
    __device__ int d_count;
    __constant__ float c_tab[16];
    // xlate: d_count: global inout[1](0..0), c_tab: global in[16](-1..1), grid: 1, block: 32
    __global__ void k() { if (c_tab[threadIdx.x % 16] > 0) atomicAdd(&d_count, 1); }
    """)
    spec = build_spec(unit, "k")
    count, tab = spec.param("d_count"), spec.param("c_tab")
    assert count is not None and tab is not None
    assert count.module_global and tab.module_global and count.position == -1
    assert (count.role, count.dims, count.lo, count.hi, count.ctype) == ("inout", ["1"], "0", "0", "int")
    assert (tab.role, tab.dims, tab.lo, tab.hi, tab.ctype) == ("in", ["16"], "-1", "1", "float")
    assert {p.name for p in spec.module_globals} == {"c_tab", "d_count"}
    assert param_item(count) == "d_count: global inout[1](0..0)"
    assert param_item(tab) == "c_tab: global in[16](-1..1)"
    # written back and read again, the same spec
    text = ", ".join(t for _, t in spec_items(spec))
    again = build_spec(unit, "k", text)
    assert {(p.name, p.role, tuple(p.dims), p.lo, p.hi, p.module_global) for p in again.params} == {
        (p.name, p.role, tuple(p.dims), p.lo, p.hi, p.module_global) for p in spec.params}


def test_an_explicit_type_and_a_missing_declaration(tmp_path):
    unit = unit_of(tmp_path, """
    // xlate: d_out: global out[4] as float64, grid: 1, block: 4
    __global__ void k() { }
    """)
    p = build_spec(unit, "k").param("d_out")
    assert p is not None and p.ctype == "float64" and p.module_global
    with pytest.raises(SpecError, match="no module variable 'd_out'"):
        build_spec(unit, "k", "d_out: global out[4]")


def test_a_constant_variable_is_only_read(tmp_path):
    unit = unit_of(tmp_path, """
    __constant__ int c_lut[8];
    // xlate: c_lut: global inout[8], grid: 1, block: 8
    __global__ void k() { }
    """)
    with pytest.raises(SpecError, match="__constant__"):
        build_spec(unit, "k")


def test_a_global_item_must_not_name_a_parameter(tmp_path):
    unit = unit_of(tmp_path, """
    // xlate: x: global in[4], grid: 1, block: 4
    __global__ void k(float* x) { }
    """)
    with pytest.raises(SpecError):
        build_spec(unit, "k")


# -- inference -------------------------------------------------------------------------------------------------


def test_inferred_globals_type_length_and_role(tmp_path):
    unit = unit_of(tmp_path, COUNTER)
    res = resolve_spec(unit, "tally")
    assert res.complete, res.holes
    items = {k: t for k, (t, _) in res.items.items()}
    # a macro expression as the length; `+=` reads and writes; an atomic on a scalar counter; a __constant__
    # table read through a device function
    assert items["d_hist"] == "d_hist: global inout[64] as float32"
    assert items["d_total"] == "d_total: global inout[1] as int32"
    assert items["c_weights"] == "c_weights: global in[8] as float32"
    origin = res.items["c_weights"][1]
    assert origin.kind == "kernel" and "__constant__ float c_weights[LANES]" in origin.detail
    spec = res.spec
    assert spec is not None and {p.name for p in spec.module_globals} == {"d_hist", "d_total", "c_weights"}
    assert spec.param("x").role == "in" and not spec.param("x").module_global


def test_a_kernel_writing_only_a_global_has_something_to_compare(tmp_path):
    from xlate.verify.api import compares_nothing

    res = resolve_spec(unit_of(tmp_path, COUNTER), "reset_only")
    assert res.complete, res.holes
    assert res.items["d_hist"][0] == "d_hist: global out[64] as float32"
    assert res.spec is not None and not compares_nothing(res.spec)


def test_locals_and_parameters_shadow_globals(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    __device__ float buf[32];
    __global__ void k(float* out, int n) {
      float buf = 2.0f;
      int i = threadIdx.x;
      if (i < n) out[i] = buf;
    }
    int main() { float* o; cudaMalloc(&o, 32 * sizeof(float)); k<<<1, 32>>>(o, 32); }
    """), "k")
    assert "buf" not in res.items and "buf" not in res.holes


def test_a_local_hides_a_global_only_in_its_own_block(tmp_path):
    """C++ scoping: a local of one block (or a loop variable) is not the global elsewhere in the kernel, where
    the global is still read and written (it was dropped from the spec, which then compared nothing of it)."""
    res = resolve_spec(unit_of(tmp_path, """
    __device__ float acc[64];
    __global__ void k(const float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) {
        float acc = x[i] * 2.0f;
        x[i] > 0.0f ? (void)0 : (void)acc;
      }
      for (int acc_i = 0, acc = 0; acc < 1; ++acc) { }
      if (i < 64) acc[i] += 1.0f;
    }
    int main() { float* x; cudaMalloc(&x, 64 * sizeof(float)); k<<<1, 64>>>(x, 64); }
    """), "k")
    assert res.items["acc"][0] == "acc: global inout[64] as float32"


def test_an_atomic_on_a_namespaced_scalar_reads_and_writes_it(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    namespace stats { __device__ unsigned hits; }
    __global__ void k(const float* x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n && x[i] > 0.0f) atomicAdd(&stats::hits, 1u);
    }
    int main() { float* x; cudaMalloc(&x, 64 * sizeof(float)); k<<<1, 64>>>(x, 64); }
    """), "k")
    assert res.items["hits"][0].startswith("hits: global inout[1]")


def test_global_values_as_indices(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    #define M 32
    __device__ int slot[16];
    __device__ float table[M];
    __device__ int chain[16];
    __device__ int limit;
    __global__ void k(float* out) {
      int i = threadIdx.x;
      out[i] = table[slot[i]];          // a direct index into a variable of known length: a range
      int j = chain[i] * 2 + 1;         // a value computed from it indexes memory: a hole
      out[i] += table[j];
      for (int t = 0; t < limit; t++)   // it bounds a loop: a hole
        out[i] += 1.0f;
    }
    int main() { float* o; cudaMalloc(&o, 16 * sizeof(float)); k<<<1, 16>>>(o); }
    """), "k")
    assert res.items["slot"][0] == "slot: global in[16](0..31) as int32"
    assert res.items["table"][0] == "table: global in[32] as float32"
    assert "chain" in res.holes and "indexes memory" in res.holes["chain"]
    assert "limit" in res.holes and "loop" in res.holes["limit"]


def test_index_values_into_buffers_and_through_local_pointers(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    __constant__ int c_perm[64];
    __device__ int d_map[64];
    __device__ int d_seen[128];
    __global__ void gather(const float* src, float* dst, int n) {
      volatile int* seen = d_seen;        // the variable under another name
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < 64) {
        int j = c_perm[i];                // an exact copy indexing a parameter's buffer: its length in the spec
        dst[i] = src[j];
        seen[d_map[i]] = 1;               // an index into the alias: the variable's length
      }
    }
    int main() {
      int n = 4096;
      float *s, *d;
      cudaMalloc(&s, n * sizeof(float));
      cudaMalloc(&d, 64 * sizeof(float));
      gather<<<1, 64>>>(s, d, n);
    }
    """), "gather")
    assert res.complete, res.holes
    src_len = res.items["src"][0].split("[", 1)[1].split("]", 1)[0]
    assert res.items["c_perm"][0] == f"c_perm: global in[64](0..{src_len} - 1) as int32"
    assert res.items["d_map"][0] == "d_map: global in[64](0..127) as int32"
    assert res.items["d_seen"][0] == "d_seen: global out[128] as int32"


def test_comparisons_with_constants_only_pick_a_branch(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    __device__ int state[64];
    __device__ int flag;
    __global__ void k() {
      int i = threadIdx.x;
      if (state[i] == 0 && state[i] >= -1) state[i] = 1;
      if (i == 0 && state[i] > 3) flag = 1;
    }
    int main() { k<<<1, 64>>>(); }
    """), "k")
    assert res.complete, res.holes
    assert res.items["state"][0] == "state: global inout[64] as int32"
    assert res.items["flag"][0] == "flag: global out[1] as int32"


def test_variables_passed_to_device_functions(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    #define B 8
    __device__ float partial[B];
    __device__ float best;
    __device__ int offsets[B];
    __device__ float sum_of(const float* v, int n) { float s = 0; for (int k = 0; k < n; k++) s += v[k]; return s; }
    __device__ void store(float* dst, float v) { *dst = v; }
    __device__ float pick(const int* off, const float* v) { return v[off[threadIdx.x] + 1]; }
    __global__ void reduce() {
      if (threadIdx.x == 0) store(&best, sum_of(partial, B) + pick(offsets, partial));
    }
    int main() { reduce<<<1, 32>>>(); }
    """), "reduce")
    # read through a pointer parameter (in), written through one (out); an index computed in the callee: a hole
    assert res.items["partial"][0] == "partial: global in[8] as float32"
    assert res.items["best"][0] == "best: global out[1] as float32"
    assert "offsets" in res.holes and "indexes memory" in res.holes["offsets"]


def test_atomics_through_casts_and_the_values_they_return(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    __device__ unsigned int hits;
    __device__ int used;
    __device__ int bins[4];
    __device__ int found[256];
    __global__ void scan(const float* x) {
      int i = threadIdx.x;
      if (x[i] > 0) {
        atomicAdd((unsigned int*)&hits, 1u);   // result unused: a plain counter
        atomicAdd(bins + (i & 3), 1);          // pointer arithmetic on the array
        int slot = atomicAdd(&used, 1);        // an append position: drawn freely, it writes anywhere
        found[slot] = i;
      }
    }
    int main() { float* x; cudaMalloc(&x, 256 * sizeof(float)); scan<<<1, 256>>>(x); }
    """), "scan")
    assert res.items["hits"][0] == "hits: global inout[1] as uint32"
    assert res.items["bins"][0] == "bins: global inout[4] as int32"
    assert res.items["found"][0] == "found: global out[256] as int32"
    assert "used" in res.holes and "indexes memory" in res.holes["used"]


def test_unsupported_globals_are_holes(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    struct Pair { float a; int b; };
    __device__ float* d_ptr;
    __device__ Pair d_pair;
    __device__ Pair d_last;
    __device__ float d_open[];
    __global__ void k() { d_ptr[threadIdx.x] = d_pair.a + d_open[0]; d_last.b = 1; }
    int main() { k<<<1, 32>>>(); }
    """), "k")
    assert {"d_ptr", "d_open", "d_last"} <= set(res.holes)
    assert not res.complete
    # a struct only read stays as the module holds it, and the note says so
    assert "d_pair" not in res.holes and any("d_pair" in n and "not fuzzed" in n for n in res.notes)


def test_initialised_tables_are_the_program_s(tmp_path):
    res = resolve_spec(unit_of(tmp_path, """
    __constant__ float c_w[] = {0.25f, 0.5f, 0.25f};
    __device__ int d_lut[4] = {3, 1, 2, 0};
    __global__ void k(float* out) { int i = threadIdx.x; out[i] = c_w[i % 3] * d_lut[i % 4]; }
    int main() { float* o; cudaMalloc(&o, 32 * sizeof(float)); k<<<1, 32>>>(o); }
    """), "k")
    assert res.complete, res.holes
    assert "c_w" not in res.items and "d_lut" not in res.items
    assert any("c_w" in n and "initialises" in n for n in res.notes)


# -- the harness ------------------------------------------------------------------------------------------------


def test_worker_framing_keeps_the_symbol():
    from xlate.backends.base import BufferArg, ScalarArg
    from xlate.backends.worker import decode_args, encode_args

    args = [BufferArg("x", np.arange(4, dtype=np.float32), 0, 4), ScalarArg("n", 4, "int32"),
            BufferArg("d_count", np.zeros(1, np.int32), 0, 1, symbol="d_count")]
    meta, arrays = encode_args(args)
    back = decode_args(meta, arrays)
    assert [getattr(a, "symbol", None) for a in back] == [None, None, "d_count"]


class FakeGlobalsBackend:
    """Stands for a device: the kernel `d[i] = 2 * c[i]` over module variables c (in) and d (out), honouring
    symbols the way CupyRuntime does (filled before, read back after, not passed)."""

    name = "cuda"
    capabilities = frozenset({"grid_launch", "module_globals"})

    def __init__(self, wrong: bool = False):
        self.wrong = wrong
        self.seen: list[list] = []

    def compile(self, source, kernel, options, *, path="<source>"):
        from xlate.backends.base import Artifact

        self.options = options
        return Artifact("cuda", kernel, "fake", "", kernel)

    def run(self, artifact, args, launch, *, timeout=60.0, bench=None, wrapper=None):
        from xlate.backends.base import RunResult

        self.seen.append(args)
        bufs = {a.name: a.data.copy() for a in args if hasattr(a, "data")}
        c, d = bufs["c"], bufs["d"]
        d[: len(c) - (1 if self.wrong else 0)] = 2 * c[: len(c) - (1 if self.wrong else 0)]
        return RunResult("ok", bufs)

    def detect(self):
        from xlate.backends.base import ToolchainInfo

        return ToolchainInfo("cuda", True, True, True)

    def globals_refusal(self, source, kernel, variables, positional):
        return None  # a C source declares its variables


CASE = Case({}, {}, {}, {"c": "uniform"}, 7)
KERNEL = """
__constant__ float c[8];
__device__ float d[8];
// xlate: c: global in[8](-1..1), d: global out[8], grid: 1, block: 8
__global__ void twice() { d[threadIdx.x] = 2.0f * c[threadIdx.x]; }
"""


def _side(tmp_path: Path, backend):
    from xlate.verify.runner import Side

    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(KERNEL).lstrip())
    side = Side(str(path), "twice")
    side.backend = backend
    return side


def test_runner_fills_and_compares_module_variables(tmp_path, monkeypatch):
    from xlate.verify import runner
    from xlate.verify.cases import environment, make_inputs

    fake = FakeGlobalsBackend()
    monkeypatch.setattr(runner, "get_backend", lambda name: fake)
    side = _side(tmp_path, fake)
    spec = build_spec(side.unit, "twice")
    case = CASE
    env = environment(spec, case)
    inputs = make_inputs(spec, case, env)
    assert set(inputs) == {"c"} and inputs["c"].shape == (8,)
    run = side.run_case(spec, case, inputs)
    assert run.failure is None, run.failure
    # nothing passed as an argument: both variables by symbol, exactly their 8 elements, no guard bands
    args = fake.seen[0]
    assert [(a.name, a.symbol, a.offset, a.length) for a in args] == [("c", "c", 0, 8), ("d", "d", 0, 8)]
    assert fake.options.module_globals == ["c", "d"]
    assert np.array_equal(run.buffers["d"].values, 2 * inputs["c"])
    assert run.buffers["d"].written.all()


def test_runner_sees_an_unwritten_module_variable(tmp_path, monkeypatch):
    from xlate.verify import runner
    from xlate.verify.cases import environment, make_inputs

    fake = FakeGlobalsBackend(wrong=True)
    monkeypatch.setattr(runner, "get_backend", lambda name: fake)
    side = _side(tmp_path, fake)
    spec = build_spec(side.unit, "twice")
    case = CASE
    inputs = make_inputs(spec, case, environment(spec, case))
    run = side.run_case(spec, case, inputs)
    assert run.failure is None
    assert not run.buffers["d"].written[7] and run.buffers["d"].written[:7].all()


def test_a_backend_without_module_variables_is_refused(tmp_path, monkeypatch):
    from xlate.errors import ToolchainMissing
    from xlate.verify.cases import environment, make_inputs

    fake = FakeGlobalsBackend()
    fake.capabilities = frozenset({"grid_launch"})
    side = _side(tmp_path, fake)
    spec = build_spec(side.unit, "twice")
    case = CASE
    with pytest.raises(ToolchainMissing, match="module globals are not supported"):
        side.run_case(spec, case, make_inputs(spec, case, environment(spec, case)))
    assert not fake.seen


def test_triton_backend_refuses_a_launcher_without_the_variable():
    # a Triton module has no variables: the launcher takes each as a keyword; one it does not take is refused
    from xlate.backends.base import Artifact, BufferArg, LaunchConfig
    from xlate.backends.triton import TritonBackend

    from xlate.errors import ToolchainMissing

    with pytest.raises(ToolchainMissing, match="the triton port does not accept the module globals d"):
        TritonBackend().run(Artifact("triton", "k", "x", "", "k"),
                            [BufferArg("d", np.zeros(4, np.float32), 0, 4, symbol="d")], LaunchConfig())


def test_backends_declare_module_globals():
    from xlate.backends.registry import get_backend

    assert "module_globals" in get_backend("cuda").capabilities
    assert "module_globals" in get_backend("hip").capabilities
    assert "module_globals" in get_backend("triton").capabilities  # as launcher keywords
    assert "module_globals" not in get_backend("ascendc").capabilities


def test_nvrtc_names_module_variables():
    from xlate.backends.nvrtc import global_expressions

    src = textwrap.dedent("""
    // __device__ int decoy;  (a comment)
    namespace outer { namespace inner {
    __device__ int counter;
    } }
    __constant__ float table[4];
    static __device__ int hidden;
    #define MANAGED __managed__
    MANAGED __device__ int shared_count;
    """)
    # a variable of the global namespace is its own symbol: not asked for (NVRTC refuses `&v` of a managed one)
    assert global_expressions(src, ["counter", "table", "hidden", "shared_count"]) == {
        "counter": "&outer::inner::counter", "hidden": "&hidden"}


def test_nvrtc_compile_records_the_symbols(tmp_path):
    from xlate.backends import nvrtc
    from xlate.backends.base import CompileOptions
    from xlate.backends.cuda import CudaBackend

    if nvrtc.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    src = textwrap.dedent("""
    namespace acc { __device__ int hits; }
    __constant__ float scale[4];
    __global__ void count(const float* x) { if (x[threadIdx.x] * scale[threadIdx.x % 4] > 0) atomicAdd(&acc::hits, 1); }
    """)
    art = CudaBackend().compile(src, "count", CompileOptions(arch="sm_90", module_globals=["hits", "scale"]),
                                path=str(tmp_path / "g.cu"))
    symbols = art.meta["globals"]
    assert "scale" not in symbols  # its own symbol: the runtime looks it up by name
    assert symbols["hits"] != "hits" and "hits" in symbols["hits"] and "acc" in symbols["hits"]


def test_nvrtc_compiles_a_kernel_on_a_managed_variable(tmp_path):
    # `&v` of a __managed__ variable is no constant expression: asked for as a name expression, NVRTC refused to
    # compile the source ("__nv_name_map: expression must have a constant value"; hungarian x4 on the H200).
    from xlate.backends import nvrtc
    from xlate.backends.base import CompileOptions
    from xlate.backends.cuda import CudaBackend

    if nvrtc.nvrtc_version() is None:
        pytest.skip("NVRTC is not installed")
    src = "__managed__ __device__ int matches;\n__global__ void tally(const int* x) { if (x[threadIdx.x]) atomicAdd(&matches, 1); }\n"
    art = CudaBackend().compile(src, "tally", CompileOptions(arch="sm_90", module_globals=["matches"]),
                                path=str(tmp_path / "m.cu"))
    assert art.compile.ok and "matches" not in art.meta.get("globals", {})


def test_a_triton_port_taking_the_variables_as_keywords_is_verified(tmp_path):
    """A Triton module has no __device__ variables: its launcher takes each as the keyword argument of its name,
    a tensor the gate fills and reads back (tests/test_triton_module_globals.py: a launcher that does not take
    one is refused, could not verify)."""
    from xlate.verify.api import verify

    src = tmp_path / "twice.cu"
    src.write_text(textwrap.dedent(KERNEL).lstrip())
    port = tmp_path / "twice.py"
    port.write_text(textwrap.dedent('''
        import triton
        import triton.language as tl

        @triton.jit
        def _twice(c, d):
            i = tl.arange(0, 8)
            tl.store(d + i, 2.0 * tl.load(c + i))

        def twice(c, d):
            _twice[(1,)](c, d)
    ''').lstrip())
    ref = tmp_path / "ref.py"
    ref.write_text("def twice(c, d):\n    return {'d': 2 * c}\n")
    verdict = verify(str(src), str(port), kernel="twice", reference=f"{ref}:twice", examples=3)
    assert verdict.status == "verified", verdict.to_dict()
