"""EMULATION (NumPy on the CPU, not an NPU): the generated AscendC ports, executed by xlate's emulator of the
AscendC subset they use, against the independent NumPy references of examples/references/. This checks the
tiling, per-core split, tails and instruction sequences; it proves nothing about the hardware and is never a
verification (the emulator labels its results)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.emulator.ascendc import LABEL, EmulationError, emulate
from xlate.parse import parse_file
from xlate.specs import build_spec, expr
from xlate.translate.ascendc.translator import CudaToAscendC
from xlate.translate.base import TranslateOptions

ROOT = Path(__file__).resolve().parents[1]
ELEMENTWISE = [("vector_add", "vector_add"), ("saxpy", "saxpy"), ("scale_shift", "scale_shift"),
               ("restrict_triad", "triad"), ("grid_stride", "grid_stride_scale"), ("clamp", "clamp_kernel"),
               ("relu", "relu"), ("leaky_relu", "leaky_relu"), ("sigmoid", "sigmoid"), ("silu", "silu"),
               ("gelu", "gelu_tanh"), ("macros", "hardswish")]


def port(stem: str, soc: str) -> str:
    unit = parse_file(ROOT / "examples" / "kernels" / f"{stem}.cu")
    t = CudaToAscendC().translate(unit, unit.text, TranslateOptions(arch=soc))
    assert t.text
    return t.text


def reference(stem: str, kernel: str):
    spec = importlib.util.spec_from_file_location(f"ref_{stem}", ROOT / "examples" / "references" / f"{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, kernel)


def arguments(stem: str, kernel: str, sizes: dict[str, int], seed: int) -> dict:
    spec = build_spec(parse_file(ROOT / "examples" / "kernels" / f"{stem}.cu"), kernel)
    rng = np.random.default_rng(seed)
    args: dict = dict(sizes)
    for p in spec.params:
        if p.role == "scalar":
            lo = float(expr.evaluate(p.lo, {})) if p.lo else -2.0
            hi = float(expr.evaluate(p.hi, {})) if p.hi else 2.0
            args[p.name] = float(np.float32(rng.uniform(lo, hi)))
        elif p.is_buffer:
            n = int(np.prod([expr.evaluate(d, sizes) for d in p.dims]))
            lo = float(expr.evaluate(p.lo, {})) if p.lo else -4.0
            hi = float(expr.evaluate(p.hi, {})) if p.hi else 4.0
            args[p.name] = rng.uniform(lo, hi, n).astype(np.float32)
    return args


def run_and_compare(text: str, stem: str, kernel: str, sizes: dict[str, int], soc: str, block_dim: int | None,
                    seed: int = 0, guard: int = 64) -> None:
    args = arguments(stem, kernel, sizes, seed)
    expected = reference(stem, kernel)(**{k: (v.astype(np.float64) if isinstance(v, np.ndarray) else v)
                                          for k, v in args.items()})
    # each buffer sits inside a poisoned allocation: writes outside it show up as changed guard bands
    backing = {}
    for k, v in list(args.items()):
        if isinstance(v, np.ndarray):
            full = np.full(v.size + 2 * guard, np.float32(-7.25))
            full[guard:guard + v.size] = v
            backing[k] = full
            args[k] = full[guard:guard + v.size]
    result = emulate(text, kernel, args, soc, block_dim)
    assert result.label == LABEL and "emulation" in result.label
    for k, full in backing.items():
        assert np.all(full[:guard] == np.float32(-7.25)) and np.all(full[guard + args[k].size:] == np.float32(-7.25))
    for name, want in expected.items():
        got = args[name].astype(np.float64).reshape(np.shape(want))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=f"{kernel} {sizes} blockDim={block_dim}")


@pytest.mark.parametrize("stem, kernel", ELEMENTWISE, ids=[k for _, k in ELEMENTWISE])
def test_elementwise_ports_match_the_references_under_emulation_910b(stem, kernel):
    text = port(stem, "ascend910b")
    dom = "n"
    # 1 and 7: one partial block (DataCopyPad); 8: one whole block; 8128*2+13: three tiles with a ragged tail
    for n, bd in ((1, None), (7, 5), (8, None), (8128 * 2 + 13, None), (8128 * 2 + 13, 7), (1003, 48)):
        run_and_compare(text, stem, kernel, {dom: n}, "ascend910b", bd, seed=n)


@pytest.mark.parametrize("stem, kernel", [("vector_add", "vector_add"), ("gelu", "gelu_tanh"), ("clamp", "clamp_kernel")])
def test_elementwise_ports_match_the_references_under_emulation_310p(stem, kernel):
    text = port(stem, "ascend310p")
    for n, bd in ((8, None), (13, 3), (1003, None), (10880 + 9, 2)):
        run_and_compare(text, stem, kernel, {"n": n}, "ascend310p", bd, seed=n)


def test_310p_ports_do_not_handle_fewer_than_one_block():
    # the documented limit (XL3105): without DataCopyPad, n < 8 floats is not written at all
    text = port("relu", "ascend310p")
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    y = np.full(5, np.float32(123.0))
    emulate(text, "relu", {"x": x, "y": y, "n": 5}, "ascend310p")
    assert np.all(y == 123.0)


@pytest.mark.parametrize("rows, cols, bd", [(1, 1, None), (3, 7, None), (5, 1003, 2), (2, 2048, None), (9, 64, 4)])
def test_row_softmax_matches_the_reference_under_emulation(rows, cols, bd):
    text = port("softmax", "ascend910b")
    run_and_compare(text, "softmax", "softmax_rows", {"rows": rows, "cols": cols}, "ascend910b", bd, seed=rows * cols)


def test_the_emulator_enforces_hardware_rules():
    text = port("vector_add", "ascend910b")
    a = np.ones(64, np.float32)
    # a misaligned DataCopy (the template's tail guard removed)
    bad = text.replace("if (count % ALIGN_ELEMS == 0) {\n            AscendC::DataCopy(aIn", "if (true) {\n            AscendC::DataCopy(aIn", 1)
    assert bad != text
    with pytest.raises(EmulationError, match="not whole 32-byte blocks"):
        emulate(bad, "vector_add", {"a": a[:13].copy(), "b": a[:13].copy(), "c": a[:13].copy(), "n": 13}, "ascend910b")
    # a UB overflow (tiles twice as large)
    tile = "constexpr uint32_t TILE_LENGTH = 8128;"
    assert tile in text
    big = text.replace(tile, "constexpr uint32_t TILE_LENGTH = 16256;")
    with pytest.raises(EmulationError, match="UB overflow"):
        emulate(big, "vector_add", {"a": a.copy(), "b": a.copy(), "c": a.copy(), "n": 64}, "ascend910b")
    # a missing DeQue
    nodeq = text.replace("AscendC::LocalTensor<float> aIn = inQueue_a.DeQue<float>();",
                         "AscendC::LocalTensor<float> aIn = inQueue_a.AllocTensor<float>();")
    with pytest.raises(EmulationError):
        emulate(nodeq, "vector_add", {"a": a.copy(), "b": a.copy(), "c": a.copy(), "n": 64}, "ascend910b", 1)
    # out-of-bounds global memory: n larger than the buffers
    with pytest.raises(EmulationError, match="outside the buffer"):
        emulate(text, "vector_add", {"a": a.copy(), "b": a.copy(), "c": a.copy(), "n": 100}, "ascend910b")


def test_emulated_outputs_depend_on_the_computation():
    # a wrong instruction in the port is caught by the reference comparison (the comparison can fail)
    text = port("scale_shift", "ascend910b").replace("AscendC::Adds(yOut, xIn, this->b_, count);",
                                                      "AscendC::Muls(yOut, xIn, this->b_, count);")
    with pytest.raises(AssertionError):
        run_and_compare(text, "scale_shift", "scale_shift", {"n": 100}, "ascend910b", None)
