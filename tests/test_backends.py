"""Backends: detection, compile caching, worker isolation (crash / timeout / out-of-bounds become results)."""

from __future__ import annotations

import shutil
import textwrap

import numpy as np
import pytest
from xlate.backends.base import BufferArg, CompileError, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import backend_names, get_backend

from tests.conftest import KERNELS
from xlate.errors import ToolchainMissing
from xlate.parse import parse_file
from xlate.verify.api import verify

TRITON_ADD = textwrap.dedent(
    """
    import os, signal, time
    import triton
    import triton.language as tl

    @triton.jit
    def _add(x, y, out, n, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs + SHIFT, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    # xlate: x: in[n], y: in[n], out: out[n], n: size(1..3000)
    def add(x, y, out, n):
        _add[(triton.cdiv(n, 128),)](x, y, out, n, SHIFT=0, BLOCK=128)

    # xlate: x: in[n], y: in[n], out: out[n], n: size(1..3000)
    def add_oob(x, y, out, n):
        _add[(triton.cdiv(n, 128),)](x, y, out, n, SHIFT=2, BLOCK=128)

    # xlate: x: in[n], y: in[n], out: out[n], n: size(1..3000)
    def add_crash(x, y, out, n):
        os.kill(os.getpid(), signal.SIGSEGV)

    # xlate: x: in[n], y: in[n], out: out[n], n: size(1..3000)
    def add_hang(x, y, out, n):
        while True:
            time.sleep(0.05)
    """
)


def test_every_backend_is_registered_and_detects():
    assert {"cuda", "hip", "triton", "ascendc"} <= set(backend_names())
    for name in backend_names():
        info = get_backend(name).detect()
        assert info.backend == name
        if not info.can_run:
            assert info.missing and info.remedy, f"{name} must say what is missing and what to do"


def test_ascendc_never_claims_to_compile_or_run_without_cann():
    b = get_backend("ascendc")
    info = b.detect()
    if info.found:
        pytest.skip("CANN is installed here")
    assert not info.can_compile and not info.can_run
    with pytest.raises(ToolchainMissing):
        b.compile("extern \"C\" __global__ __aicore__ void k() {}", "k", CompileOptions(), path="k.cpp")


CORPUS = [(f, k) for f in sorted(KERNELS.glob("*.cu")) for k in parse_file(f).kernels]


@pytest.mark.parametrize("path, kernel", CORPUS, ids=[f"{p.stem}:{k.name}" for p, k in CORPUS])
def test_nvrtc_compiles_every_corpus_kernel_for_sm90(path, kernel):
    b = get_backend("cuda")
    if not b.detect().can_compile:
        pytest.skip("NVRTC not installed")
    targs = []
    for t in kernel.template_params:
        targs.append("float" if t.kind == "type" else (t.default or "256"))
    art = b.compile(path.read_text(), kernel.name, CompileOptions(arch="sm_90", template_args=targs), path=str(path))
    assert art.meta["arch"] == "sm_90"
    assert art.entry and art.path.endswith(".cubin")
    with open(art.path, "rb") as fh:
        assert fh.read(4) == b"\x7fELF"  # a cubin is an ELF image


def test_nvrtc_error_is_reported_at_the_users_line(tmp_path):
    f = tmp_path / "bad.cu"
    f.write_text("__global__ void k(float* y) {\n  y[0] = undefined_name;\n}\n")
    with pytest.raises(CompileError) as info:
        get_backend("cuda").compile(f.read_text(), "k", CompileOptions(arch="sm_90"), path=str(f))
    assert f"{f}(2)" in info.value.log and "undefined_name" in info.value.log


def test_compile_cache_hits_on_identical_source():
    b = get_backend("cuda")
    src = (KERNELS / "saxpy.cu").read_text()
    first = b.compile(src, "saxpy", CompileOptions(arch="sm_90"), path="saxpy.cu")
    second = b.compile(src, "saxpy", CompileOptions(arch="sm_90"), path="saxpy.cu")
    assert second.key == first.key and second.compile.cached
    other = b.compile(src + "\n// changed\n", "saxpy", CompileOptions(arch="sm_90"), path="saxpy.cu")
    assert other.key != first.key


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_hipcc_rejects_broken_hip_with_its_log(tmp_path):
    b = get_backend("hip")
    with pytest.raises(CompileError) as info:
        b.check_file("#include <hip/hip_runtime.h>\n__global__ void k(float* y) { y[0] = nope; }\n", "gfx90a", "k.hip")
    assert "nope" in info.value.log


def _triton_run(tmp_path, launcher: str, n: int = 300, timeout: float = 60.0):
    b = get_backend("triton")
    art = b.compile(TRITON_ADD, launcher, CompileOptions(), path=str(tmp_path / "add.py"))
    g = 64
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    def buf(v):
        full = np.full(n + 2 * g, np.nan, np.float32)
        if v is not None:
            full[g : g + n] = v
        return full
    args = [BufferArg("x", buf(x), g, n), BufferArg("y", buf(y), g, n), BufferArg("out", buf(None), g, n), ScalarArg("n", n, "int32")]
    return b.run(art, args, LaunchConfig(), timeout=timeout), x, y, g


def test_triton_interpreter_run_matches_numpy(tmp_path):
    res, x, y, g = _triton_run(tmp_path, "add", n=1000)
    assert res.status == "ok"
    out = res.buffers["out"]
    np.testing.assert_allclose(out[g : g + 1000], x + y, rtol=1e-6)
    assert np.isnan(out[:g]).all() and np.isnan(out[g + 1000 :]).all()


def test_worker_crash_becomes_a_result_and_the_worker_restarts(tmp_path):
    res, *_ = _triton_run(tmp_path, "add_crash")
    assert res.status == "crash" and "SIGSEGV" in res.message
    res, *_ = _triton_run(tmp_path, "add")
    assert res.status == "ok"


def test_worker_hang_becomes_timeout(tmp_path):
    res, *_ = _triton_run(tmp_path, "add_hang", timeout=3.0)
    assert res.status == "timeout"


def test_a_wrapper_that_prints_to_stdout_gives_a_crash_not_a_hang(tmp_path):
    """A wrapping tool (compute-sanitizer without --log-file prints '========= ...' first) must not make the parent
    wait for a gigabyte-long frame header."""
    from xlate.backends.worker import Worker

    noisy = ["sh", "-c", 'echo "========= COMPUTE-SANITIZER"; exec "$0" "$@"']
    worker = Worker("triton", {"TRITON_INTERPRET": "1"}, noisy)
    status, reply, _ = worker.request({"op": "ping"}, None, 60.0)
    worker.stop()
    assert status == "crash" and "corrupted" in reply["message"], reply


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_gate_classifies_crash_timeout_and_oob_without_dying(tmp_path):
    path = _write(tmp_path, "add.py", TRITON_ADD)
    ref = _write(tmp_path, "ref.py", "def add(x, y, n):\n    return x + y\n")
    ok = verify(path, kernel="add", reference=f"{ref}:add", examples=8)
    assert ok.status == "verified", ok.summary()
    oob = verify(path, path, kernel="add", candidate_kernel="add_oob", examples=8)
    assert oob.status == "rejected" and oob.counterexample.failure == "out-of-bounds write"
    crash = verify(path, path, kernel="add", candidate_kernel="add_crash", examples=3)
    assert crash.status == "rejected" and crash.counterexample.failure == "crash"
    hang = verify(path, path, kernel="add", candidate_kernel="add_hang", examples=2, timeout=3.0)
    assert hang.status == "rejected" and hang.counterexample.failure == "timeout"


CUDA_FAULTS = textwrap.dedent(
    """
    // xlate: y: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
    __global__ void fill(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = i; }
    // xlate: y: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
    __global__ void segv(float* y, int n) { int i = threadIdx.x; *((volatile float*)0x10) = 1.0f; if (i < n) y[i] = i; }
    // xlate: y: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
    __global__ void spin(float* y, int n) { while (true) { asm volatile(""); } }
    // xlate: y: out[n], n: size(1..5000), grid: cdiv(n, 128), block: 128
    __global__ void past_end(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i <= n) y[i] = i; }
    """
)


@pytest.mark.gpu
def test_cuda_faults_become_verdicts(tmp_path):
    path = _write(tmp_path, "faults.cu", CUDA_FAULTS)
    ref = _write(tmp_path, "ref.py", "import numpy as np\ndef fill(n):\n    return np.arange(n, dtype=float)\n")
    assert verify(path, kernel="fill", reference=f"{ref}:fill", examples=10).status == "verified"
    for kernel, failure in (("segv", "crash"), ("spin", "timeout"), ("past_end", "out-of-bounds write")):
        v = verify(path, path, kernel="fill", candidate_kernel=kernel, examples=4, timeout=10.0)
        assert v.status == "rejected" and v.counterexample.failure == failure, v.summary()
    # the worker came back after the crash and the hang
    assert verify(path, kernel="fill", reference=f"{ref}:fill", examples=4).status == "verified"


RACY = textwrap.dedent(
    """
    // xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
    __global__ void rotate(const float* x, float* y, int n) {
        __shared__ float s[256];
        int i = blockIdx.x * 256 + threadIdx.x;
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        if (i < n) y[i] = s[(threadIdx.x + 1) % 256];
    }
    // xlate: x: in[n], y: out[n], n: size(1..4096), grid: cdiv(n, 256), block: 256
    __global__ void rotate_racy(const float* x, float* y, int n) {
        __shared__ float s[256];
        int i = blockIdx.x * 256 + threadIdx.x;
        s[threadIdx.x] = i < n ? x[i] : 0.0f;
        if (i < n) y[i] = s[(threadIdx.x + 1) % 256];
    }
    """
)


@pytest.mark.gpu
def test_sanitize_finds_a_shared_memory_race(tmp_path):
    from xlate.verify.sanitize import sanitizer_path

    if sanitizer_path() is None:
        pytest.skip("compute-sanitizer not installed")
    path = _write(tmp_path, "racy.cu", RACY)
    clean = verify(path, path, kernel="rotate", examples=4, sanitize=True)
    assert clean.status == "verified", clean.summary()
    racy = verify(path, path, kernel="rotate", candidate_kernel="rotate_racy", examples=4, sanitize=True)
    assert racy.status == "rejected", racy.summary()
    assert racy.counterexample.failure in ("mismatch", "nondeterministic"), racy.summary()
    # The fuzzer may see the race's symptoms first; the sanitizer must see the race itself, and only there.
    from xlate.specs import build_spec
    from xlate.verify.runner import Side
    from xlate.verify.sanitize import sanitize
    from xlate.verify.strategies import explicit_cases

    findings = {}
    for kernel in ("rotate", "rotate_racy"):
        side = Side(path, kernel, label=kernel)
        spec = build_spec(side.unit, kernel)
        findings[kernel] = sanitize(side, spec, explicit_cases(spec, 1 << 16, 4096)[:3])
    assert findings["rotate"] == []
    assert [(f.side, f.tool) for f in findings["rotate_racy"]] == [("rotate_racy", "racecheck")]
    assert findings["rotate_racy"][0].errors > 0


def test_timed_launches_times_back_to_back_batches():
    """Benchmarks launch in batches between one event pair (host latency hidden); samples are per launch."""
    from xlate.backends.base import batches, timed_launches

    log: list[str] = []

    class Event:
        def __init__(self, name: str):
            self.name = name

        def record(self) -> None:
            log.append(self.name)

        def synchronize(self) -> None:
            pass

    times, path = timed_launches(lambda: log.append("launch"), Event("start"), Event("stop"),
                                 lambda a, b: 10.0, {"warmup": 2, "repeat": 12})
    assert batches(12) == [3, 3, 2, 2, 2] and batches(3) == [1, 1, 1]
    assert log[:2] == ["launch", "launch"]  # warm-up, untimed
    assert log[2:7] == ["start", "launch", "launch", "launch", "stop"]
    assert log.count("launch") == 14 and log.count("start") == 5
    assert times == [10.0 / 1e3 / n for n in (3, 3, 2, 2, 2)] and path == "stream"

    # with graphs asked for: each batch size captured once (after the warm-up), every batch a replay
    log.clear()
    captured: list[int] = []

    def capture(launch, n):
        captured.append(n)
        return lambda: log.append(f"replay {n}")

    times, path = timed_launches(lambda: log.append("launch"), Event("start"), Event("stop"), lambda a, b: 10.0,
                                 {"warmup": 1, "repeat": 12, "graph": 1}, capture)
    assert path == "graph" and captured == [2, 3]
    assert log == ["launch", "start", "replay 3", "stop", "start", "replay 3", "stop"] + [
        "start", "replay 2", "stop"] * 3
    assert times == [10.0 / 1e3 / n for n in (3, 3, 2, 2, 2)]

    # a launcher that cannot be captured (capture gives None): launched from the stream, and said so
    log.clear()
    times, path = timed_launches(lambda: log.append("launch"), Event("start"), Event("stop"), lambda a, b: 10.0,
                                 {"warmup": 0, "repeat": 3, "graph": 1}, lambda launch, n: None)
    assert path == "stream" and log == ["start", "launch", "stop"] * 3
