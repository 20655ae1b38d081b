"""Launch configurations of Triton ports, the parts that need no kernel run: block batching of lifted kernels
(xlate/translate/triton/batching.py), the module's table and its restriction (xlate/verify/configs.py), and the
launch runtime a port carries (templates/triton/launch_runtime.py): what it picks, times and caches."""

from __future__ import annotations

import ast
import json
import textwrap
import types
from pathlib import Path

import pytest

from xlate.parse import parse_file
from xlate.resources import templates_dir
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.batching import GRID_X, ROWS, batch_kernel
from xlate.translate.triton.launch_configs import configurations
from xlate.translate.triton.translator import CudaToTriton
from xlate.verify.configs import declared, only, restrict

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"


def lifted(stem: str, kernel: str) -> str:
    unit = parse_file(KERNELS / f"{stem}.cu")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions(kernels=[kernel]))
    assert kernel in t.kernels
    return t.text


def kernel_def(src: str) -> ast.FunctionDef:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


ELEMENTWISE = """
    @triton.jit
    def _k(x, y, n, BX: tl.constexpr):
        pid_x = tl.program_id(0)
        lane_x = tl.arange(0, BX)
        i = (pid_x * 256) + lane_x
        v = tl.load(x + i, mask=i < n, other=0)
        tl.store(y + i, v * 2.0, mask=i < n)
"""


# -- block batching ------------------------------------------------------------------------------------------


def test_an_elementwise_kernel_batches_blocks_as_rows_clamped_to_the_grid():
    src, why = batch_kernel(kernel_def(ELEMENTWISE), "_k_blocks")
    assert src is not None, why
    fn = kernel_def(src)
    assert [a.arg for a in fn.args.args] == ["x", "y", "n", GRID_X, "BX", ROWS]
    assert ast.unparse(fn.args.args[-1].annotation) == "tl.constexpr"
    body = [ast.unparse(s) for s in fn.body]
    assert body[0] == f"pid_x = tl.minimum(tl.program_id(0) * {ROWS} + tl.arange(0, {ROWS}), {GRID_X} - 1)[:, None]"
    assert body[1] == "lane_x = tl.arange(0, BX)[None, :]"
    assert body[2:] == [ast.unparse(s) for s in kernel_def(ELEMENTWISE).body[2:]]  # the rest as lifted


def test_a_lane_reduction_becomes_one_per_block_and_griddim_the_cuda_grid():
    src, why = batch_kernel(kernel_def("""
        @triton.jit
        def _k(x, out, n, BX: tl.constexpr):
            pid_x = tl.program_id(0)
            lane_x = tl.arange(0, BX)
            acc = tl.full([BX], 0.0, tl.float32)
            i = (pid_x * 256) + lane_x
            acc = tl.where(i < n, tl.load(x + i, mask=i < n, other=0), acc)
            s = tl.sum(tl.broadcast_to(acc, (BX,)), axis=0)
            c = tl.cumsum(acc, axis=0)
            tl.store(out + pid_x, s + tl.num_programs(0))
            tl.store(out + i, c, mask=i < n)
    """), "_k_blocks")
    assert src is not None, why
    assert f"tl.full([{ROWS}, BX], 0.0, tl.float32)" in src
    assert f"s = tl.sum(tl.broadcast_to(acc, ({ROWS}, BX)), axis=1)[:, None]" in src
    assert f"c = tl.cumsum(tl.broadcast_to(acc, ({ROWS}, BX)), axis=1)" in src
    assert f"s + {GRID_X}" in src and "num_programs" not in src


@pytest.mark.parametrize(("body", "why"), [
    ("old = tl.atomic_add(y + i, 1.0, mask=i < n)", "tl.atomic_add"),
    ("if pid_x < n:\n        tl.store(y + i, 1.0)", "control flow depends on the block"),
    ("for j in range(pid_x, n, 7):\n        tl.store(y + j, 1.0)", "control flow depends on the block"),
    ("s = 0.0\n    for j in range(0, n):\n        s = s + tl.sum(tl.load(x + i), axis=0)\n    tl.store(y + i, s)",
     "carried through a loop"),
    ("t = tl.dot(x, y)", "tl.dot"),
    ("t = [i, i]", "List expression"),
])
def test_what_batching_does_not_know_keeps_the_default_alone(body, why):
    src = ("@triton.jit\ndef _k(x, y, n, BX: tl.constexpr):\n    pid_x = tl.program_id(0)\n"
           "    lane_x = tl.arange(0, BX)\n    i = (pid_x * 256) + lane_x\n    " + body + "\n")
    out, reason = batch_kernel(kernel_def(src), "_k_blocks")
    assert out is None and why in reason


def test_vector_components_stay_a_trailing_axis_behind_the_blocks():
    """The lift of a float4 load ([BX, 4] through expand_dims, split, join, reshape): the leading axis of blocks
    is prepended to the reshapes of per-block values, a value the same in every block keeps a leading 1."""
    src, why = batch_kernel(kernel_def("""
        @triton.jit
        def _k(a, c, n, BX: tl.constexpr):
            pid_x = tl.program_id(0)
            lane_x = tl.arange(0, BX)
            i = (pid_x * 256) + lane_x
            v = tl.load(tl.expand_dims(a + i * 4, -1) + tl.arange(0, 4), mask=tl.expand_dims(i < n, -1), other=0)
            lo, hi = tl.split(tl.reshape(v, [BX, 2, 2]))
            w = tl.reshape(tl.expand_dims(lane_x, -1) + tl.arange(0, 4), [BX, 2, 2])
            tl.store(tl.expand_dims(c + i * 4, -1) + tl.arange(0, 4), tl.reshape(tl.join(lo, hi) + w, [BX, 4]))
    """), "_k_blocks")
    assert src is not None, why
    assert f"lo, hi = tl.split(tl.reshape(v, [{ROWS}, BX, 2, 2]))" in src
    assert "w = tl.reshape(tl.expand_dims(lane_x, -1) + tl.arange(0, 4), [1, BX, 2, 2])" in src
    assert f"tl.reshape(tl.join(lo, hi) + w, [{ROWS}, BX, 4])" in src


@pytest.mark.parametrize(("body", "why"), [
    ("v = tl.expand_dims(i, 0)", "trailing axis"),
    ("v = tl.reshape(i, [2, BX // 2])", "tl.reshape other than"),
    ("v = i + tl.arange(0, n)", "computed range"),
])
def test_vector_operations_on_leading_axes_are_not_batched(body, why):
    src = ("@triton.jit\ndef _k(x, y, n, BX: tl.constexpr):\n    pid_x = tl.program_id(0)\n"
           "    lane_x = tl.arange(0, BX)\n    i = (pid_x * 256) + lane_x\n    " + body + "\n")
    out, reason = batch_kernel(kernel_def(src), "_k_blocks")
    assert out is None and why in reason


def test_a_two_dimensional_block_is_not_batched():
    out, reason = batch_kernel(kernel_def("""
        @triton.jit
        def _k(x, BX: tl.constexpr, BY: tl.constexpr):
            pid_x = tl.program_id(0)
            lane_x = tl.arange(0, BX)[None, :]
    """), "_k_blocks")
    assert out is None and "two-dimensional" in reason


def test_configurations_start_with_the_lifters_launch():
    assert configurations(256, 8) == [{"blocks": 1, "num_warps": 8}, {"blocks": 1, "num_warps": 4},
                                      {"blocks": 4, "num_warps": 4}, {"blocks": 8, "num_warps": 8},
                                      {"blocks": 16, "num_warps": 8}]
    assert configurations(128, 4)[1:] == [{"blocks": 8, "num_warps": 4}, {"blocks": 16, "num_warps": 8},
                                          {"blocks": 32, "num_warps": 8}]  # 4 warps: nothing to pack
    assert configurations(1024, 32)[:2] == [{"blocks": 1, "num_warps": 32}, {"blocks": 1, "num_warps": 4}]
    assert configurations(4096, 4) == [{"blocks": 1, "num_warps": 4}]  # no R >= 2 fits the table


def test_a_lifted_port_keeps_its_default_launch_word_for_word():
    plain = lifted("relu", "relu")
    table = declared(plain)
    assert table == {"relu": configurations(256, 8)}  # one thread per CUDA thread: 8 warps
    launcher = next(n for n in ast.parse(plain).body if isinstance(n, ast.FunctionDef) and n.name == "relu")
    run = next(n for n in ast.walk(launcher) if isinstance(n, ast.FunctionDef) and n.name == "_xl_run")
    default = ast.unparse(run.body[0].body[0])  # the `blocks == 1` branch
    assert default == "_relu_kernel[grid](x, y, n, BX=256, **_xl_nvcc_options(), num_warps=_xl_c['num_warps'])"
    assert "_relu_kernel_blocks[(triton.cdiv(grid[0], _xl_c['blocks']),) + tuple(grid[1:])](x, y, n, grid[0]" in plain


def test_a_port_whose_kernels_cannot_be_batched_offers_its_lanes_packed_into_fewer_warps():
    text = lifted("dot_atomic", "dot_atomic")  # an atomic: no batching; 256 threads: 8 warps, or 4 packed
    assert declared(text) == {"dot_atomic": [{"blocks": 1, "num_warps": 8}, {"blocks": 1, "num_warps": 4}]}
    assert "_dot_atomic_kernel_blocks" not in text
    launcher = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "dot_atomic")
    run = next(n for n in ast.walk(launcher) if isinstance(n, ast.FunctionDef) and n.name == "_xl_run")
    assert [ast.unparse(s) for s in run.body] == [
        "_dot_atomic_kernel[grid](a, b, result, n, BX=256, **_xl_nvcc_options(), num_warps=_xl_c['num_warps'])"]


def test_a_port_whose_kernels_cannot_be_batched_nor_packed_is_unchanged():
    from tests.test_triton_lift import port

    t = port("""
// xlate: x: in[n], total: inout[1], n: size(1..5000), grid: cdiv(n, 128), block: 128
__global__ void sum_atomic(const float* x, float* total, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, x[i]);
}
""")
    assert declared(t.text) is None and "_xl_launch" not in t.text
    assert "_sum_atomic_kernel[grid](x, total, n, BX=128, num_warps=4, **_xl_nvcc_options())" in t.text


# -- the table -------------------------------------------------------------------------------------------------


TABLE_MODULE = """\
def f(x):
    return x


_XL_CONFIGS = {
    "f": [{"blocks": 1}, {"blocks": 2}, {"blocks": 4}],
    "g": [{"blocks": 1}, {"blocks": 8}],
}
# after
"""


def test_restrict_keeps_the_chosen_entries_in_order_with_notes_above():
    out = restrict(TABLE_MODULE, {"f": [2, 0]}, ["launch configurations of f: 2 of 3 kept", "  discarded [blocks=2]"])
    assert declared(out) == {"f": [{"blocks": 1}, {"blocks": 4}], "g": [{"blocks": 1}, {"blocks": 8}]}
    assert "# launch configurations of f: 2 of 3 kept\n#   discarded [blocks=2]\n_XL_CONFIGS = {" in out
    assert out.startswith("def f(x):") and out.endswith("}\n# after\n")
    assert declared(only(TABLE_MODULE, "g", 1)) == {"f": declared(TABLE_MODULE)["f"], "g": [{"blocks": 8}]}


def test_a_table_that_is_not_a_literal_declares_nothing():
    assert declared("_XL_CONFIGS = make_table()\n") is None
    assert declared("_XL_CONFIGS = {'f': []}\n") is None
    assert declared("x = 1\n") is None
    assert restrict("_XL_CONFIGS = make()\n", {"f": [0]}) == "_XL_CONFIGS = make()\n"


# -- the launch runtime ----------------------------------------------------------------------------------------


def runtime(configs: dict, *, interpret: bool = False, module_file: str | None = None) -> dict:
    """A fresh namespace holding the runtime a port carries, as a new process would load it."""
    ns: dict = {"os": __import__("os"), "_INTERPRET": interpret, "_XL_CONFIGS": configs,
                "triton": types.SimpleNamespace(__version__="9.9")}
    if module_file:
        ns["__file__"] = module_file
    exec(compile((templates_dir() / "triton" / "launch_runtime.py").read_text(), "launch_runtime.py", "exec"), ns)
    return ns


CONFIGS = [{"blocks": 1, "num_warps": 4}, {"blocks": 4, "num_warps": 4}, {"blocks": 16, "num_warps": 8}]


def test_the_choice_is_timed_once_cached_on_disk_and_reused_by_a_later_process(tmp_path, monkeypatch):
    monkeypatch.setenv("XLATE_TRITON_TUNE_CACHE", str(tmp_path / "tune.json"))
    timed = []

    def timer(pick):
        return lambda: timed.append(pick) or pick

    first = runtime({"k": CONFIGS})
    assert first["_xl_pick"]("key-a", CONFIGS, timer(CONFIGS[2])) == CONFIGS[2]
    assert first["_xl_pick"]("key-a", CONFIGS, timer(CONFIGS[1])) == CONFIGS[2]  # this process: memo
    assert json.loads((tmp_path / "tune.json").read_text()) == {"key-a": CONFIGS[2]}
    later = runtime({"k": CONFIGS})
    assert later["_xl_pick"]("key-a", CONFIGS, timer(CONFIGS[1])) == CONFIGS[2]  # another process: the file
    assert timed == [CONFIGS[2]]
    assert later["_xl_pick"]("key-b", CONFIGS, timer(CONFIGS[0])) == CONFIGS[0]  # another grid size: timed
    assert json.loads((tmp_path / "tune.json").read_text()) == {"key-a": CONFIGS[2], "key-b": CONFIGS[0]}


def test_a_cached_choice_outside_the_verified_table_is_never_used(tmp_path, monkeypatch):
    """A cache written when the port had another table (e.g. before a configuration was discarded) cannot bring
    that configuration back: the choice must be one of the table's, else it is timed again among them."""
    cache = tmp_path / "tune.json"
    monkeypatch.setenv("XLATE_TRITON_TUNE_CACHE", str(cache))
    cache.write_text(json.dumps({"key": {"blocks": 2, "num_warps": 4}}))
    kept = CONFIGS[:2]
    ns = runtime({"k": kept})
    assert ns["_xl_pick"]("key", kept, lambda: kept[1]) == kept[1]
    assert json.loads(cache.read_text()) == {"key": kept[1]}


@pytest.mark.parametrize(("interpret", "tune"), [(True, "1"), (False, "0")])
def test_the_interpreter_and_tune_off_launch_the_default_and_time_nothing(monkeypatch, interpret, tune):
    monkeypatch.setenv("XLATE_TRITON_TUNE", tune)
    ns = runtime({"k": CONFIGS}, interpret=interpret)
    ns["_xl_choose"] = lambda *a: pytest.fail("timed")
    launched = []
    ns["_xl_launch"]("k", launched.append, (1000,), ())
    assert launched == [CONFIGS[0]] and ns["_XL_CHOSEN"] == {"k": CONFIGS[0]}


def test_a_single_configuration_is_launched_without_timing(monkeypatch):
    monkeypatch.setenv("XLATE_TRITON_TUNE", "1")
    ns = runtime({"k": [CONFIGS[1]]})
    ns["_xl_choose"] = lambda *a: pytest.fail("timed")
    launched = []
    ns["_xl_launch"]("k", launched.append, (8,), ())
    assert launched == [CONFIGS[1]]


def test_the_cache_key_changes_with_the_module(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("x = 2\n")
    sig_a = runtime({}, module_file=str(a))["_xl_signature"]()
    assert sig_a == runtime({}, module_file=str(a))["_xl_signature"]()
    assert sig_a != runtime({}, module_file=str(b))["_xl_signature"]()


class _Clock:
    now = 0.0


class _Event:
    def __init__(self, enable_timing: bool = False):
        self.t = 0.0

    def record(self) -> None:
        self.t = _Clock.now

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, other: _Event) -> float:
        return other.t - self.t


class _Tensor:
    is_cuda = True
    device = "cuda:0"

    def __init__(self, values: list[float]):
        self.values = list(values)

    def clone(self) -> _Tensor:
        return _Tensor(self.values)

    def copy_(self, other: _Tensor) -> None:
        self.values = list(other.values)

    def numel(self) -> int:
        return len(self.values)


def test_the_first_launch_on_a_gpu_times_each_configuration_and_restores_the_arguments(tmp_path, monkeypatch):
    """The timing path with a stand-in for torch's CUDA events: per-launch costs are what each configuration's
    launch adds to a fake clock; the default stays unless another is at least 3 % faster; a configuration that
    fails to launch on this GPU is skipped; the arguments are as they were before the one real launch."""
    fake = types.SimpleNamespace(Tensor=_Tensor, cuda=types.SimpleNamespace(
        Event=_Event, is_current_stream_capturing=lambda: False, get_device_name=lambda device: "Fake GPU 141GB"))
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    monkeypatch.setenv("XLATE_TRITON_TUNE", "1")
    monkeypatch.setenv("XLATE_TRITON_TUNE_CACHE", str(tmp_path / "tune.json"))
    configs = [{"blocks": 1}, {"blocks": 2}, {"blocks": 4}, {"blocks": 8}]
    cost = {1: 1.0, 2: 0.99, 4: 0.5}  # ms per launch; 8 blocks: out of resources here
    y = _Tensor([0.0])

    def launch(c):
        if c["blocks"] == 8:
            raise RuntimeError("out of resources")
        _Clock.now += cost[c["blocks"]]
        y.values[0] += 1.0

    ns = runtime({"k": configs}, module_file=__file__)
    ns["_xl_launch"]("k", launch, (1000,), (y, 1000))
    assert ns["_XL_CHOSEN"] == {"k": {"blocks": 4}}
    assert y.values == [1.0]  # restored after the timing, then launched once
    assert [c for c, _ in ns["_XL_TIMINGS"]["k"]] == configs[:3]
    assert [round(ms, 3) for _, ms in ns["_XL_TIMINGS"]["k"]] == [1.0, 0.99, 0.5]
    (key, chosen), = json.loads((tmp_path / "tune.json").read_text()).items()
    assert chosen == {"blocks": 4} and key.split("|")[1:] == ["k", "Fake GPU 141GB", "triton 9.9", "1024", "n1"]
    cost[2] = 0.1  # a later process finds the cached choice and times nothing
    later = runtime({"k": configs}, module_file=__file__)
    later["_xl_launch"]("k", launch, (1000,), (y, 1000))
    assert later["_XL_CHOSEN"] == {"k": {"blocks": 4}} and later["_XL_TIMINGS"] == {} and y.values == [2.0]


def test_a_graph_capture_replays_the_choice_made_before_it(tmp_path, monkeypatch):
    """Inside a CUDA graph capture nothing may synchronise, so nothing is timed; the configuration chosen for the
    same launch before the capture is the one captured (the benchmark replays graphs: it timed the default
    instead), the default where none was chosen."""
    capturing = [False]
    fake = types.SimpleNamespace(Tensor=_Tensor, cuda=types.SimpleNamespace(
        Event=_Event, is_current_stream_capturing=lambda: capturing[0], get_device_name=lambda device: "Fake GPU"))
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    monkeypatch.setenv("XLATE_TRITON_TUNE", "1")
    monkeypatch.setenv("XLATE_TRITON_TUNE_CACHE", str(tmp_path / "tune.json"))
    configs = [{"blocks": 1}, {"blocks": 2}]
    cost = {1: 1.0, 2: 0.5}
    launched = []

    def launch(c):
        _Clock.now += cost[c["blocks"]]
        launched.append(c)

    ns = runtime({"k": configs}, module_file=__file__)
    capturing[0] = True
    ns["_xl_launch"]("k", launch, (64,), (_Tensor([0.0]), 64))  # no choice yet: the default, nothing timed
    assert launched == [{"blocks": 1}] and ns["_XL_TIMINGS"] == {}
    capturing[0] = False
    ns["_xl_launch"]("k", launch, (64,), (_Tensor([0.0]), 64))  # timed outside the capture: 2 blocks win
    assert ns["_XL_CHOSEN"] == {"k": {"blocks": 2}}
    launched.clear()
    capturing[0] = True
    ns["_xl_launch"]("k", launch, (64,), (_Tensor([0.0]), 64))
    assert launched == [{"blocks": 2}]
    fresh = runtime({"k": configs}, module_file=__file__)  # another process: the cache file's choice
    fresh["_xl_launch"]("k", launch, (64,), (_Tensor([0.0]), 64))
    assert launched[-1] == {"blocks": 2} and fresh["_XL_TIMINGS"] == {}


def test_configurations_are_timed_in_interleaved_rounds_so_a_slow_start_does_not_pick_one(monkeypatch):
    """A GPU whose clock starts slow (every launch costs 1.5x for the first 12 ms of the timing, as a card
    ramping up from idle): timed one configuration after the other, the default took the slow start and lost to
    an equally fast packed launch; timed in interleaved rounds, both see it and the default stays. A clearly
    faster configuration still wins under the same clock."""
    fake = types.SimpleNamespace(Tensor=_Tensor, cuda=types.SimpleNamespace(Event=_Event))
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    ns = runtime({})
    cost = {1: 1.0, 2: 1.0}
    began = [0.0]

    def launch(c):
        _Clock.now += cost[c["blocks"]] * (1.5 if _Clock.now - began[0] < 12.0 else 1.0)

    began[0] = _Clock.now
    timings: list = []
    assert ns["_xl_time"]([{"blocks": 1}, {"blocks": 2}], launch, [_Tensor([1.0])], timings) == {"blocks": 1}
    assert [round(ms, 3) for _, ms in timings] == [1.0, 1.0]  # the medians: past the slow start for both
    cost[2] = 0.8
    began[0] = _Clock.now
    assert ns["_xl_time"]([{"blocks": 1}, {"blocks": 2}], launch, [_Tensor([1.0])], []) == {"blocks": 2}


def test_only_a_clearly_faster_configuration_replaces_the_default(monkeypatch):
    fake = types.SimpleNamespace(Tensor=_Tensor, cuda=types.SimpleNamespace(Event=_Event))
    monkeypatch.setitem(__import__("sys").modules, "torch", fake)
    ns = runtime({})
    cost = {1: 1.0, 2: 0.98}

    def launch(c):
        _Clock.now += cost[c["blocks"]]

    timings: list = []
    assert ns["_xl_time"]([{"blocks": 1}, {"blocks": 2}], launch, [_Tensor([1.0])], timings) == {"blocks": 1}
    cost[2] = 0.9
    assert ns["_xl_time"]([{"blocks": 1}, {"blocks": 2}], launch, [_Tensor([1.0])], []) == {"blocks": 2}


def test_the_cache_key_tells_row_lengths_apart_at_one_grid():
    """A row kernel's grid is its row count: 4096 rows of 64 and 4096 rows of 8192 want different configurations,
    so the key holds the largest buffer's size (a power of two) beside the grid's; sizes within one power share."""
    torch = pytest.importorskip("torch")
    key = runtime({})["_xl_key"]
    short, long_, near = (torch.empty(4096 * w) for w in (64, 8192, 60))
    assert key("k", "gpu", 4096, [short]) != key("k", "gpu", 4096, [long_])
    assert key("k", "gpu", 4096, [short]) == key("k", "gpu", 4096, [near])
    assert key("k", "gpu", 4096, [short]) != key("k", "gpu", 2048, [short])


# -- nvcc's floating point -----------------------------------------------------------------------------------


def _port_module(tmp_path, monkeypatch, interpret: str):
    import importlib.util

    path = tmp_path / "relu_port.py"
    path.write_text(lifted("relu", "relu"))
    monkeypatch.setenv("TRITON_INTERPRET", interpret)
    spec = importlib.util.spec_from_file_location("relu_port", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("backend", "expected"), [
    ("cuda", {"enable_reflect_ftz": False, "enable_fp_fusion": True}), ("hip", {})])
def test_a_port_launches_with_nvccs_subnormals_on_nvidia_only(tmp_path, monkeypatch, backend, expected):
    # Triton links libdevice with flush-to-zero; nvcc keeps subnormals by default, so a port of
    # coshf(x)/sinhf(x) - 1/x gave inf where its source gives 0 near FLT_MIN (rejected on the H200); nvcc contracts
    # a*b+c, which Triton 3.10 will stop doing by default. The options are passed where this Triton has them, on
    # its NVIDIA backend only (HIP's options have no such fields).
    pytest.importorskip("triton")
    import triton
    from triton.backends.nvidia.compiler import CUDAOptions

    expected = {k: v for k, v in expected.items() if k in CUDAOptions.__dataclass_fields__}
    target = types.SimpleNamespace(backend=backend)
    monkeypatch.setattr(triton.runtime, "driver", types.SimpleNamespace(
        active=types.SimpleNamespace(get_current_target=lambda: target)))
    module = _port_module(tmp_path, monkeypatch, "0")
    assert module._xl_nvcc_options() == expected
    assert _port_module(tmp_path, monkeypatch, "1")._xl_nvcc_options() == {}  # the interpreter takes no options


@pytest.mark.gpu
def test_on_a_gpu_a_port_keeps_subnormal_intermediates_as_its_cuda_source(tmp_path):
    # The source compiled as the gate compiles it (NVRTC, no -ftz) against the lifted port on the same inputs
    # near FLT_MIN, where libdevice with FTZ made coshf(x)/sinhf(x) infinite.
    import importlib.util

    import cupy as cp
    import numpy as np
    import torch

    from xlate.port import PortRequest, port_file

    src = tmp_path / "coth.cu"
    src.write_text("extern \"C\" __global__ void coth_minus(const float* a, float* o, int n) {\n"
                   "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                   "  if (t < n) { float x = a[t]; o[t] = coshf(x) / sinhf(x) - 1.f / x; }\n}\n")
    out = tmp_path / "coth_triton.py"
    port_file(PortRequest(source=str(src), target="triton", output=str(out), kernels=["coth_minus"], engine="rules",
                          verify=False, force=True))
    spec = importlib.util.spec_from_file_location("coth_port", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    n = 300
    rng = np.random.default_rng(7)  # normal numbers just above FLT_MIN, where 1/x is finite and sinhf(x) = x
    x = (rng.uniform(np.finfo(np.float32).tiny, 4.7e-38, n) * rng.choice([-1, 1], n)).astype(np.float32)
    kernel = cp.RawKernel(src.read_text(), "coth_minus")
    a, o = cp.asarray(x), cp.full(n, np.nan, dtype=cp.float32)
    kernel(((n + 255) // 256,), (256,), (a, o, np.int32(n)))
    expected = cp.asnumpy(o)
    got = torch.full((n,), float("nan"), dtype=torch.float32, device="cuda")
    module.coth_minus(torch.from_numpy(x).cuda(), got, n)
    got = got.cpu().numpy()
    assert np.isfinite(expected).all() and np.isfinite(got).all()  # FTZ in libdevice: inf at 48 of 256 before
    # the difference of two terms of size 1/|x|: rounding differences are ulps of those terms, not of the result
    assert (np.abs(got - expected) <= 8 * np.finfo(np.float32).eps / np.abs(x)).all()
