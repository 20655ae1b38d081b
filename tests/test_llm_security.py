"""Hostile model output, served over HTTP by the loopback OpenAI-compatible server, through `xlate port --engine
llm` end to end. For every door: nothing runs outside the sandbox (a canary file outside it is never created),
no foreign file content reaches any request the server recorded (a secret file's token), nothing is written as
verified, and the model is told what it did wrong.

Three lines are tested separately: the allow-list (the hostile answers as they are), the OS sandbox (the same
answers with the allow-list switched off by the test), and the reduction of tool output (with the allow-list off
and no sandbox, trusted explicitly: the compiler reads the secret, the prompt still does not carry it)."""

from __future__ import annotations

import importlib.util
import pickle
import uuid
from pathlib import Path

import pytest
from xlate.backends import sandbox

from tests.llm_server import ScriptedServer

if importlib.util.find_spec("litellm") is None or importlib.util.find_spec("triton") is None:
    pytest.skip("needs litellm and triton", allow_module_level=True)
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

ROOT = Path(__file__).resolve().parents[1]
RELU_REF = f"{ROOT / 'examples' / 'references' / 'relu.py'}:relu"
VECTOR_ADD_HIP = ROOT / "examples" / "hip" / "vector_add.hip"

RELU_TRITON = """import triton
import triton.language as tl
import torch
{head}

@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
{jit}    tl.store(y_ptr + offs, tl.where(x > 0.0, x, 0.0), mask=mask)


def relu(x, y, n):
{launcher}    _relu_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
"""

RELU_HIP = """#include <hip/hip_runtime.h>
{head}
__global__ void relu(const float* x, float* y, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
{body}    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}}
"""

VECTOR_ADD_CUDA = """{head}
__global__ void vector_add(const float* a, const float* b, float* c, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}}
"""


class Env:
    """The machine under attack: a source to port, a secret beside it, a canary path, pickles that would
    create the canary when loaded."""

    def __init__(self, tmp: Path):
        self.dir = tmp
        self.token = f"SECRET-TOKEN-{uuid.uuid4().hex}"
        self.secret = tmp / "secret.txt"
        self.secret.write_text(self.token + "\n")
        self.canary = tmp / "PWNED"
        self.pickle = tmp / "evil.pt"
        self.pickle.write_bytes(pickle.dumps(_Touch(str(self.canary))))
        self.source = tmp / "relu.cu"
        self.source.write_text((ROOT / "examples" / "kernels" / "relu.cu").read_text())

    def fill(self, text: str) -> str:
        return (text.replace("CANARY", str(self.canary)).replace("SECRET", str(self.secret))
                .replace("PICKLE", str(self.pickle)).replace("DIRNAME", self.dir.name))


class _Touch:
    """Unpickling this runs os.system('touch ...'): what torch.load / numpy.load(allow_pickle) would do."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.path}",))


def triton_answer(head: str = "", jit: str = "", launcher: str = "") -> str:
    return "```python\n" + RELU_TRITON.format(head=head, jit=jit, launcher=launcher) + "```\n"


def hip_answer(head: str = "", body: str = "") -> str:
    return "```cpp\n" + RELU_HIP.format(head=head, body=body) + "```\n"


# The doors of the issue, each as a model would open it. CANARY / SECRET / PICKLE become absolute paths.
TRITON_DOORS = {
    "getattr_os": triton_answer(head='_o = getattr(torch, "o" + "s")\ngetattr(_o, "sys" + "tem")("touch CANARY")'),
    "builtins_dict": triton_answer(head='__builtins__["__import__"]("os").system("touch CANARY")'),
    "import_in_kernel": triton_answer(jit='    __import__("os").system("touch CANARY")\n'),
    "subclasses": triton_answer(launcher='    [c for c in ().__class__.__base__.__subclasses__()]\n'),
    "load_inline": triton_answer(launcher='    torch.utils.cpp_extension.load_inline("m", cpp_sources="int f(){return system(\\"touch CANARY\\");}", functions=["f"]).f()\n'),
    "torch_load": triton_answer(launcher='    torch.load("PICKLE", weights_only=False)\n'),
    "numpy_load": triton_answer(head="import numpy", launcher='    numpy.load("PICKLE", allow_pickle=True)\n'),
    "ctypes": triton_answer(head="import ctypes", launcher='    ctypes.CDLL(None).system(b"touch CANARY")\n'),
    "open_secret": triton_answer(launcher='    y.fill_(float(len(open("SECRET").read())))\n'),
    "format_escape": triton_answer(launcher='    "{0.__class__.__init__.__globals__}".format(x)\n'),
    "tensor_numpy": triton_answer(launcher='    x.numpy().tofile("CANARY")\n'),
    "type_import": triton_answer(launcher='    x.type("os.system")\n'),
    "interpreter_handle": triton_answer(jit="    x.handle.data.tofile(\"CANARY\")\n"),
    "coding_cookie": "```python\n# -*- coding: utf-7 -*-\n" + RELU_TRITON.format(
        head='#+AAo-import os+ADs-os.system(+ACI-touch CANARY+ACI-)', jit="", launcher="") + "```\n",
}

C_DOORS = {
    "include_absolute": hip_answer(head='#include "SECRET"'),
    "include_relative": hip_answer(head='#include "secret.txt"'),
    "include_dotdot": hip_answer(head='#include "../DIRNAME/secret.txt"'),
    "include_macro": hip_answer(head='#define F "SECRET"\n#include F'),
    "include_continued": hip_answer(head='#inc\\\nlude "SECRET"'),
    "has_include_probe": hip_answer(head='#if __has_include("SECRET")\n#define HAVE 1\n#endif'),
    "include_next": hip_answer(head='#include_next "SECRET"'),
    "pragma_dependency": hip_answer(head='#pragma GCC dependency "SECRET"'),
    "asm_incbin": hip_answer(head='asm(".incbin \\"SECRET\\"");'),
    "pragma_operator": hip_answer(head='_Pragma("GCC dependency \\"SECRET\\"")'),
}


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the secret sits in the working directory: relative includes find it
    return Env(tmp_path)


@pytest.fixture
def llm(monkeypatch):
    server = ScriptedServer().start()
    for var in ("XLATE_MODEL", "XLATE_API_KEY_ENV", "XLATE_LLM_BUDGET_TOKENS", "XLATE_LLM_BUDGET_USD",
                "XLATE_LLM_OFFLINE", "XLATE_LLM_CACHE", "XLATE_TRUST_MODEL_OUTPUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XLATE_API_BASE", server.api_base)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    server.model = f"openai/scripted-{uuid.uuid4().hex[:10]}"  # type: ignore[attr-defined]
    yield server
    server.stop()


def port(llm, source: Path, target: str, answer: str, attempts: int = 2, **kw):
    from xlate.port import PortRequest, port_file

    llm.responder = lambda body: answer
    return port_file(PortRequest(str(source), target, engine="llm", model=llm.model, examples=4,
                                 max_attempts=attempts, **kw))


def assert_contained(env: Env, llm, result) -> None:
    assert not env.canary.exists(), "the payload ran outside the sandbox"
    for text in llm.prompts():
        assert env.token not in text, "foreign file content went to the model"
    out = Path(result.output)
    assert not (result.written and result.status == "verified"), result.message
    if out.exists():
        assert "Verification: verified" not in out.read_text()


@pytest.mark.parametrize("door", sorted(TRITON_DOORS))
def test_hostile_triton_answers_are_refused_by_the_allow_list(env, llm, door):
    result = port(llm, env.source, "triton", env.fill(TRITON_DOORS[door]), reference=RELU_REF)
    assert_contained(env, llm, result)
    assert not result.written and llm.calls == 2
    attempts = result.kernels[0].attempts
    assert [a["failure"] for a in attempts] == ["contract", "contract"] and all(a["compile"] == "skipped" for a in attempts)
    assert all(a["isolation"] is None for a in attempts)  # nothing was built or run
    repair = llm.requests[1]["messages"][-1]["content"]
    assert "not accepted: contract" in repair and "not allowed" in repair


@pytest.mark.parametrize("door", sorted(C_DOORS))
def test_hostile_c_answers_are_refused_by_the_allow_list(env, llm, door):
    result = port(llm, env.source, "hip", env.fill(C_DOORS[door]))
    assert_contained(env, llm, result)
    attempts = result.kernels[0].attempts
    assert [a["failure"] for a in attempts] == ["contract", "contract"] and not result.written
    repair = llm.requests[1]["messages"][-1]["content"]
    assert "not allowed" in repair or "must name a header literally" in repair


def test_the_same_allow_list_accepts_the_honest_ports(env, llm):
    result = port(llm, env.source, "triton", triton_answer(), reference=RELU_REF)
    assert result.status == "verified" and result.written and llm.calls == 1
    assert result.kernels[0].attempts[0]["isolation"] == "sandboxed"
    assert any(c.startswith("isolation: sandboxed") for c in result.kernels[0].verdict.caveats)


def test_the_report_shows_exactly_what_was_sent(env, llm):
    answers = iter([env.fill(TRITON_DOORS["getattr_os"]), triton_answer()])
    from xlate.port import PortRequest, port_file

    llm.responder = lambda body: next(answers)
    result = port_file(PortRequest(str(env.source), "triton", engine="llm", model=llm.model, examples=4,
                                   max_attempts=3, reference=RELU_REF))
    attempts = result.kernels[0].attempts
    assert len(attempts) == len(llm.requests) == 2 and result.status == "verified"
    conversation: list[dict] = []
    for rec, request in zip(attempts, llm.requests):
        conversation += rec["sent"]
        assert conversation == request["messages"]
    assert [m["role"] for m in attempts[1]["sent"]] == ["assistant", "user"]


# -- the second line: the allow-list switched off, the sandbox alone --------------------------------------------


@pytest.fixture
def no_allowlist(monkeypatch):
    """Let every answer through the contract check of the repair loop (the test's doing, not xlate's)."""
    import xlate.translate.llm.loop as loop

    real = loop.check
    monkeypatch.setattr(loop, "check", lambda contract, code: (real(contract, code)[0], [])
                        if real(contract, code)[0] == "compile error" else (None, []))


@pytest.mark.skipif(not sandbox.available(), reason="no sandbox here")
def test_without_the_allow_list_the_sandbox_contains_the_payload_and_the_port_is_not_written(env, llm, no_allowlist):
    # A correct kernel with the payload: it runs (in the sandbox), is verified, and is still not written.
    result = port(llm, env.source, "triton", env.fill(TRITON_DOORS["getattr_os"]), attempts=1, reference=RELU_REF)
    assert_contained(env, llm, result)
    rec = result.kernels[0].attempts[0]
    assert rec["isolation"] == "sandboxed" and rec["verdict"] == "verified"
    assert not result.written and result.status == "rejected" and "allow-list" in result.message
    assert not Path(result.output).exists()


@pytest.mark.skipif(not sandbox.available(), reason="no sandbox here")
@pytest.mark.parametrize("door", ["open_secret", "torch_load", "ctypes"])
def test_without_the_allow_list_reads_and_loads_fail_inside_the_sandbox(env, llm, no_allowlist, door):
    result = port(llm, env.source, "triton", env.fill(TRITON_DOORS[door]), reference=RELU_REF)
    assert_contained(env, llm, result)
    assert {a["isolation"] for a in result.kernels[0].attempts} == {"sandboxed"}


@pytest.mark.skipif(not sandbox.available(), reason="no sandbox here")
@pytest.mark.parametrize("target", ["hip", "cuda"])
def test_without_the_allow_list_compilers_cannot_read_the_secret_in_the_sandbox(env, llm, no_allowlist, target):
    if target == "hip":
        from xlate.backends.hip import hipcc_path

        if hipcc_path() is None:
            pytest.skip("hipcc not installed")
        source, answer = env.source, env.fill(C_DOORS["include_absolute"])
    else:  # NVRTC, which compiles in the xlate process for trusted text
        source = env.dir / "vector_add.hip"
        source.write_text(VECTOR_ADD_HIP.read_text())
        answer = "```cuda\n" + VECTOR_ADD_CUDA.format(head=f'#include "{env.secret}"') + "```\n"
    result = port(llm, source, target, answer)
    assert_contained(env, llm, result)
    attempts = result.kernels[0].attempts
    assert attempts[0]["failure"] == "compile error" and attempts[0]["isolation"] == "sandboxed"
    assert "not found" in llm.requests[1]["messages"][-1]["content"] or \
        "cannot open source file" in llm.requests[1]["messages"][-1]["content"]


# -- no sandbox ------------------------------------------------------------------------------------------------


@pytest.fixture
def no_sandbox(monkeypatch):
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Detection(None, "test: no sandbox"))


def test_without_a_sandbox_model_output_is_not_run_unless_trusted(env, llm, no_allowlist, no_sandbox):
    result = port(llm, env.source, "triton", env.fill(TRITON_DOORS["getattr_os"]), attempts=1, reference=RELU_REF)
    assert_contained(env, llm, result)
    rec = result.kernels[0].attempts[0]
    assert rec["isolation"] == "refused" and result.status != "verified" and not result.written
    assert "sandbox" in (result.kernels[0].verdict.reason or "")


def test_trusted_without_a_sandbox_the_report_says_so(env, llm, no_sandbox, monkeypatch):
    monkeypatch.setenv("XLATE_TRUST_MODEL_OUTPUT", "1")
    result = port(llm, env.source, "triton", triton_answer(), attempts=1, reference=RELU_REF)
    assert result.status == "verified" and result.kernels[0].attempts[0]["isolation"] == "trusted-unsandboxed"
    assert any("trusted-unsandboxed" in c for c in result.kernels[0].verdict.caveats)


@pytest.mark.parametrize("target", ["hip", "cuda"])
def test_compiler_output_about_other_files_never_reaches_the_model(env, llm, no_allowlist, no_sandbox, monkeypatch, target):
    """The third line: trusted, unsandboxed, no allow-list: the compiler does read the secret and quotes it in
    its log; the repair prompt carries only the diagnostics located in the candidate."""
    monkeypatch.setenv("XLATE_TRUST_MODEL_OUTPUT", "1")
    if target == "hip":
        from xlate.backends.hip import hipcc_path

        if hipcc_path() is None:
            pytest.skip("hipcc not installed")
        source, answer = env.source, env.fill(C_DOORS["include_absolute"])
    else:
        source = env.dir / "vector_add.hip"
        source.write_text(VECTOR_ADD_HIP.read_text())
        # absolute: the device slice drops a relative include it cannot find beside the candidate
        answer = "```cuda\n" + VECTOR_ADD_CUDA.format(head=f'#include "{env.secret}"') + "```\n"
    from xlate.backends.base import CompileError
    from xlate.backends.registry import get_backend

    with pytest.raises(CompileError) as err:  # the threat is real: the compiler quotes the file
        text = answer.split("\n", 1)[1].rsplit("```", 1)[0]
        if target == "hip":
            get_backend("hip").check_file(text, "gfx90a", "<candidate>.hip")
        else:
            from xlate.backends.base import CompileOptions

            get_backend("cuda").compile(text, "vector_add", CompileOptions(), path="<candidate>.cu")
    assert env.token in err.value.log
    result = port(llm, source, target, answer)
    assert_contained(env, llm, result)
    attempts = result.kernels[0].attempts
    assert attempts[0]["failure"] == "compile error" and attempts[0]["isolation"] == "trusted-unsandboxed"
    repair = llm.requests[1]["messages"][-1]["content"]
    assert "located outside the candidate file are not shown" in repair


def test_port_cli_takes_trust_model_output_and_the_json_report_says_so(env, llm, no_sandbox, monkeypatch, cli):
    import json

    monkeypatch.setenv("XLATE_TRUST_MODEL_OUTPUT", "0")  # restored after the test; the flag sets it to 1
    llm.responder = lambda body: triton_answer()
    args = ("port", str(env.source), "--to", "triton", "--engine", "llm", "--model", llm.model, "--examples", "4",
            "--reference", RELU_REF, "--json")
    refused = json.loads(cli(*args).stdout)
    assert refused["status"] != "verified" and refused["kernels"][0]["attempts"][0]["isolation"] == "refused"
    trusted = json.loads(cli(*args, "--trust-model-output").stdout)
    kernel = trusted["kernels"][0]
    assert trusted["status"] == "verified" and kernel["attempts"][-1]["isolation"] == "trusted-unsandboxed"
    assert any("trusted-unsandboxed" in c for c in kernel["verdict"]["caveats"])
