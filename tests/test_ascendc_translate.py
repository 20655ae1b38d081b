"""CUDA -> AscendC rule translator: which corpus kernels map, the structure of the generated code, tile sizes
computed from the arch specs of two SoCs, and honest refusals (XL31xx) for kernels the templates do not cover."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from xlate.backends.ascendc_check import check_ascendc

from xlate.parse import parse_file
from xlate.translate.ascendc.translator import CudaToAscendC
from xlate.translate.base import TranslateOptions
from xlate.translate.registry import rule_translator

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
ARCH = ROOT / "templates" / "arch"

# (file, kernel, class): the corpus kernels the templates map -- elementwise, scalar-argument, activation, row softmax
MAPPED = [
    ("vector_add", "vector_add", "elementwise"), ("saxpy", "saxpy", "scalar"), ("scale_shift", "scale_shift", "scalar"),
    ("restrict_triad", "triad", "scalar"), ("grid_stride", "grid_stride_scale", "scalar"),
    ("streams", "chunk_scale", "scalar"), ("clamp", "clamp_kernel", "scalar"), ("relu", "relu", "activation"),
    ("leaky_relu", "leaky_relu", "activation"), ("sigmoid", "sigmoid", "activation"), ("silu", "silu", "activation"),
    ("gelu", "gelu_tanh", "activation"), ("macros", "hardswish", "activation"), ("softmax", "softmax_rows", "rows"),
]
# Kernels the rules must refuse (gathers, atomics, 2-D launches, integer maths, templates, warp code...).
REFUSED = [("histogram", "histogram_shared"), ("transpose", "transpose_tiled"), ("int_bitwise", "xor_mask"),
           ("template_axpby", "axpby"), ("warp_reduce", "warp_reduce_sum"), ("dot_atomic", "dot_atomic"),
           ("vector_add_vec4", "vector_add_vec4"), ("stencil_1d", "stencil_1d"), ("layernorm", "layernorm_rows")]


def port(stem: str, soc: str | None = None, kernels: list[str] | None = None):
    unit = parse_file(KERNELS / f"{stem}.cu")
    return CudaToAscendC().translate(unit, unit.text, TranslateOptions(arch=soc, kernels=kernels or []))


def constexpr(text: str, name: str, namespace: str) -> int:
    block = text.split(f"namespace {namespace} {{", 1)[1]
    m = re.search(rf"constexpr uint32_t {name} = (\d+);", block)
    assert m, f"{name} not found in {namespace}"
    return int(m.group(1))


def test_registry_maps_cuda_to_ascendc():
    assert isinstance(rule_translator("cuda", "ascendc"), CudaToAscendC)


@pytest.mark.parametrize("stem, kernel, cls", MAPPED, ids=[m[1] for m in MAPPED])
def test_corpus_kernel_ports_and_passes_the_checker(stem, kernel, cls):
    t = port(stem, kernels=[kernel])
    assert t.kernels == [kernel] and not t.needs_llm
    assert not [d for d in t.diagnostics if d.severity == "error" or d.needs_llm]
    diags = check_ascendc(t.text, f"{stem}_ascendc.cpp", "ascend910b")
    assert [d.format() for d in diags if d.severity != "note"] == []
    assert f'extern "C" __global__ __aicore__ void {kernel}(' in t.text
    assert t.meta["tiling"][kernel]["kind"] == ("rows" if cls == "rows" else "elementwise")


def test_exactly_the_listed_corpus_kernels_map():
    """The translator's own answer over the whole corpus (not this file's list): what it ports is MAPPED, no more
    and no fewer, both tiling kinds occur, and every REFUSED kernel is refused."""
    ported: dict[tuple[str, str], str] = {}
    for src in sorted(KERNELS.glob("*.cu")):
        t = port(src.stem)
        ported.update({(src.stem, k): t.meta["tiling"][k]["kind"] for k in t.kernels})
    assert set(ported) == {(s, k) for s, k, _ in MAPPED} and len(ported) >= 8
    assert set(ported.values()) == {"elementwise", "rows"}
    assert not set(REFUSED) & set(ported)


def _count(text: str, pattern: str) -> int:
    return len(re.findall(pattern, text))


def test_elementwise_structure_stages_queues_split_and_tails():
    text = port("vector_add").text
    # the three stages and their queues
    for stage in ("CopyIn(uint32_t offset, uint32_t count)", "Compute(uint32_t count)", "CopyOut(uint32_t offset, uint32_t count)"):
        assert stage in text
    assert _count(text, r"TQue<AscendC::TPosition::VECIN, BUFFER_NUM>") == 2
    assert _count(text, r"TQue<AscendC::TPosition::VECOUT, BUFFER_NUM>") == 1
    assert "AscendC::TPipe pipe;" in text and "constexpr uint32_t BUFFER_NUM = 2;" in text
    # matched pairs, per queue
    for q in ("inQueue_a", "inQueue_b", "outQueue_c"):
        assert _count(text, rf"{q}\.AllocTensor<") == 1 and _count(text, rf"{q}\.FreeTensor\(") == 1
        assert _count(text, rf"{q}\.EnQue[<(]") == 1 and _count(text, rf"{q}\.DeQue<") == 1
        assert _count(text, rf"pipe\.InitBuffer\({q}, BUFFER_NUM,") == 1
    # per-core split by block index, tails through DataCopyPad, the computation itself
    assert "AscendC::GetBlockIdx()" in text and "AscendC::GetBlockNum()" in text
    assert "AscendC::DataCopyPad(aIn, aGm[offset], copyParams, padParams);" in text
    assert "AscendC::DataCopyPad(cGm[offset], cOut, copyParams);" in text
    assert "AscendC::Add(cOut, aIn, bIn, count);" in text
    # host side: block count and the kernel-call operator, ACL set-up in the demo main
    assert "vector_add<<<vector_add_block_dim(n), nullptr, stream>>>(a, b, c, n);" in text
    for api in ("aclInit", "aclrtSetDevice", "aclrtCreateStream", "aclrtMalloc(", "aclrtMemcpy", "aclrtSynchronizeStream",
                "aclrtFree(", "aclrtDestroyStream", "aclrtResetDevice", "aclFinalize"):
        assert api in text, api


def test_scalar_arguments_become_vector_scalar_instructions():
    text = port("scale_shift").text
    assert "AscendC::Muls(xIn, xIn, this->a_, count);" in text
    assert "AscendC::Adds(yOut, xIn, this->b_, count);" in text
    clamp = port("clamp").text
    assert "AscendC::Maxs(" in clamp and "AscendC::Mins(" in clamp
    leaky = port("leaky_relu").text
    assert "AscendC::LeakyRelu(yOut, xIn, this->slope_, count);" in leaky


def test_inout_buffer_gets_an_input_and_an_output_queue():
    text = port("saxpy").text
    assert "inQueue_y" in text and "outQueue_y" in text and "inQueue_x" in text
    assert "AscendC::Add(yOut, xIn, yIn, count);" in text


def test_activations_lower_through_the_ops_table():
    assert "AscendC::Relu(yOut, xIn, count);" in port("relu").text
    sig = port("sigmoid").text
    for api in ("AscendC::Muls(", "AscendC::Exp(", "AscendC::Adds(", "AscendC::Div(", "AscendC::Duplicate<float>("):
        assert api in sig
    gelu = port("gelu").text  # tanh is expanded through exp (ops.yaml expansions)
    assert "AscendC::Exp(" in gelu and "Tanh" not in gelu
    assert "0.7978846f" in gelu and "0.044715f" in gelu  # the macros' constants, folded


def test_row_softmax_reduces_rows_with_a_scalar_sync():
    t = port("softmax")
    text = t.text
    assert "AscendC::ReduceMax<float>(reduced, xIn, work, count, false);" in text
    # exp(x - max) is computed once, in place, and serves both the sum and the output (no temporaries)
    assert "AscendC::Adds(xIn, xIn, (-r0), count);" in text and "AscendC::Exp(xIn, xIn, count);" in text
    assert "AscendC::ReduceSum<float>(reduced[1 * ALIGN_ELEMS], xIn, work, count);" in text
    assert text.index("SetFlag<AscendC::HardEvent::V_S>") < text.index("reduced.GetValue(0 * ALIGN_ELEMS)")
    assert "AscendC::Muls(yOut, xIn, (1.0f / r1), count);" in text
    assert "TMP_SLOTS" not in text
    assert constexpr(text, "MAX_COLS", "xlate_softmax_rows") == 2048  # the spec's bound on cols
    assert "one core per row" in text
    assert any(d.code == "XL3109" for d in t.diagnostics)  # -FLT_MAX init vs ReduceMax: said, not hidden


def _ub_and_policy(stem: str) -> tuple[int, int, int, int, int]:
    spec = yaml.safe_load((ARCH / f"{stem}.yaml").read_text())
    policy = yaml.safe_load((ROOT / "xlate/data/ascendc/tiling.yaml").read_text())
    return (spec["unified_buffer_bytes"], spec["vector_repeat_bytes"], spec["max_repeat_times"],
            policy["ub_reserve_bytes"], policy["buffer_num"])


@pytest.mark.parametrize("stem, kernel, queues, uses_tmp", [("vector_add", "vector_add", 3, False),
                                                            ("relu", "relu", 2, False), ("gelu", "gelu_tanh", 2, True)])
def test_tile_sizes_come_from_the_arch_specs_of_two_socs(stem, kernel, queues, uses_tmp):
    tiles = {}
    for soc in ("ascend910b", "ascend310p"):
        text = port(stem, soc).text
        tile = constexpr(text, "TILE_LENGTH", f"xlate_{kernel}")
        tmps = constexpr(text, "TMP_SLOTS", f"xlate_{kernel}") if uses_tmp else 0
        assert ("TMP_SLOTS" in text) == uses_tmp
        assert _count(text, r"pipe\.InitBuffer\(\w+, BUFFER_NUM, TILE_LENGTH \* sizeof\(float\)\)") == queues
        ub, repeat, max_repeat, reserve, buffers = _ub_and_policy(soc)
        per_elem = (queues * buffers + tmps) * 4
        assert tile % (repeat // 4) == 0  # whole 256-byte repeats
        assert tile <= max_repeat * repeat // 4  # one instruction per operation per tile
        assert tile * per_elem <= ub - reserve  # fits the UB
        # and is the largest such tile
        assert (tile + repeat // 4) * per_elem > ub - reserve or tile + repeat // 4 > max_repeat * repeat // 4
        tiles[soc] = tile
    assert tiles["ascend910b"] != tiles["ascend310p"]


def test_the_checker_sees_each_socs_budget():
    big = port("relu", "ascend310p").text  # sized for 256 KiB of UB
    errs = [d for d in check_ascendc(big, "relu.cpp", "ascend910b") if d.severity == "error"]
    assert [d.code for d in errs] == ["XL3020"]
    small = port("relu", "ascend910b").text  # DataCopyPad: there on 910B, not on 310P
    assert {d.code for d in check_ascendc(small, "relu.cpp", "ascend310p") if d.severity == "error"} == {"XL3031"}


def test_310p_ports_use_an_aligned_window_instead_of_datacopypad():
    t = port("relu", "ascend310p")
    assert "DataCopyPad(" not in t.text and "uint32_t window = offset + count + rest - ALIGN_ELEMS;" in t.text
    assert [d.code for d in t.diagnostics if d.severity == "warning"] == ["XL3105"]
    assert not [d for d in check_ascendc(t.text, "relu.cpp", "ascend310p") if d.severity != "note"]


@pytest.mark.parametrize("stem", ["saxpy", "softmax"])
def test_310p_refuses_what_an_overlapping_window_would_break(stem):
    t = port(stem, "ascend310p")
    assert t.kernels == [] and t.text == ""
    d = next(d for d in t.diagnostics if d.code == "XL3106")
    assert d.needs_llm and d.severity == "error"


@pytest.mark.parametrize("stem, kernel", REFUSED, ids=[r[1] for r in REFUSED])
def test_kernels_outside_the_templates_are_refused_with_xl31xx(stem, kernel):
    t = port(stem, kernels=[kernel])
    assert t.kernels == [] and t.needs_llm == [kernel] and t.text == ""
    blocking = [d for d in t.diagnostics if d.needs_llm]
    assert blocking and all(d.code.startswith("XL31") and d.kernel == kernel for d in blocking)
    assert all(d.path.endswith(f"{stem}.cu") and d.line > 1 for d in blocking)


def test_a_file_with_mapped_and_refused_kernels_keeps_only_the_mapped():
    t = port("int_bitwise")
    assert set(t.needs_llm) == {"xor_mask", "hash_u32"} and t.text == ""
    t = port("streams")  # chunk_scale maps; the host pipeline is no kernel
    assert t.kernels == ["chunk_scale"]


def test_semantic_caveats_are_reported_as_notes():
    t = port("relu")
    notes = [d for d in t.diagnostics if d.code == "XL3103"]
    assert notes and all(d.severity == "note" and not d.needs_llm for d in notes)
    assert any("NaN" in d.message for d in notes)


def test_unknown_soc_is_an_input_error():
    from xlate.errors import InputError

    with pytest.raises(InputError):
        port("relu", "no-such-npu")
