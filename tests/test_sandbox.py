"""The OS sandbox (backends/sandbox.py) on its own, without the allow-list in front of it: what sandboxed code can
see and do (no host files, no network, no credentials, rlimits), the Triton interpreter worker and the compilers
(NVRTC, hipcc) running inside it, and the policy where no sandbox works."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest
from xlate.backends import sandbox
from xlate.backends.base import BufferArg, CompileError, CompileOptions, LaunchConfig, ScalarArg
from xlate.backends.registry import get_backend

from tests.llm_server import ScriptedServer

ROOT = Path(__file__).resolve().parents[1]
if sandbox.bwrap_path() is None:
    pytest.skip("bubblewrap is not installed (ci/setup.sh installs it)", allow_module_level=True)
if not sandbox.available():
    pytest.skip(f"no sandbox here: {sandbox.detect().reason}", allow_module_level=True)


@pytest.fixture
def secret(tmp_path):
    token = f"SECRET-TOKEN-{uuid.uuid4().hex}"
    path = tmp_path / "secret.txt"
    path.write_text(token + "\n")
    return path, token


PROBE = """
import json, os, socket, sys
out = {"uid": os.getuid(), "root": sorted(os.listdir("/")), "env": sorted(os.environ)}
for name, path in json.loads(sys.argv[1]).items():
    out[name] = os.path.exists(path)
try:
    open(sys.argv[2], "w").write("x")
    out["canary_written"] = True
except OSError as exc:
    out["canary_written"] = type(exc).__name__
try:
    open("/usr/xlate-probe", "w")
    out["usr_writable"] = True
except OSError:
    out["usr_writable"] = False
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=3).close()
    out["network"] = True
except OSError as exc:
    out["network"] = type(exc).__name__
open("/tmp/private", "w").write("ok")
out["tmp_writable"] = open("/tmp/private").read() == "ok"
out["limits"] = open("/proc/self/limits").read()
print(json.dumps(out))
"""


def test_the_view_holds_no_host_files_no_network_no_credentials_and_has_limits(secret, tmp_path, monkeypatch):
    path, _ = secret
    canary = tmp_path / "PWNED"
    server = ScriptedServer().start()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-never-be-seen")
    monkeypatch.setenv("XLATE_TRUST_MODEL_OUTPUT", "1")
    try:
        paths = {"secret": str(path), "tests": str(ROOT / "tests"), "passwd": "/etc/passwd", "home": str(Path.home()),
                 "examples": str(ROOT / "examples")}
        cmd = sandbox.build([sys.executable, "-P", "-c", PROBE, json.dumps(paths), str(canary), str(server.port)])
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert not any(seen[k] for k in ("secret", "tests", "passwd", "examples")), seen
    assert seen["canary_written"] != True and not canary.exists()  # noqa: E712 (an error name, or True)
    assert seen["network"] != True and server.calls == 0  # noqa: E712
    assert seen["usr_writable"] is False and seen["tmp_writable"] is True
    assert "OPENAI_API_KEY" not in seen["env"] and "XLATE_TRUST_MODEL_OUTPUT" not in seen["env"]
    assert set(seen["root"]) <= {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "tmp",
                                 "sys", "run", "opt", "root", "home", "work", "xlate-in", *Path(sys.prefix).parts[1:2],
                                 *Path(sys.base_prefix).parts[1:2], *Path(ROOT).parts[1:2]}
    if sandbox.detect().mechanism.variant.startswith("userns"):
        assert seen["uid"] == sandbox.SANDBOX_UID
    if sandbox.prlimit_path():
        limits = {ln[:26].strip(): ln[26:].split() for ln in seen["limits"].splitlines()[1:]}
        lim = sandbox.config()["limits"]
        assert limits["Max core file size"][0] == "0"
        assert int(limits["Max file size"][0]) == lim["file_size_mb"] << 20
        assert int(limits["Max open files"][0]) == lim["open_files"]


HOSTILE_MODULE = """
import os, socket
import torch
import triton
import triton.language as tl

FLAGS = [0.0, 0.0, 0.0, 0.0]
try:
    FLAGS[0] = float(len(open({secret!r}).read()))       # read a host file
except OSError:
    pass
try:
    os.system("touch {canary}")                            # create a host file
    FLAGS[1] = float(os.path.exists({canary!r}))
except OSError:
    pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()   # talk to the network
    FLAGS[2] = 1.0
except OSError:
    pass
FLAGS[3] = float(len([k for k in os.environ if "KEY" in k]))            # see credentials


@triton.jit
def _k(y_ptr, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(y_ptr + o, o * 0.0)


def k(y):
    _k[(1,)](y, BLOCK=4)
    for i in range(4):
        y[i] = FLAGS[i]
"""


def test_a_hostile_triton_module_runs_in_the_worker_sandbox_and_reaches_nothing(secret, tmp_path, monkeypatch):
    """The second line alone: a module the allow-list would refuse, run directly by the backend."""
    path, _ = secret
    canary = tmp_path / "PWNED"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-should-never-be-seen")
    server = ScriptedServer().start()
    code = HOSTILE_MODULE.format(secret=str(path), canary=str(canary), port=server.port)
    backend = get_backend("triton")
    try:
        with sandbox.untrusted() as policy:
            art = backend.compile(code, "k", CompileOptions(), path="<candidate>.py")
            res = backend.run(art, [BufferArg("y", np.full(12, -1.0, np.float32), 4, 4)], LaunchConfig(), timeout=120)
    finally:
        server.stop()
    assert res.status == "ok", res.message + res.stderr
    flags = res.buffers["y"][4:8].tolist()
    assert flags == [0.0, 0.0, 0.0, 0.0] and not canary.exists() and server.calls == 0
    assert policy.label() == "sandboxed"
    from xlate.backends.worker import _POOL

    workers = [w for w in _POOL.values() if w.backend == "triton" and w.sandboxed]
    assert workers and workers[0].proc is not None and workers[0].proc.args[0] == sandbox.detect().mechanism.tool
    # the control: the same module outside any policy (xlate's own code path) reaches the host
    res = backend.run(art, [BufferArg("y", np.full(12, -1.0, np.float32), 4, 4)], LaunchConfig(), timeout=120)
    assert res.status == "ok" and res.buffers["y"][4] > 0 and canary.exists()


def test_nvrtc_reads_no_file_for_untrusted_text(secret, monkeypatch):
    """NVRTC compiles in the xlate process when the text is trusted: there an absolute #include reads the file
    (and the log quotes it). Untrusted text goes to the sandboxed worker, where the file does not exist."""
    from xlate.backends import nvrtc

    if nvrtc.nvrtc_version() is None:
        pytest.skip("NVRTC not installed")
    path, token = secret
    src = f'#include "{path}"\n__global__ void k(float* x) {{ x[0] = 1.0f; }}\n'
    trusted = nvrtc.compile_nvrtc(src, name="<candidate>.cu", arch="sm_90", name_expressions=["k"])
    assert not trusted.ok and token in trusted.log  # the threat is real
    with sandbox.untrusted() as policy:
        out = nvrtc.compile_nvrtc(src, name="<candidate>.cu", arch="sm_90", name_expressions=["k"])
        good = nvrtc.compile_nvrtc(src.split("\n", 1)[1], name="<candidate>.cu", arch="sm_90", name_expressions=["k"])
    assert not out.ok and token not in out.log and "cannot open source file" in out.log
    assert good.ok and good.cubin and good.lowered["k"]
    assert policy.label() == "sandboxed"


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_hipcc_compiles_untrusted_text_inside_the_sandbox(secret):
    path, token = secret
    hip = get_backend("hip")
    good = f"#include <hip/hip_runtime.h>\n__global__ void k(float* x) {{ x[threadIdx.x] = 1.0f; }} // {uuid.uuid4()}\n"
    with sandbox.untrusted() as policy:
        res = hip.check_file(good, "gfx90a", "<candidate>.hip")
        with pytest.raises(CompileError) as err:
            hip.check_file(f'#include "{path}"\n' + good, "gfx90a", "<candidate>.hip")
    assert res.ok and not res.cached
    assert token not in err.value.log and "not found" in err.value.log
    assert policy.label() == "sandboxed"


def test_where_no_sandbox_works_model_output_is_refused_unless_trusted(monkeypatch):
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Detection(None, "test: no sandbox"))
    monkeypatch.delenv("XLATE_TRUST_MODEL_OUTPUT", raising=False)
    with sandbox.untrusted(require=True) as policy, pytest.raises(sandbox.SandboxUnavailable) as err:
        sandbox.decide()
    assert policy.label() == "refused" and "--trust-model-output" in err.value.remedy
    assert "not built or run" in policy.caveat()
    with sandbox.untrusted(require=False, what="fuzz input") as policy:
        assert sandbox.decide() is False
    assert policy.label() == "unsandboxed"
    monkeypatch.setenv("XLATE_TRUST_MODEL_OUTPUT", "1")
    with sandbox.untrusted(require=True) as policy:
        assert sandbox.decide() is False
    assert policy.label() == "trusted-unsandboxed" and "ran with your privileges" in policy.caveat()
    assert sandbox.decide() is False  # outside any policy: xlate's own work, never sandboxed


def test_a_nested_fuzz_scope_inside_model_output_stays_model_output():
    with sandbox.untrusted(require=True) as outer, sandbox.untrusted(require=False, what="fuzz input") as inner:
        assert inner.require and inner.what == "model output"
        sandbox.decide()
    assert outer.label() == "sandboxed"


def test_fuzz_runs_both_sides_in_the_sandbox_and_the_verdict_says_so(cli):
    res = cli("fuzz", str(ROOT / "examples/triton/relu.py"), "--reference", str(ROOT / "examples/references/relu.py:relu"),
              "--examples", "4", "--json")
    verdict = json.loads(res.stdout)
    assert res.exit_code == 0 and verdict["status"] == "verified", res.output
    assert any(c.startswith("isolation: sandboxed") for c in verdict["caveats"])


def test_fuzz_refuses_a_model_written_file_without_a_sandbox_unless_trusted(cli, tmp_path, monkeypatch):
    port = tmp_path / "relu_port.py"
    port.write_text("# Generated by xlate 0.1.0 from relu.cu (llm translator).\n# Verification: verified.\n"
                    + (ROOT / "examples/triton/relu.py").read_text())
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Detection(None, "test: no sandbox"))
    monkeypatch.delenv("XLATE_TRUST_MODEL_OUTPUT", raising=False)
    ref = str(ROOT / "examples/references/relu.py:relu")
    res = cli("fuzz", str(port), "--reference", ref, "--examples", "4", "--json")
    verdict = json.loads(res.stdout)
    assert res.exit_code == 3 and verdict["status"] == "unverified" and "sandbox" in verdict["reason"]
    res = cli("fuzz", str(port), "--reference", ref, "--examples", "4", "--json", "--trust-model-output")
    verdict = json.loads(res.stdout)
    assert res.exit_code == 0 and any("trusted-unsandboxed" in c for c in verdict["caveats"])


def test_the_sandbox_module_reports_what_works():
    out = subprocess.run([sys.executable, "-m", "xlate.backends.sandbox"], capture_output=True, text=True, timeout=120)
    info = json.loads(out.stdout)
    assert info["available"] is True and info["tool"].endswith("bwrap") and info["variant"]
    assert textwrap.shorten(info["reason"], 20)


def test_sandboxed_code_cannot_create_namespaces_of_its_own():
    """--disable-userns: no nested sandbox, no user namespace to widen the kernel's attack surface."""
    if sandbox.detect().mechanism.variant != "userns+disable-userns":
        pytest.skip("this bwrap cannot disable nested user namespaces")
    tool = sandbox.bwrap_path()
    env = sandbox.sandbox_env()  # bwrap bound where it lies (e.g. unpacked under /tmp), and found there
    env["PATH"] = f"{os.path.dirname(tool)}:{env['PATH']}"
    cmd = sandbox.build([sys.executable, "-P", "-m", "xlate.backends.sandbox"], extra_ro=[tool], env=env)
    info = json.loads(subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout)
    assert info["available"] is False and "namespace" in info["reason"]


def test_a_wrapping_tool_inside_the_sandbox_can_write_its_log_for_the_host(tmp_path):
    """compute-sanitizer's --log-file: the folder of a file the wrapper is told to create is bound writable."""
    from xlate.backends.worker import finish_worker

    log = tmp_path / "tool" / "wrapper.log"
    log.parent.mkdir()
    wrapper = ["/bin/sh", "-c", 'echo wrapped > "$0"; exec "$@"', str(log)]
    backend = get_backend("triton")
    code = (ROOT / "examples/triton/relu.py").read_text()
    with sandbox.untrusted():
        art = backend.compile(code, "relu", CompileOptions(), path="relu.py")
        args = [BufferArg("x", np.ones(8, np.float32), 2, 4), BufferArg("y", np.zeros(8, np.float32), 2, 4),
                ScalarArg("n", 4, "int32")]
        res = backend.run(art, args, LaunchConfig(), timeout=120, wrapper=wrapper)
    finish_worker("triton", backend.worker_env(), wrapper)
    assert res.status == "ok" and res.buffers["y"][2:6].tolist() == [1.0] * 4
    assert log.read_text() == "wrapped\n"


def test_pythonpath_entries_holding_xlate_are_passed_in_and_no_others(monkeypatch, tmp_path):
    # an install by `pip --target DIR` + PYTHONPATH=DIR (how the GPU machine gets xlate): `import xlate` must
    # work inside, and its dist-info (the backend entry points) must be seen: the whole entry is bound read-only;
    # unrelated entries stay outside
    holder = str(Path(sandbox._package_dirs()[0]).parent)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}/elsewhere:{holder}")
    assert sandbox.sandbox_env()["PYTHONPATH"] == holder
    sandbox.python_paths.cache_clear()
    try:
        assert holder in sandbox.python_paths() and f"{tmp_path}/elsewhere" not in sandbox.python_paths()
    finally:
        sandbox.python_paths.cache_clear()
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}/elsewhere")
    assert "PYTHONPATH" not in sandbox.sandbox_env()


def test_python_installed_under_tmp_is_bound_after_the_private_tmp(monkeypatch, tmp_path):
    # `pip --target /tmp/site`: a bind placed before the private /tmp would be hidden by it
    site = tmp_path / "site"
    (site / "pkg").mkdir(parents=True)
    monkeypatch.setattr(sandbox, "python_paths", lambda: (str(site / "pkg"),))
    mech = sandbox.Mechanism("bwrap", "0", sandbox.NO_USERNS, "no-userns")
    cmd = sandbox.build(["true"], mech=mech)
    tmpfs = cmd.index("--tmpfs")
    bind = max(i for i, a in enumerate(cmd) if a == str(site / "pkg") and cmd[i - 1] == "--ro-bind")
    assert str(site).startswith("/tmp") and bind > tmpfs
