"""The gate builds a Triton port's kernels without value specialisation (backends/triton_jit.py): once per dtype
and constexpr set, not once per class of its integer arguments' values."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

MODULE = '''
import triton
import triton.language as tl


@triton.jit
def _twice(x):
    return x * 2


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(y_ptr + i, _twice(tl.load(x_ptr + i, mask=m)) * factor, mask=m)


_tuned = triton.autotune(configs=[triton.Config({}, num_warps=4)], key=["n"])(_scale_kernel)
LIMIT = 7


def scale(x, y, n):
    _scale_kernel[(triton.cdiv(n, 128),)](x, y, n, 1.5, BLOCK=128)
'''


def load(tmp_path: Path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_every_plain_kernel_is_rebound_without_value_specialisation(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)  # JIT functions, as on a GPU (nothing is compiled here)
    from triton.runtime.jit import JITFunction
    from xlate.backends.triton_jit import unspecialised

    module = load(tmp_path, "xl_spec_plain")
    before = module._scale_kernel
    tuned = module._tuned
    assert unspecialised(module) == ["_twice", "_scale_kernel"]
    kernel = module._scale_kernel
    assert type(kernel) is JITFunction and kernel is not before and kernel.fn is before.fn
    flags = {p.name: (p.is_constexpr, p.do_not_specialize) for p in kernel.params}
    assert flags == {"x_ptr": (False, True), "y_ptr": (False, True), "n": (False, True), "factor": (False, True),
                     "BLOCK": (True, False)}
    assert all(not p.do_not_specialize for p in before.params)  # the original is not changed in place
    assert module._tuned is tuned and module.LIMIT == 7  # wrappers and plain values are left alone


def test_interpreter_functions_are_left_alone(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("triton")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from xlate.backends.triton_jit import unspecialised

    module = load(tmp_path, "xl_spec_interp")
    kernel = module._scale_kernel
    assert unspecialised(module) == [] and module._scale_kernel is kernel


@pytest.mark.gpu
@pytest.mark.parametrize("specialise", ["0", "1"])
def test_on_a_gpu_the_gates_runtime_builds_one_variant_where_triton_would_build_one_per_value_class(
        tmp_path: Path, monkeypatch, specialise: str) -> None:
    # a multiple of 16 and any other value of n are two builds for Triton by default (n = 1 may be a third);
    # the gate's runtime builds one, and computes the same values.
    import numpy as np
    from xlate.backends.base import BufferArg, LaunchConfig, ScalarArg
    from xlate.backends.triton import TritonRuntime
    from xlate.backends.triton_jit import SPECIALISE_VARIABLE

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.setenv(SPECIALISE_VARIABLE, specialise)
    path = tmp_path / "xl_spec_gpu.py"
    path.write_text(MODULE)
    runtime = TritonRuntime()
    handle = runtime.load({"key": f"spec{specialise}", "path": str(path), "entry": "scale"})
    rng = np.random.default_rng(3)
    for n in (1, 16, 17, 32, 33, 1000):
        x = rng.standard_normal(n).astype(np.float32)
        y = np.full(n, np.nan, np.float32)
        args = [BufferArg("x", x, 0, n), BufferArg("y", y, 0, n), ScalarArg("n", n, "int32")]
        out, _, meta = runtime.run(handle, args, LaunchConfig((1, 1, 1), (1, 1, 1), 0))
        np.testing.assert_array_equal(out["y"], (x * 2) * np.float32(1.5))
    assert meta["compiles"] == 1 if specialise == "0" else meta["compiles"] >= 2
