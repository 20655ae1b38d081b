"""The LLM translator's parts without a model: answer extraction, the output contract and its safety screen,
the kernel context, configuration, merging, the completion cache, redaction and the prompt templates."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from xlate.errors import InputError
from xlate.parse import parse_file, parse_string
from xlate.specs import build_spec
from xlate.translate.llm.cache import CompletionCache
from xlate.translate.llm.config import api_key, configured_model, load_config
from xlate.translate.llm.context import kernel_context
from xlate.translate.llm.contract import check, contract_for
from xlate.translate.llm.extract import extract
from xlate.translate.llm.merge import merge_c, merge_triton
from xlate.translate.llm.prompt import (
    all_examples,
    pick_examples,
    prompts_dir,
    repair_prompt,
    task_prompt,
    trim_log,
)
from xlate.translate.llm.redact import redact, redact_obj

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"

SAXPY_TRITON = """import triton
import triton.language as tl


@triton.jit
def _saxpy_kernel(n, a, x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def saxpy(n, a, x, y):
    _saxpy_kernel[(triton.cdiv(n, 256),)](n, a, x, y, BLOCK=256)
"""

# -- extraction -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer, finish, failure",
    [
        ("", "stop", "empty answer"),
        ("   \n ", "stop", "empty answer"),
        ("Sure! The port is straightforward: just use tl.load.", "stop", "no code block"),
        ("```python\nimport triton\ndef saxpy(n, a, x, y):\n", "length", "truncated"),
        ("```python\nx = 1\n```\nand\n```python\ny = 2\n```", "stop", "several code blocks"),
        ("```python\nx = 1\n```\n```python\ny = 2", "length", "several code blocks"),
        ("```cpp\n__global__ void k() {}\n```", "stop", "wrong language"),
        ("```python\n\n```", "stop", "empty code block"),
    ],
)
def test_extraction_failures_are_named(answer, finish, failure):
    got = extract(answer, "triton", finish)
    assert got.code is None and got.failure == failure and got.message


def test_extraction_takes_exactly_the_block():
    answer = "Here:\n````python\nprint('```')\nx = 1\n````\nDone."
    assert extract(answer, "triton").code == "print('```')\nx = 1\n"
    assert extract("```\n__global__ void k() {}\n```", "hip").code == "__global__ void k() {}\n"  # untagged is fine
    assert "token limit" in extract("```python\nx=1", "triton", "length").message


# -- contract -------------------------------------------------------------------------------------------------


def saxpy_contract(target: str = "triton"):
    unit = parse_file(KERNELS / "saxpy.cu")
    return contract_for(unit, "saxpy", target, build_spec(unit, "saxpy", None))


def test_triton_contract_accepts_a_port_and_names_the_signature():
    c = saxpy_contract()
    assert c.signature == "def saxpy(n, a, x, y):" and c.language == "triton"
    assert [p.name for p in c.params] == ["n", "a", "x", "y"]
    assert "input and output buffer of n float" in c.params[3].describe
    assert check(c, SAXPY_TRITON) == (None, [])


@pytest.mark.parametrize(
    "edit, failure, needle",
    [
        (lambda s: s.replace("def saxpy(n, a, x, y)", "def saxpy(x, y, n, a)"), "contract", "must be `def saxpy(n, a, x, y):`"),
        (lambda s: s.replace("def saxpy(", "def launch("), "contract", "no module-level launcher"),
        (lambda s: s.replace("@triton.jit\n", ""), "contract", "no @triton.jit kernel"),
        (lambda s: "import os\n" + s, "contract", "import of 'os' is not allowed"),
        (lambda s: s.replace("    _saxpy", "    open('../../x', 'w').write('pwned')\n    _saxpy"), "contract", "'open' is not allowed"),
        (lambda s: s.replace("    _saxpy", "    torch.save(x, '/tmp/x')\n    _saxpy"), "contract", "'.save' is not allowed"),
        (lambda s: s.replace("    _saxpy", "    __import__('os').system('true')\n    _saxpy"), "contract", "'__import__'"),
        (lambda s: s.replace("mask=mask)\n\n\ndef", "mask=mask\n\n\ndef"), "compile error", "never closed"),
    ],
)
def test_triton_contract_rejects(edit, failure, needle):
    got_failure, problems = check(saxpy_contract(), edit(SAXPY_TRITON))
    assert got_failure == failure and any(needle in p for p in problems), problems


def test_c_contract_checks_name_parameters_and_screen():
    c = saxpy_contract("hip")
    assert c.signature == "__global__ void saxpy(int n, float a, const float* x, float* y)"
    assert "grid = (cdiv(n, 256)) and block = (256)" in c.launch
    good = "#include <hip/hip_runtime.h>\n__global__ void saxpy(int n, float a, const float* x, float* y) { y[0] = a; }\n"
    assert check(c, good) == (None, [])
    failure, problems = check(c, good.replace("float* y)", "float* out)"))
    assert failure == "contract" and "(n, a, x, out)" in problems[0]
    failure, problems = check(c, good.replace("float a,", "float* a,"))
    assert failure == "contract" and "a must be values" in problems[0]
    failure, problems = check(c, good.replace("y[0] = a;", 'system("rm -rf /");'))
    assert failure == "contract" and "system" in problems[0]
    # a grammar gap is a front-end warning, not a contract failure: the compiler reports the syntax error
    assert check(c, good.replace("{ y[0] = a; }", "{ y[0] = a; ")) == (None, [])
    assert "kernels defined: other" in check(c, good.replace("void saxpy", "void other"))[1][0]


def test_contract_for_a_template_kernel_and_a_triton_source(tmp_path):
    unit = parse_file(KERNELS / "template_axpby.cu")
    c = contract_for(unit, "axpby", "hip", build_spec(unit, "axpby", None))
    assert c.signature.startswith("template <typename T>\n__global__ void axpby(const T* x")
    src = tmp_path / "s.py"
    src.write_text(SAXPY_TRITON.replace("def saxpy", "# xlate: n: size(1..99), a: scalar, x: in[n], y: inout[n], grid: cdiv(n, 256), block: 256\ndef saxpy"))
    tu = parse_file(src)
    c = contract_for(tu, "saxpy", "cuda", build_spec(tu, "saxpy", None))
    assert c.signature == "__global__ void saxpy(int n, float a, const float* x, float* y)"


# -- context --------------------------------------------------------------------------------------------------


def test_context_holds_the_kernel_and_only_what_it_needs():
    ctx = kernel_context(parse_file(KERNELS / "warp_reduce.cu"), "warp_reduce_sum")
    assert set(ctx.needed) == {"WR_BLOCK", "WR_WARPS", "warp_sum"}
    assert "__shfl_down_sync" in ctx.code and "// xlate: x: in[n]" in ctx.code
    assert "launch_warp_reduce_sum" not in ctx.code  # host code stays out
    poly = kernel_context(parse_file(KERNELS / "constant_poly.cu"), "poly_eval")
    assert "__constant__ float c_poly_coeffs" in poly.code and "#define POLY_DEGREE 3" in poly.code
    assert "cudaMemcpyToSymbolAsync" not in poly.code
    axpby = kernel_context(parse_file(KERNELS / "template_axpby.cu"), "axpby")
    assert "struct AccType<double>" in axpby.code and "template void launch_axpby" not in axpby.code


def test_context_of_one_kernel_leaves_the_others_out():
    ctx = kernel_context(parse_file(KERNELS / "inline_ptx.cu"), "ptx_lane_id")
    assert "lane_id()" in ctx.code and "add_f32" not in ctx.code and "ptx_add" not in ctx.code


def test_context_of_a_triton_launcher(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("import triton\nimport triton.language as tl\nUNUSED = 3\nBLOCK = 128\n\n" +
                   SAXPY_TRITON.split("\n", 2)[2].replace("256", "BLOCK"))
    ctx = kernel_context(parse_file(src), "saxpy")
    assert "_saxpy_kernel" in ctx.needed and "BLOCK" in ctx.needed and "UNUSED" not in ctx.code


# -- configuration --------------------------------------------------------------------------------------------


def test_model_precedence_and_pyproject(tmp_path, monkeypatch):
    for var in ("XLATE_MODEL", "XLATE_API_BASE", "XLATE_LLM_BUDGET_TOKENS"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "pyproject.toml").write_text('[tool.xlate]\nmodel = "openai/from-pyproject"\n'
                                             '[tool.xlate.llm]\napi_base = "http://127.0.0.1:9/v1"\nbudget_tokens = 1000\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert configured_model(None) == ("openai/from-pyproject", f"{tmp_path / 'pyproject.toml'} [tool.xlate]")
    cfg = load_config()
    assert (cfg.model, cfg.api_base, cfg.budget_tokens) == ("openai/from-pyproject", "http://127.0.0.1:9/v1", 1000)
    monkeypatch.setenv("XLATE_MODEL", "openai/from-env")
    monkeypatch.setenv("XLATE_LLM_BUDGET_TOKENS", "5_000")
    cfg = load_config()
    assert (cfg.model, cfg.budget_tokens, cfg.origin["budget_tokens"]) == ("openai/from-env", 5000, "XLATE_LLM_BUDGET_TOKENS")
    assert load_config("openai/from-arg").model == "openai/from-arg"
    assert api_key(cfg) == "no-key"  # a local server gets a placeholder, never a provider key


def test_config_errors_are_clear(tmp_path, monkeypatch):
    monkeypatch.delenv("XLATE_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with pytest.raises(InputError, match="no model configured"):
        load_config()
    (tmp_path / "pyproject.toml").write_text('[tool.xlate]\nmodel = "m"\n[tool.xlate.llm]\napi_kye = "x"\n')
    with pytest.raises(InputError, match=r"unknown setting.*api_kye"):
        load_config()
    (tmp_path / "pyproject.toml").write_text('[tool.xlate]\nmodel = "m"\n[tool.xlate.llm]\napi_key_env = "XLATE_NOT_SET_ANYWHERE"\n')
    with pytest.raises(InputError, match="XLATE_NOT_SET_ANYWHERE, which is not set"):
        load_config()
    monkeypatch.setenv("XLATE_LLM_TEMPERATURE", "warm")
    with pytest.raises(InputError, match="'temperature' must be a float"):
        load_config("m")


# -- merging --------------------------------------------------------------------------------------------------


def test_triton_merge_keeps_both_launchers_and_renames_clashes():
    base = ("from __future__ import annotations\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
            "def _kernel(x_ptr, n, BLOCK: tl.constexpr):\n    pass\n\n\ndef relu(x, n):\n    _kernel[(1,)](x, n, BLOCK=16)\n\n\n"
            "@triton.jit\ndef _saxpy_kernel(n):\n    pass\n\n\n"
            "def saxpy(n, a, x, y):\n    _saxpy_kernel[(1,)](n)\n")
    port = "from __future__ import annotations\n" + SAXPY_TRITON.replace(
        "def saxpy", "@triton.jit\ndef _kernel(x):\n    pass\n\n\ndef saxpy")
    merged = merge_triton(base, port, "saxpy", "kernel saxpy: LLM")
    tree = ast.parse(merged)
    defs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    # the rule's saxpy and the jit kernel only it used are replaced; `_kernel`, still used by relu, is not
    assert defs == ["_kernel", "relu", "_saxpy_kernel", "_kernel__llm", "saxpy"]
    assert "_saxpy_kernel[(triton.cdiv(n, 256),)]" in merged and "_saxpy_kernel[(1,)]" not in merged
    assert merged.count("from __future__") == 1 and merged.startswith("from __future__")


def test_an_nvrtc_compile_leaves_bytes_literals_alone():
    """Regression: NVRTC wrote its empty log's NUL into CPython's shared b" ", after which tree-sitter parses of
    candidates (blanked qualifiers) failed with errors near NUL bytes."""
    import uuid

    from xlate.backends.base import CompileOptions
    from xlate.backends.cuda import CudaBackend

    CudaBackend().compile(f"// {uuid.uuid4()}\n__global__ void k(float* y) {{ y[0] = 1.0f; }}\n", "k",
                          CompileOptions(compile_only=True), path="fresh.cu")
    assert bytes([32, 32, 32]) == b" " * 3
    unit = parse_string('extern "C" __global__ __aicore__ void k(GM_ADDR x) {}\n', "k_ascendc.cpp", "ascendc")
    assert [k.name for k in unit.kernels] == ["k"]


def test_c_merge_splices_the_kernel_and_compiles():
    from xlate.backends.base import CompileOptions
    from xlate.backends.cuda import CudaBackend

    base = ("#include <cuda_runtime.h>\n#define B 256\n\n__device__ float helper(float v) { return v + 1.0f; }\n\n"
            "__global__ void relu(const float* x, float* y, int n) {\n    int i = blockIdx.x * B + threadIdx.x;\n"
            "    if (i < n) y[i] = helper(x[i]) > 1.0f ? x[i] : 0.0f;\n}\n\n"
            "__device__ float dbl(float v) { float r; asm(\"add.f32 %0, %1, %1;\" : \"=f\"(r) : \"f\"(v)); return r; }\n\n"
            "__global__ void twice(const float* x, float* y, int n) {\n    /* rules could not port this */ y[0] = dbl(x[0]);\n}\n\n"
            "void launch(const float* x, float* y, int n) { twice<<<(n + 255) / 256, 256>>>(x, y, n); }\n")
    port = ("#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#define B 256\n\n"
            "__device__ float helper(float v) { return v * 2.0f; }\n\n__device__ float dbl(float v) { return v + v; }\n\n"
            "__global__ void twice(const float* x, float* y, int n) {\n    int i = blockIdx.x * B + threadIdx.x;\n"
            "    if (i < n) y[i] = helper(dbl(x[i]) * 0.5f);\n}\n")
    merged = merge_c(base, port, "twice", "cuda", "kernel twice: LLM")
    assert merged.count("#include <cuda_fp16.h>") == 1 and merged.count("#define B 256") == 1
    assert "helper__llm(dbl(x[i])" in merged and "return v * 2.0f" in merged and "return v + 1.0f" in merged
    assert "asm" not in merged and merged.count("float dbl(") == 1  # the PTX helper only `twice` used is replaced
    assert "rules could not port this" not in merged and merged.index("void twice") < merged.index("void launch")
    unit = parse_string(merged, "m.cu")
    assert [k.name for k in unit.kernels] == ["relu", "twice"]
    for k in ("relu", "twice"):
        CudaBackend().compile(merged, k, CompileOptions(compile_only=True), path="merged.cu")


# -- cache, redaction, prompts --------------------------------------------------------------------------------


def test_cache_round_trip_and_key(tmp_path):
    cache = CompletionCache(tmp_path)
    assert cache.get("m", "h" * 64, 0.0) is None
    cache.put("m", "h" * 64, 0.0, {"content": "```python\nx\n```", "tokens_in": 3, "tokens_out": 4})
    assert cache.get("m", "h" * 64, 0.0)["tokens_out"] == 4
    assert cache.get("m", "h" * 64, 0.7) is None and cache.get("other", "h" * 64, 0.0) is None
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{damaged")
    assert cache.get("m", "h" * 64, 0.0) is None


def test_redaction_replaces_secret_env_values(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789")
    monkeypatch.setenv("ODD_NAME", "value-named-by-config")
    assert redact("a tok-0123456789 b") == "a [redacted] b"
    assert redact("value-named-by-config") == "value-named-by-config"
    assert redact("value-named-by-config", ("ODD_NAME",)) == "[redacted]"
    assert redact_obj({"k": ["tok-0123456789", 3]}) == {"k": ["[redacted]", 3]}


def test_trim_log_keeps_the_errors():
    log = "\n".join([f"note {i}" for i in range(100)] + ["k.cu(3): error: identifier x is undefined", "  x = 1;", "    ^"])
    out = trim_log(log)
    assert out.startswith("k.cu(3): error") and "note 5" not in out
    assert len(trim_log("error\n" * 1000)) <= 3000


@pytest.mark.parametrize("template", sorted(p.name for p in prompts_dir().glob("*_to_*.j2")))
def test_every_pair_template_renders(template):
    source, target = template[:-3].split("_to_")
    unit = parse_file(KERNELS / "warp_reduce.cu")
    if source == "triton":
        unit = parse_string(SAXPY_TRITON.replace("def saxpy", "# xlate: n: size(1..9), a: scalar, x: in[n], y: inout[n], grid: cdiv(n, 256), block: 256\ndef saxpy"), "s.py")
    kernel = "saxpy" if source == "triton" else "warp_reduce_sum"
    spec = build_spec(unit, kernel, None)
    c = contract_for(unit, kernel, target, spec)
    text = task_prompt(source, c, context=kernel_context(unit, kernel).code, source_file="k", spec=spec, spec_error=None,
                       arch=None, diagnostics=["k.cu:1:1: error: warp shuffle [XL2101]"], examples=[], prior=None)
    assert c.signature in text and "[XL2101]" in text and "Porting guidance" in text
    assert "exactly one fenced code block" in repair_prompt(c, 1, 4, "mismatch", counterexample="cx")


def test_examples_are_well_formed_and_picked_by_pair():
    examples = all_examples()
    assert {(e.source_language, e.target) for e in examples} >= {("cuda", "triton"), ("cuda", "hip"), ("triton", "cuda")}
    for e in examples:
        assert e.check in ("verify", "compile") and e.status
        assert (e.check == "verify") == e.status.startswith("verified")
    picked = pick_examples("cuda", "triton", "reduction", 1)
    assert picked[0].op == "reduction"
    assert all(e.kernel != "saxpy" for e in pick_examples("cuda", "triton", "elementwise", 5, exclude="saxpy"))
    assert json.dumps([e.name for e in pick_examples("hip", "ascendc", None, 3)]) == "[]"
