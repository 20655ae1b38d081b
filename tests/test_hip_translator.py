"""CUDA <-> HIP translator: the example corpus, round trips, the registry hook, stats, user rules, tables, and
the building blocks (edits, the macro tokenizer, mask normalisation, the compat block)."""

from __future__ import annotations

import hashlib
import re
import textwrap
from pathlib import Path

import pytest

from xlate.errors import InputError
from xlate.parse import parse_file, parse_string
from xlate.parse.nodes import Source
from xlate.translate.base import TranslateOptions
from xlate.translate.hip import CudaToHip, HipToCuda, compat, format_stats
from xlate.translate.hip.ctokens import identifiers, tokenize
from xlate.translate.hip.edits import EditSet
from xlate.translate.hip.job import normalize_expr
from xlate.translate.hip.tables import builtin_tables, table_files
from xlate.translate.hip.userrules import with_user_rules
from xlate.translate.registry import rule_translator

ROOT = Path(__file__).resolve().parents[1]
KERNELS = sorted((ROOT / "examples" / "kernels").glob("*.cu"))
HIP_EXAMPLES = sorted((ROOT / "examples" / "hip").glob("*.hip"))
CASE_KERNELS = sorted((ROOT / "tests" / "data" / "hip_cases" / "kernels").glob("*.cu"))
# Inline PTX has no HIP form: the rules hand these kernels to the LLM translator (XL1201); a read of %laneid is
# ported (XL1125), and comes back as plain `asm`, not `asm volatile`.
LLM_KERNELS = {"inline_ptx.cu": ["ptx_add"]}
ASM_VOLATILE = {"inline_ptx.cu"}
# One-way header maps: the port drops CUDA's helper_math.h for HIP's vector types, whose operators are built in;
# the way back can only name CUDA's vector_types.h (the helper header is the project's, not CUDA's).
ONE_WAY_INCLUDES = {"vector_ops.cu": ('#include "helper_math.h"', '#include "vector_types.h"')}
DEVICE_LAUNCHES: set[str] = set()  # corpus files with device-side launches (kept as <<<>>>, XL1204)


def port(path: Path, arch: str | None = "gfx90a"):
    unit = parse_file(path)
    return unit, CudaToHip().translate(unit, unit.text, TranslateOptions(arch=arch))


def back(name: str, hip_text: str) -> str:
    unit = parse_string(hip_text, name, "hip", strict=False)
    return HipToCuda().translate(unit, hip_text, TranslateOptions()).text


@pytest.mark.parametrize("path", KERNELS, ids=[p.name for p in KERNELS])
def test_corpus_kernel_ports(path):
    unit, tr = port(path)
    assert tr.target == "hip" and tr.engine == "rules"
    assert tr.kernels == [k.name for k in unit.kernels]
    assert tr.needs_llm == LLM_KERNELS.get(path.name, [])
    assert "cuda_runtime.h" not in tr.text
    host_launches = [lc for lc in unit.launches if lc.form == "chevron"]
    assert ("hipLaunchKernelGGL(" in tr.text) == bool(host_launches)  # HIPIFY's default launch syntax
    assert "<<<" not in tr.text or path.name in DEVICE_LAUNCHES
    blocking = [d for d in tr.diagnostics if d.severity == "error"]
    assert bool(blocking) == (path.name in LLM_KERNELS), [d.format() for d in blocking]


@pytest.mark.parametrize("path", KERNELS + CASE_KERNELS, ids=[p.name for p in KERNELS + CASE_KERNELS])
def test_corpus_round_trip_is_exact(path):
    _, tr = port(path)
    expected = path.read_text()
    if path.name in ASM_VOLATILE:
        expected = expected.replace('asm volatile("mov.u32', 'asm("mov.u32')
    if path.name in ONE_WAY_INCLUDES:
        expected = expected.replace(*ONE_WAY_INCLUDES[path.name])
    assert back(path.with_suffix(".hip").name, tr.text) == expected


def test_translation_does_not_modify_input(tmp_path):
    src = tmp_path / "warp_reduce.cu"
    src.write_bytes((ROOT / "examples" / "kernels" / "warp_reduce.cu").read_bytes())
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    mtime = src.stat().st_mtime_ns
    port(src)
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    assert src.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["warp_reduce.cu"]


def test_registry_picks_these_translators():
    assert isinstance(rule_translator("cuda", "hip"), CudaToHip)
    assert isinstance(rule_translator("hip", "cuda"), HipToCuda)


def test_warp_reduce_port_keeps_32_lane_warps():
    _, tr = port(ROOT / "examples" / "kernels" / "warp_reduce.cu")
    assert "__shfl_down(v, offset, XLATE_WARP_WIDTH)" in tr.text
    assert "#define XLATE_WARP_WIDTH 32" in tr.text
    assert "threadIdx.x & 31" in tr.text and "threadIdx.x >> 5" in tr.text  # kept: the model is 32-lane warps
    codes = {d.code for d in tr.diagnostics}
    assert {"XL1101", "XL1105", "XL1106", "XL1107", "XL1108", "XL1109"} <= codes
    assert all(d.severity == "note" for d in tr.diagnostics)


def test_wavefront_notes_name_the_target():
    wave64 = port(ROOT / "examples" / "kernels" / "warp_reduce.cu", "gfx90a")[1]
    wave32 = port(ROOT / "examples" / "kernels" / "warp_reduce.cu", "gfx1030")[1]
    assert wave64.meta["wavefront"] == 64 and wave32.meta["wavefront"] == 32
    lane64 = next(d for d in wave64.diagnostics if d.code == "XL1105")
    lane32 = next(d for d in wave32.diagnostics if d.code == "XL1105")
    assert "64-lane wavefront" in lane64.message and "32-lane wavefront" in lane32.message
    assert wave64.text == wave32.text  # one port serves both wavefront sizes


def test_hand_written_hip_to_cuda():
    for path in HIP_EXAMPLES:
        unit = parse_file(path)
        tr = HipToCuda().translate(unit, unit.text, TranslateOptions())
        assert tr.target == "cuda"
        assert "hipLaunchKernelGGL" not in tr.text and "hip/hip_runtime.h" not in tr.text
        assert "hipStream_t" not in tr.text
        assert not tr.needs_llm


def test_hip_launch_to_chevrons():
    text = textwrap.dedent("""\
        #include <hip/hip_runtime.h>
        __global__ void k(float* p, int n) {}
        void f(float* p, int n, hipStream_t s) { hipLaunchKernelGGL(k, dim3(4), dim3(64), 128, s, p, n); }
        """)
    out = back("l.hip", text)
    assert "k<<<4, 64, 128, s>>>(p, n);" in out  # dim3(x) unwrapped: <<<>>> converts itself
    zero = back("z.hip", text.replace("128, s, p, n", "0, 0, p, n").replace("dim3(4)", "dim3(4, 2)"))
    assert "k<<<dim3(4, 2), 64>>>(p, n);" in zero  # CUDA's defaults dropped, a 2-D dim3 kept


def test_format_stats_table():
    _, tr = port(ROOT / "examples" / "kernels" / "streams.cu")
    text = format_stats(tr)
    assert "CONVERTED refs count:" in text and "refs by family" in text
    converted = sum(row["converted"] for row in tr.stats.values())
    assert f"CONVERTED refs count: {converted}" in text
    assert converted >= 10  # cudaStream_t x4, cudaStreamCreate, cudaMemcpyAsync x2, cudaMemcpy kinds, ...
    assert tr.meta["stats"]["names"]["converted"]


def test_stats_count_unsupported_and_unknown():
    text = "#include <cuda_runtime.h>\nvoid f() { cudaFrobnicate(); cudaFrobnicate(); }\n"
    unit = parse_string(text, "u.cu", "cuda")
    tr = CudaToHip().translate(unit, text, TranslateOptions())
    assert sum(r["unknown"] for r in tr.stats.values()) == 2
    assert [d.code for d in tr.diagnostics] == ["XL1001"]
    assert "UNKNOWN refs by name:\n  cudaFrobnicate: 2" in format_stats(tr)


# -- user rules ----------------------------------------------------------------------------------------------
def _rules(tmp_path, body: str) -> str:
    path = tmp_path / "rules.yaml"
    path.write_text(textwrap.dedent(body))
    return str(path)


@pytest.mark.parametrize("body, message", [
    ("rules: nope\n", "`rules:` list"),
    ("rules:\n  - replace: x\n", "`match` must be"),
    ("rules:\n  - match: a\n", "`replace` must be"),
    ("rules:\n  - {match: a, replace: b, kind: macro}\n", "kind 'macro'"),
    ("rules:\n  - {match: a, replace: b, priority: urgent}\n", "priority 'urgent'"),
    ("rules:\n  - {match: a, replace: b, colour: red}\n", "unknown field"),
    ("rules:\n  - {match: a b, replace: c}\n", "not one identifier"),
    ("rules: [\n", "not valid YAML"),
])
def test_user_rules_errors_are_input_errors(tmp_path, body, message):
    path = _rules(tmp_path, body)
    with pytest.raises(InputError, match=message):
        with_user_rules(builtin_tables("cuda->hip"), [path])


def test_user_rules_missing_file():
    with pytest.raises(InputError, match="no such rules file"):
        with_user_rules(builtin_tables("cuda->hip"), ["/nonexistent/rules.yaml"])


def test_user_rules_priorities(tmp_path):
    path = _rules(tmp_path, """\
        rules:
          - {match: cudaMalloc, replace: projMalloc}
          - {match: cudaFree, replace: neverFree, priority: fallback}
          - {match: cudaProjThing, replace: hipProjThing, priority: fallback}
        """)
    tables = with_user_rules(builtin_tables("cuda->hip"), [path])
    assert tables.lookup("identifier", "cudaMalloc").target == "projMalloc"
    free = tables.lookup("identifier", "cudaFree")
    assert free is not None and free.target != "neverFree"  # the table entry beats a fallback rule
    assert tables.lookup("identifier", "cudaProjThing").target == "hipProjThing"
    reverse = with_user_rules(builtin_tables("hip->cuda"), [path])
    assert reverse.lookup("identifier", "projMalloc").target == "cudaMalloc"
    assert builtin_tables("cuda->hip").lookup("identifier", "cudaMalloc").target == "hipMalloc"  # not mutated


# -- tables --------------------------------------------------------------------------------------------------
def test_tables_exist_and_invert():
    assert table_files(), "xlate/translate/maps/cuda_hip/*.yaml is empty"
    fwd, rev = builtin_tables("cuda->hip"), builtin_tables("hip->cuda")
    assert fwd.lookup("identifier", "cudaMalloc").target == "hipMalloc"
    assert rev.lookup("identifier", "hipMalloc").target == "cudaMalloc"
    assert fwd.lookup("header", "cuda_runtime.h").target == "hip/hip_runtime.h"
    assert rev.lookup("header", "hip/hip_runtime.h").target == "cuda_runtime.h"
    for name in fwd.names("identifier"):
        m = fwd.lookup("identifier", name)
        assert m is not None and m.family
        if m.target is not None:
            assert m.target.strip() == m.target and m.target


def test_table_errors(tmp_path):
    from xlate.translate.hip import tables

    bad = tmp_path / "bad.yaml"
    bad.write_text("family: x\nkind: identifier\nentries:\n  cudaFoo: {rocm: '1.0'}\n")
    with pytest.raises(InputError, match="needs a `hip` field"):
        tables._entries(bad, tables.load_yaml(bad))
    weird = tmp_path / "weird.yaml"
    weird.write_text("family: x\nkind: weird\nentries: {}\n")
    with pytest.raises(InputError, match="kind 'weird'"):
        tables._entries(weird, tables.load_yaml(weird))


# -- building blocks -----------------------------------------------------------------------------------------
def test_edit_set_applies_in_one_pass_and_rejects_overlap():
    data = b"cudaMalloc(p); cudaFree(p);"
    edits = EditSet(data, Source("x.cu", data))
    edits.replace(15, 23, "hipFree", "runtime:cudaFree")
    edits.replace(0, 10, "hipMalloc", "runtime:cudaMalloc")
    edits.insert(0, "/*a*/", "test:insert")
    assert edits.apply() == "/*a*/hipMalloc(p); hipFree(p);"
    assert [e.rule for e in edits.sorted()] == ["test:insert", "runtime:cudaMalloc", "runtime:cudaFree"]
    edits.replace(5, 12, "x", "test:overlap")
    with pytest.raises(AssertionError, match="overlapping"):
        edits.apply()


def test_tokenizer_skips_strings_comments_and_numbers():
    body = rb'cudaFree(p) /* cudaMalloc */ "cudaMemcpy" \'c\' 0x1fu 1e+5f // cudaEvent_t'
    assert [t.text for t in tokenize(body) if t.kind == "ident"] == ["cudaFree", "p"]
    uses = {u.token.text: u for u in identifiers(b"a.cudaMalloc; b->x; cub::Foo; cuda##Name; #s")}
    assert uses["cudaMalloc"].member and uses["x"].member
    assert uses["cub"].qualifies and uses["Foo"].scope == "cub"
    assert uses["cuda"].pasted and uses["Name"].pasted and uses["s"].pasted


@pytest.mark.parametrize("text, norm", [
    ("0xffffffff", "0xffffffff"), ("0xFFFFFFFFu", "0xffffffff"), ("( ~0u )", "~0"), ("(unsigned)-1", "-1"),
    ("static_cast<unsigned>(0xffffffff)", "0xffffffff"), ("__activemask( )", "__activemask()"),
    ("0x0000ffff", "0x0000ffff"), ("(a) & (b)", "(a)&(b)"),
])
def test_normalize_expr(text, norm):
    assert normalize_expr(text) == norm


def test_compat_block_orders_helpers_and_requirements():
    assert compat.ordered({"all"}) == ["activemask", "ballot", "all"]
    block = compat.block({"reduce_add"})
    assert block.startswith(compat.compat()["begin"]) and block.rstrip().endswith(compat.compat()["end"])
    assert "#define XLATE_WARP_WIDTH 32" in block and "xlate_reduce_add_sync" in block
    with pytest.raises(KeyError):
        compat.ordered({"no_such_helper"})


def test_macro_body_rewritten_structurally():
    text = "#include <cuda_runtime.h>\n#define SUM(v) for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o)\n"
    tr = CudaToHip().translate(parse_string(text, "m.cu", "cuda"), text, TranslateOptions())
    assert "v += __shfl_xor(v, o, XLATE_WARP_WIDTH)" in tr.text
    assert {"XL1101", "XL1107"} <= {d.code for d in tr.diagnostics}


def test_rocm_version_check():
    """--arch's ROCm (options.extra["rocm"]) against each table entry's `rocm`: XL1008 where it is newer."""
    text = "#include <cuda_runtime.h>\nvoid f(float** p) { cudaMalloc(p, 4); }\n"
    unit = parse_string(text, "r.cu", "cuda")
    entry = builtin_tables("cuda->hip").lookup("identifier", "cudaMalloc")
    old = CudaToHip().translate(unit, text, TranslateOptions(extra={"rocm": "0.1"}))
    new = CudaToHip().translate(unit, text, TranslateOptions(extra={"rocm": "99.0"}))
    newer = entry.rocm is not None and tuple(int(x) for x in re.findall(r"\d+", entry.rocm)[:3]) > (0, 1)
    assert ("XL1008" in {d.code for d in old.diagnostics}) == newer
    assert "XL1008" not in {d.code for d in new.diagnostics}
