"""`xlate port --engine auto`: the rules translate what they can, the LLM (over HTTP, loopback scripted server)
takes only the kernels the rules leave in `needs_llm`, the merged file is verified kernel by kernel, and the
report says which engine did what."""

from __future__ import annotations

import importlib.util
import json
import re
import uuid
from pathlib import Path

import pytest

from tests.llm_server import ScriptedServer
from xlate.translate.base import Diagnostic, Translation

if importlib.util.find_spec("litellm") is None or importlib.util.find_spec("triton") is None:
    pytest.skip("needs litellm and triton", allow_module_level=True)
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "examples" / "references"

SOURCE = (ROOT / "examples" / "kernels" / "saxpy.cu").read_text().split("void launch_saxpy")[0] + \
    (ROOT / "examples" / "kernels" / "warp_reduce.cu").read_text().split("#include <cuda_runtime.h>\n", 1)[1]

RULE_SAXPY = """import triton
import triton.language as tl


@triton.jit
def _saxpy_kernel(n, a, x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def saxpy(n, a, x, y):
    _saxpy_kernel[(triton.cdiv(n, 256),)](n, a, x, y, BLOCK=256)
"""

LLM_WARP_REDUCE = """import triton
import triton.language as tl


@triton.jit
def _saxpy_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):  # clashes with the rule module's name on purpose
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))


def warp_reduce_sum(x, partial, n):
    _saxpy_kernel[(triton.cdiv(n, 256),)](x, partial, n, BLOCK=256)
"""

PORTS = {"saxpy": RULE_SAXPY, "warp_reduce_sum": LLM_WARP_REDUCE}


class FakeRules:
    """Stands in for the CUDA->Triton rule translator: lifts saxpy, gives up on the warp shuffles."""

    name = "fake cuda->triton rules"

    def translate(self, unit, text, options):
        k = unit.kernel("warp_reduce_sum")
        diag = Diagnostic("XL2101", "error", "__shfl_down_sync has no Triton rule", unit.path, k.span.line, 5,
                          kernel="warp_reduce_sum", rule="warp:shuffle", needs_llm=True)
        return Translation(unit.path, "cuda", "triton", "rules", RULE_SAXPY, ["saxpy"], [diag], needs_llm=["warp_reduce_sum"])


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "mixed.cu"
    src.write_text(SOURCE)
    (tmp_path / "xlate.toml").write_text(
        f'[kernels.saxpy]\nreference = "{REFERENCES / "saxpy.py"}:saxpy"\n'
        f'[kernels.warp_reduce_sum]\nreference = "{REFERENCES / "warp_reduce.py"}:warp_reduce_sum"\n')
    return src


@pytest.fixture
def llm(monkeypatch, tmp_path):
    server = ScriptedServer().start()
    for var in ("XLATE_MODEL", "XLATE_API_KEY_ENV", "XLATE_LLM_BUDGET_TOKENS", "XLATE_LLM_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XLATE_API_BASE", server.api_base)
    monkeypatch.chdir(tmp_path)  # no pyproject.toml with a model above this folder
    server.model = f"openai/scripted-{uuid.uuid4().hex[:10]}"  # type: ignore[attr-defined]

    def answer(body):
        prompt = body["messages"][1]["content"]
        kernel = re.search(r"Port the CUDA kernel `(\w+)`", prompt).group(1)
        return f"```python\n{PORTS[kernel]}```"

    server.responder = answer
    yield server
    server.stop()


def asked(server) -> list[str]:
    return [re.search(r"Port the CUDA kernel `(\w+)`", r["messages"][1]["content"]).group(1) for r in server.requests]


def test_auto_falls_back_to_the_llm_only_for_what_the_rules_cannot_lift(llm, source, monkeypatch):
    import xlate.port as port

    monkeypatch.setattr(port, "rule_translator", lambda s, t: FakeRules())
    result = port.port_file(port.PortRequest(str(source), "triton", engine="auto", model=llm.model, examples=8))
    assert asked(llm) == ["warp_reduce_sum"] and llm.calls == 1
    assert "XL2101" in llm.prompts()[0]  # the rule's diagnostic was part of the prompt
    by_kernel = {k.kernel: k for k in result.kernels}
    # xlate.port labels non-LLM kernels with the translation's engine, "rules+llm" once the LLM contributed.
    assert (by_kernel["saxpy"].engine, by_kernel["saxpy"].status) in (("rules", "verified"), ("rules+llm", "verified"))
    assert by_kernel["saxpy"].attempts == []
    llm_k = by_kernel["warp_reduce_sum"]
    assert (llm_k.engine, llm_k.status, len(llm_k.attempts)) == ("llm", "verified", 1)
    assert llm_k.verdict.oracle.startswith("reference:warp_reduce.py")
    notes = [d for d in result.translation.diagnostics if d.code == "XL4000"]
    assert len(notes) == 1 and "falling back to the LLM translator" in notes[0].message and "XL2101" in notes[0].message
    assert result.status == "verified" and result.written and result.translation.engine == "rules+llm"
    written = Path(result.output).read_text()
    assert "(rules+llm translator)" in written and "def saxpy(n, a, x, y):" in written
    assert "def warp_reduce_sum(x, partial, n):" in written and "_saxpy_kernel__llm[(triton.cdiv(n, 256),)]" in written
    assert result.translation.needs_llm == [] and result.translation.meta["llm"]["http_calls"] == 1


def test_auto_through_the_cli_says_so(llm, source, monkeypatch, cli):
    import xlate.port as port

    monkeypatch.setattr(port, "rule_translator", lambda s, t: FakeRules())
    res = cli("port", str(source), "--to", "triton", "--engine", "auto", "--model", llm.model, "--examples", "6", "--json")
    assert res.exit_code == 0, res.stderr
    assert "falling back to the LLM translator" in res.stderr and "[XL4000]" in res.stderr
    doc = json.loads(res.stdout)
    engines = {k["kernel"]: (k["engine"].replace("rules+llm", "rules"), k["status"]) for k in doc["kernels"]}
    assert engines == {"saxpy": ("rules", "verified"), "warp_reduce_sum": ("llm", "verified")}
    (wr,) = [k for k in doc["kernels"] if k["kernel"] == "warp_reduce_sum"]
    assert wr["attempts"][0]["verdict"] == "verified" and wr["verdict"]["status"] == "verified"


def test_auto_without_a_model_leaves_the_kernel_untranslated(llm, source, monkeypatch):
    import xlate.port as port

    monkeypatch.setattr(port, "rule_translator", lambda s, t: FakeRules())
    result = port.port_file(port.PortRequest(str(source), "triton", engine="auto", examples=6))
    assert llm.calls == 0 and not result.written
    assert {k.kernel: k.status for k in result.kernels} == {"saxpy": "verified", "warp_reduce_sum": "not translated"}


def test_auto_with_the_real_rule_translator(llm, source):
    """Whatever the real CUDA->Triton rules cannot lift, and only that, goes to the LLM."""
    pytest.importorskip("xlate.translate.triton.translator")
    import xlate.port as port
    from xlate.parse import parse_file
    from xlate.translate.base import TranslateOptions
    from xlate.translate.registry import rule_translator

    unit = parse_file(source)
    rules = rule_translator("cuda", "triton").translate(unit, unit.text, TranslateOptions())
    result = port.port_file(port.PortRequest(str(source), "triton", engine="auto", model=llm.model, examples=6))
    assert sorted(asked(llm)) == sorted(rules.needs_llm)
    llm_kernels = [k for k in result.kernels if k.engine == "llm"]
    assert {k.kernel for k in llm_kernels} == set(rules.needs_llm)
    assert all(k.status == "verified" for k in llm_kernels), [k.verdict.summary() for k in llm_kernels if k.verdict]


def test_a_rejected_rule_port_is_repaired(llm, source):
    """`rejected=`: the rule port of saxpy failed verification; the model sees it with its counterexample, and
    its repair replaces the rule's launcher and the jit kernel only that launcher used."""
    import xlate.port as port
    from xlate.parse import parse_file
    from xlate.translate.llm.engine import llm_repair_or_translate
    from xlate.verify.api import verify

    wrong = RULE_SAXPY.replace("mask = offs < n", "mask = offs < (n // 128) * 128")
    unit = parse_file(source)
    rules = Translation(str(source), "cuda", "triton", "rules", wrong, ["saxpy"], [], needs_llm=[])
    verdict = verify(str(source), None, kernel="saxpy", candidate_text=wrong, candidate_language="triton", examples=6)
    assert verdict.status == "rejected"
    req = port.PortRequest(str(source), "triton", engine="auto", model=llm.model, examples=6)
    gate = port.model_output_gate(req.source, req.target, port.verify_options(req))
    merged, (res,) = llm_repair_or_translate(unit, rules, ["saxpy"], "triton", gate, model=llm.model,
                                             rejected={"saxpy": verdict})
    prompt = llm.prompts()[0]
    assert "A rule-based port that the verifier rejected" in prompt and "(n // 128) * 128" in prompt
    assert "first bad element" in prompt and "replay:" not in prompt
    assert res.accepted and res.verdict is not None and res.verdict.status == "verified"
    assert "(n // 128)" not in merged.text and merged.text.count("def saxpy(") == 1
