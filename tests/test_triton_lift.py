"""The CUDA -> Triton lifter's parts and its refusals: number and macro handling, C typing, the symbolic
thread-index algebra, structural (not name-based) idiom recognition, and diagnostics for what it cannot lift.
Ports of small kernels run under the Triton interpreter through xlate's Triton backend."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xlate.backends.base import BufferArg, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend

from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton import sym as S
from xlate.translate.triton.translator import CudaToTriton, grid_python

ROOT = Path(__file__).resolve().parents[1]


def port(src: str, path: str = "k.cu"):
    unit = parse_string(src, path, "cuda")
    return CudaToTriton().translate(unit, src, TranslateOptions())


def kernel_body(text: str, kernel: str) -> str:
    """The text of `kernel`'s jitted Triton function in a port (its `_<kernel>_kernel`), up to the next def."""
    return text.split(f"def _{kernel}_kernel(", 1)[1].split("\ndef ", 1)[0]


def run(text: str, kernel: str, args: list, tmp_path: Path) -> dict[str, np.ndarray]:
    b = get_backend("triton")
    f = tmp_path / f"{kernel}_triton.py"
    f.write_text(text)
    art = b.compile(text, kernel, CompileOptions(), path=str(f))
    res = b.run(art, args, LaunchConfig())
    assert res.status == "ok", res.message + res.stderr
    return res.buffers


def buf(name: str, data: np.ndarray, guard: int = 7) -> BufferArg:
    """A buffer with guard bands on both sides (the kernel sees the middle)."""
    poison = np.full(guard, 12345, dtype=data.dtype)
    return BufferArg(name, np.concatenate([poison, data, poison]), guard, len(data))


# -- symbolic values -------------------------------------------------------------------------------------------


def test_thread_index_algebra():
    tid = S.lane("x")
    e = S.op("add", "int", S.cast(S.op("mul", "unsigned int", S.uni("pid_x", "unsigned int", True),
                                         S.const(256, "unsigned int")), "int"),
             S.op("sub", "int", S.cast(tid, "int"), S.const(1, "int")))
    coefs, rest = S.affine(e)
    assert coefs == {"x": 1} and rest.uniform
    v = S.evaluate(S.op("div", "int", S.op("sub", "int", S.cast(tid, "int"), S.const(7, "int")), S.const(2, "int")),
                   {"x": np.arange(4, dtype=np.uint32)})
    assert list(v) == [-3, -3, -2, -2]  # C division truncates toward zero
    assert S.op("add", "int", S.const(2, "int"), S.const(3, "int")).value == 5
    wrapped = S.op("mul", "unsigned int", S.const(2654435761, "unsigned int"), S.const(3, "unsigned int"))
    assert wrapped.value == (2654435761 * 3) % 2**32


def test_grid_expressions_become_python():
    assert grid_python(["max(1, min(cdiv(n, 256), 64))"], {"n": "n"}, (256, 1)) == \
        ["max(1, min(triton.cdiv(n, 256), 64))"]
    assert grid_python(["cdiv(n / 4, 256)"], {"n": "n"}, (256, 1)) == ["triton.cdiv(n // 4, 256)"]


# -- idioms are recognised by structure ------------------------------------------------------------------------

REDUCE = (ROOT / "examples/kernels/reduce_sum_shared.cu").read_text()

RENAMED_REDUCE = """
#define TPB 256
// xlate: src: in[len], sums: out[cdiv(len, 256)], len: size(1..1<<20),
// xlate: grid: cdiv(len, 256), block: 256, op: reduction(256)
__global__ void partial_totals(const float *src, float *sums, int len)
{
  __shared__ float acc_buf[TPB];
  unsigned int t = threadIdx.x;
  unsigned int g = t + blockDim.x * blockIdx.x;
  float mine = 0.0f;
  if (g < len) { mine = src[g]; }
  acc_buf[t] = mine;
  __syncthreads();
  for (unsigned int stride = TPB >> 1; stride != 0; stride = stride >> 1) {
    if (t < stride)
      acc_buf[t] = acc_buf[t] + acc_buf[stride + t];
    __syncthreads();
  }
  if (t == 0) sums[blockIdx.x] = acc_buf[0];
}
"""


def test_renamed_and_reformatted_reduction_still_lifts(tmp_path):
    t = port(RENAMED_REDUCE)
    assert t.kernels == ["partial_totals"], [d.format() for d in t.diagnostics]
    assert "tl.sum(" in t.text
    assert any(d.code == "XL2021" and "block sum over 256 threads" in d.message for d in t.diagnostics)
    n = 1000
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    out = run(t.text, "partial_totals", [buf("src", x), buf("sums", np.full(4, np.nan, np.float32)), ScalarArg("len", n, "int32")], tmp_path)
    sums = out["sums"][7:11]
    expect = np.add.reduceat(x.astype(np.float64), [0, 256, 512, 768])
    np.testing.assert_allclose(sums, expect, rtol=1e-5)
    assert (out["sums"][:7] == 12345).all() and (out["sums"][11:] == 12345).all()


def test_same_name_other_structure_is_not_mislifted(tmp_path):
    # a tree that starts at blockDim/4: thread 0 ends with half the block, not a block sum, and is lifted as
    # that (a sum over each aligned half of the block), never as the block sum its name suggests
    wrong = REDUCE.replace("for (int s = blockDim.x / 2;", "for (int s = blockDim.x / 4;")
    t = port(wrong, "reduce_sum_shared.cu")
    assert t.kernels == ["block_reduce_sum"], [d.format() for d in t.diagnostics]
    assert any(d.code == "XL2021" and "sum over each 128 threads" in d.message for d in t.diagnostics)
    assert not any("block sum" in d.message for d in t.diagnostics)
    n = 1000
    x = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    out = run(t.text, "block_reduce_sum", [buf("x", x), buf("partial", np.full(4, np.nan, np.float32)),
                                           ScalarArg("n", n, "int32")], tmp_path)
    halves = [x[b * 256:min(b * 256 + 128, n)].astype(np.float64).sum() for b in range(4)]
    np.testing.assert_allclose(out["partial"][7:11], halves, rtol=1e-5)
    # a kernel named like the softmax that is elementwise: lifted as elementwise, no reduction
    fake = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 128), block: 128
__global__ void softmax_rows(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f;
}
"""
    t = port(fake)
    assert t.kernels == ["softmax_rows"]
    assert "tl.max" not in t.text and "tl.sum" not in t.text
    assert not any(d.code == "XL2021" for d in t.diagnostics)


def test_missing_barrier_is_a_race():
    racy = REDUCE.replace("    sdata[tid] = (i < n) ? x[i] : 0.0f;\n    __syncthreads();\n",
                          "    sdata[tid] = (i < n) ? x[i] : 0.0f;\n")
    assert racy != REDUCE
    t = port(racy, "reduce_sum_shared.cu")
    assert [d.code for d in t.blocking] == ["XL2009"]
    d = t.blocking[0]
    assert d.path == "reduce_sum_shared.cu"
    assert "sdata[tid] += sdata[tid + s]" in racy.splitlines()[d.line - 1]  # the tree's first step


def test_divergent_barrier_is_refused():
    src = """
// xlate: x: in[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
__global__ void k(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { x[i] = 1.0f; __syncthreads(); }
}
"""
    t = port(src)
    assert [d.code for d in t.blocking] == ["XL2015"]
    assert (t.blocking[0].line, t.blocking[0].col) == (5, 31)


def test_shuffle_outside_a_reduction_reads_the_source_lane(tmp_path):
    # no reduction: each thread takes lane+1's value (the warp's last lane keeps its own, as CUDA defines)
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
__global__ void shift(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i < n) ? x[i] : 0.0f;
    float w = __shfl_down_sync(0xffffffff, v, 1);
    if (i < n) y[i] = w;
}
"""
    t = port(src)
    assert t.kernels == ["shift"], [d.format() for d in t.diagnostics]
    n = 1000
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    out = run(t.text, "shift", [buf("x", x), buf("y", np.full(n, np.nan, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    i = np.arange(n)
    src_lane = np.where(i % 32 < 31, i + 1, i)
    v = np.concatenate([x, np.zeros(32, np.float32)])
    np.testing.assert_array_equal(out["y"][7:-7], v[src_lane])
    # a data-dependent source lane stays refused
    t = port(src.replace("__shfl_down_sync(0xffffffff, v, 1)", "__shfl_sync(0xffffffff, v, (int)v)"))
    assert "shift" in t.needs_llm
    assert t.blocking and t.blocking[0].code in ("XL2010", "XL2003")


def test_partially_liftable_file_keeps_the_rest():
    text = (ROOT / "examples/kernels/block_scan.cu").read_text()
    t = port(text, "block_scan.cu")
    assert t.kernels == ["block_scan_inclusive"] and t.needs_llm == ["block_scan_exclusive"]
    assert "def block_scan_inclusive(x, y, n):" in t.text and "def block_scan_exclusive" not in t.text
    assert "tl.cumsum(" in t.text


# -- semantics details -----------------------------------------------------------------------------------------


def test_math_precision_is_kept():
    src = """
// xlate: x: in[n], y: out[n], z: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
__global__ void k(const float* x, float* y, float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = expf(x[i]) / x[i]; z[i] = __expf(x[i]); }
}
"""
    t = port(src)
    assert "libdevice.exp(x0)" in t.text and "_xl_expf(" in t.text  # IEEE expf -> libdevice
    assert re.search(r"tl\.exp\(x_\w+\)", t.text)  # the fast intrinsic -> tl.exp
    assert "tl.div_rn(" in t.text  # IEEE division


def test_double_literal_promotes_like_c(tmp_path):
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.1 + 1e-9;
}
"""
    t = port(src)
    assert "tl.float64" in t.text
    x = np.array([3.0, 7.0, 1e-3], np.float32)
    out = run(t.text, "scale", [buf("x", x), buf("y", np.zeros(3, np.float32)), ScalarArg("n", 3, "int32")], tmp_path)
    expect = (x.astype(np.float64) * 0.1 + 1e-9).astype(np.float32)
    assert (out["y"][7:10] == expect).all()


def test_unsigned_thread_index_wraps_like_cuda(tmp_path):
    src = """
// xlate: y: out[n], n: size(1..4096), grid: cdiv(n, 32), block: 32
__global__ void k(int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (threadIdx.x - 1 < 4u) ? 1 : 0;
}
"""
    t = port(src)
    out = run(t.text, "k", [buf("y", np.full(40, -1, np.int32)), ScalarArg("n", 40, "int32")], tmp_path)
    got = out["y"][7:47]
    tid = np.arange(40) % 32
    expect = (((tid - 1) % 2**32) < 4).astype(np.int32)  # thread 0: 0 - 1 wraps to 4294967295
    assert (got == expect).all()


def test_data_dependent_loop_becomes_masked_loop(tmp_path):
    src = """
// xlate: cnt: in[n](0..20), y: out[n], n: size(1..4096), grid: cdiv(n, 64), block: 64
__global__ void collatz(const int* cnt, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = cnt[i] + 1, steps = 0;
    while (v != 1) { v = (v % 2 == 0) ? v / 2 : 3 * v + 1; steps++; }
    y[i] = steps;
}
"""
    t = port(src)
    assert t.kernels == ["collatz"], [d.format() for d in t.diagnostics]
    assert "while tl.max(" in t.text
    c = np.arange(0, 21, dtype=np.int32)
    out = run(t.text, "collatz", [buf("cnt", c), buf("y", np.full(21, -5, np.int32)), ScalarArg("n", 21, "int32")], tmp_path)

    def steps(v: int) -> int:
        k = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            k += 1
        return k

    assert list(out["y"][7:28]) == [steps(int(v) + 1) for v in c]


def test_diagnostics_carry_the_source_location():
    src = (ROOT / "examples/kernels/inline_ptx.cu").read_text()
    t = port(src, "inline_ptx.cu")
    assert t.text == "" and sorted(t.needs_llm) == ["ptx_add", "ptx_lane_id"]
    by_kernel = {d.kernel: d for d in t.blocking}
    assert (by_kernel["ptx_add"].line, by_kernel["ptx_add"].col) == (9, 5)
    assert by_kernel["ptx_add"].code == "XL2002" and "asm" in by_kernel["ptx_add"].message
    assert by_kernel["ptx_add"].format().startswith("inline_ptx.cu:9:5: error:")


@pytest.mark.parametrize("bad", ["block: (n, 2)", "block: (16, 16, 8)", "block: 2048"])  # 96, n: test_triton_lift_blocks
def test_unliftable_launch_configurations(bad):
    src = f"""
// xlate: x: in[n], n: size(1..4096), grid: cdiv(n, 64), {bad}
__global__ void k(float* x, int n) {{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0.0f; }}
"""
    t = port(src)
    assert [d.code for d in t.blocking] == ["XL2006"]


GRID_STRIDE_PAIRS = """
// xlate: x: in[n], y: out[n], n: size(0..5000), a: scalar, grid: 3, block: 128
__global__ void pairs(const float* x, float* y, int n, float a) {
    for (int i = (blockIdx.x * blockDim.x + threadIdx.x) * 2; i < n; i += 2 * blockDim.x * gridDim.x) {
        y[i] = a * x[i];
        if (i + 1 < n) y[i + 1] = a * x[i + 1] + 1.0f;
    }
}
"""


def test_grid_stride_loop_becomes_a_counted_range_loop(tmp_path):
    """A grid-stride loop with a lane-affine start is a `range` over the block's base index (no per-iteration
    tl.max over the still-active lanes); lanes past n are masked, including with 2 elements per thread."""
    t = port(GRID_STRIDE_PAIRS)
    assert t.kernels == ["pairs"], [d.format() for d in t.diagnostics]
    assert re.search(r"for i_base\w* in range\(", t.text) and "tl.max(" not in t.text, t.text
    for n in (0, 1, 767, 768, 769, 5000):
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        out = run(t.text, "pairs", [buf("x", x), buf("y", np.full(n, np.nan, np.float32)), ScalarArg("n", n, "int32"),
                                    ScalarArg("a", 1.5, "float32")], tmp_path)
        y = out["y"]
        expect = 1.5 * x.astype(np.float64)
        expect[1::2] += 1.0
        np.testing.assert_allclose(y[7 : 7 + n], expect, rtol=1e-6, atol=1e-6)  # a*x + 1 rounds in float32
        assert (y[:7] == 12345).all() and (y[7 + n :] == 12345).all()


# -- the lifter's structure: undoable state, narrow protocols, intrinsics from the one list ---------------------


def test_every_stateful_field_declares_how_a_fork_undoes_it():
    from dataclasses import dataclass, field

    from xlate.translate.triton import fork
    from xlate.translate.triton.state import LiftState

    fork.save(LiftState())  # every field of the state, its emitter, frames and shared arrays has a policy

    @dataclass
    class Careless:
        kept: int = field(default=0, metadata=fork.VALUE)
        forgotten: list[int] = field(default_factory=list)

    with pytest.raises(TypeError, match=r"Careless\.forgotten declares no fork policy"):
        fork.save(Careless())


def test_a_fork_is_undone_in_place():
    from xlate.cir import ir
    from xlate.translate.triton.state import Binding, FnCtx, LiftState
    from xlate.translate.triton.values import SharedArr, WriteRec

    st = LiftState()
    frame = FnCtx("k", ir.CType("void"), 0)
    arr = SharedArr("s", "float", [64], None)
    st.fstack.append(frame)
    st.shared.append(arr)
    st.scopes[-1]["a"] = Binding(ir.CType("int"), S.const(1, "int"))
    st.em.line("x = 1")
    f = st.fork()
    st.scopes[-1]["a"] = Binding(ir.CType("int"), S.const(2, "int"))
    st.scopes.append({"b": Binding(ir.CType("int"), None)})
    frame.value = S.const(3, "int")
    arr.records.append(WriteRec(1, arr, (), (), S.const(0.0, "float"), 0))
    st.shared.append(SharedArr("t", "float", [8], None))
    st.em.line("y = 2")
    st.epoch, st.ids = 5, 7
    f.undo()
    assert [list(s) for s in st.scopes] == [["a"]] and st.scopes[0]["a"].val.value == 1
    assert st.fstack == [frame] and st.fstack[0] is frame and frame.value is None  # the same frame, as it was
    assert st.shared == [arr] and arr.records == []
    assert st.em.lines == ["    x = 1"] and st.epoch == 0
    assert st.ids == 7  # ids are never reused


def test_comm_and_idioms_use_only_their_protocols():
    import ast

    from xlate.cir import ir
    from xlate.translate.triton import host
    from xlate.translate.triton.lift import Lifter
    from xlate.translate.triton.state import KernelContext

    def members(proto) -> set[str]:
        out: set[str] = set()
        for k in proto.__mro__:
            if k.__module__ == host.__name__:
                out |= set(k.__annotations__) | {n for n in vars(k) if not n.startswith("_")}
        return out

    root = Path(__file__).resolve().parents[1] / "xlate/translate/triton"
    for module, proto in (("comm", host.Block), ("idioms", host.LoopHost)):
        tree = ast.parse((root / f"{module}.py").read_text())
        used = {n.attr for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "L"}
        assert used and used <= members(proto), (module, sorted(used - members(proto)))
        lifter = Lifter(ir.FunctionIR("k", "kernel", [], ir.CType("void"), ()),
                        KernelContext(32, 1, 1, {}, {}, {}, {}, {}), "k.cu")
        assert all(hasattr(lifter, m) for m in members(proto)), module


WARP_CALL = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
__global__ void k(const unsigned* x, unsigned* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = (i < n) ? x[i] : 0u;
    unsigned w = {call};
    if (i < n) y[i] = w;
}}
"""


@pytest.mark.parametrize("call", ["__reduce_xor_sync(0xffffffffu, v)", "__lanemask_ge()", "__ballot_sync(0xffffffffu, v)",
                                  "__syncthreads_count(v)"])
def test_warp_intrinsics_of_the_one_list_are_refused_as_such(call):
    t = port(WARP_CALL.format(call=call))
    assert [d.code for d in t.blocking] == ["XL2003"], [d.format() for d in t.diagnostics]
    assert call.split("(")[0] in t.blocking[0].message


def test_intrinsic_lowerings_name_kinds_of_the_one_list():
    from xlate.parse.cfamily import intrinsic_categories
    from xlate.translate.triton.tables import intrinsic_lowering, intrinsics_table

    cats = intrinsic_categories()
    table = intrinsics_table()
    assert set(table["categories"]) <= set(cats.values())
    for name in table["names"]:
        assert cats.get(name.removeprefix("cg::")), name
    assert intrinsic_lowering("__barrier_sync") == "barrier" and intrinsic_lowering("__threadfence_block") == "fence"
    assert intrinsic_lowering("__shfl_xor") == "shuffle" and intrinsic_lowering("expf") is None


def test_local_array_written_in_a_run_time_loop_is_carried_not_leaked(tmp_path):
    """Its elements are carried by the loop (one variable each); the port once read a dry run's placeholder."""
    src = """
// xlate: x: in[rows * n], y: out[n], n: size(1..512), rows: size(1..64), grid: cdiv(n, 128), block: 128
__global__ void count(const unsigned char* x, int* y, int rows, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int counts[2] = {0, 0};
    unsigned char v;
    for (int r = 0; r < rows; r++) {
        v = x[r * n + i];
        if (v == '1') { counts[1]++; } else { counts[0]++; }
    }
    y[i] = counts[1] - counts[0];
}
"""
    t = port(src)
    assert t.kernels == ["count"] and "__dry_" not in t.text
    rows, n = 5, 300
    x = np.random.default_rng(3).choice(np.frombuffer(b"01", np.uint8), rows * n)
    xb = BufferArg("x", np.concatenate([np.full(7, 9, np.uint8), x, np.full(7, 9, np.uint8)]), 7, len(x))
    out = run(t.text, "count", [xb, buf("y", np.zeros(n, np.int32)), ScalarArg("rows", rows, "int32"),
                                ScalarArg("n", n, "int32")], tmp_path)
    ones = (x.reshape(rows, n) == ord("1")).sum(0)
    assert np.array_equal(out["y"][7:-7], ones - (rows - ones))


def test_qualified_math_functions_are_the_math_functions():
    src = """
// xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = ::fabsf(x[i]) + std::fmaxf(x[i], 0.0f) + cuda::std::fminf(x[i], 1.0f);
}
"""
    t = port(src)
    assert t.kernels == ["k"], [d.format() for d in t.diagnostics]
    assert "tl.abs(" in t.text and "tl.maximum(" in t.text and "tl.minimum(" in t.text
