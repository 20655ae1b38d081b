"""Kernel parameters spelt like the names of the argument binder Triton's JIT generates for every kernel
(`def dynamic_func(<params>, **options)`, which also reads `backend`, `specialize_impl` and `JITCallable` from its
globals) are renamed in the port. A real kernel took `options` (an array of option records) and its port died at
its first launch with "duplicate argument 'options' in function definition". Runs under the Triton interpreter
against NumPy."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import run as run_raw
from tests.test_triton_realworld_patterns import GUARD, buf, poisoned, rng
from xlate.parse import parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.triton.translator import CudaToTriton

KERNEL = """
__global__ void blend(const float* options, const float* backend, float* params, int num_warps, float warmup) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_warps) params[i] = options[i] * warmup + backend[i];
}
void go(const float* o, const float* b, float* p, int n) { blend<<<(n + 127) / 128, 128>>>(o, b, p, n, 0.5f); }
"""

BINDER_GLOBALS = {"options", "backend", "specialize_impl", "JITCallable"}


def test_parameters_named_like_the_jit_binder_are_renamed_and_the_port_runs(tmp_path: Path):
    unit = parse_string(KERNEL, str(tmp_path / "blend.cu"), "cuda")
    t = CudaToTriton().translate(unit, unit.text, TranslateOptions())
    assert t.kernels == ["blend"], [d.format() for d in t.diagnostics]
    jitted = [f for f in ast.parse(t.text).body if isinstance(f, ast.FunctionDef)
              and any(ast.unparse(d).startswith("triton.jit") for d in f.decorator_list)]
    assert jitted
    for f in jitted:  # the binder Triton builds from this signature must compile and see its own globals
        names = [a.arg for a in f.args.args]
        assert not BINDER_GLOBALS & set(names), names
        compile(f"def dynamic_func({', '.join([*names, '**options'])}):\n    pass\n", "<binder>", "exec")
    n = 301
    o, b = rng(1).standard_normal(n).astype(np.float32), rng(2).standard_normal(n).astype(np.float32)
    out = run_raw(t.text, "blend", [buf("options", o), buf("backend", b), buf("params", poisoned(n, np.float32)),
                                    ScalarArg("num_warps", n, "int32"), ScalarArg("warmup", 0.5, "float32")], tmp_path)
    np.testing.assert_allclose(out["params"][GUARD:-GUARD], o.astype(np.float64) * 0.5 + b, rtol=1e-6)
