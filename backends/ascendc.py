"""AscendC backend (Huawei CANN): detection, and compile/run through CANN's tools when they are installed.

No registry reachable from the machines this project is developed on offers CANN, so nothing here has ever
compiled or run an AscendC kernel; `detect()` says exactly what is missing and the backend never claims more.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from xlate.backends.base import (
    Arg,
    Artifact,
    CompileError,
    CompileOptions,
    CompileResult,
    LaunchConfig,
    RunResult,
    ToolchainInfo,
    compile_cache_dir,
    content_key,
    store_artifact,
)

from xlate.errors import ToolchainMissing
from xlate.fsutil import atomic_write_bytes

DEFAULT_SOC = "Ascend910B1"
REMEDY = (
    "install Huawei CANN (Ascend toolkit) and `source <ascend-toolkit>/set_env.sh` so that ASCEND_HOME_PATH "
    "is set and bisheng/ccec are on PATH; running also needs an Ascend NPU (npu-smi) or CANN's CPU debug library"
)


@functools.cache
def cann_home() -> str | None:
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH"):
        value = os.environ.get(var)
        if value and os.path.isdir(value):
            return value if var != "ASCEND_OPP_PATH" else str(Path(value).parent)
    for guess in ("/usr/local/Ascend/ascend-toolkit/latest", "/usr/local/Ascend/latest"):
        if os.path.isdir(guess):
            return guess
    return None


def _tool(name: str) -> str | None:
    home = cann_home()
    candidates = [shutil.which(name)]
    if home:
        candidates += [str(Path(home) / sub / name) for sub in ("bin", "compiler/ccec_compiler/bin", "tools/ccec_compiler/bin")]
    return next((c for c in candidates if c and os.path.exists(c)), None)


def _version(home: str | None) -> str | None:
    if home is None:
        return None
    for info in ("version.cfg", "compiler/version.info", "version.info"):
        path = Path(home) / info
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if "version" in line.lower():
                    return line.split("=", 1)[-1].strip()
    return "unknown"


class AscendCBackend:
    name = "ascendc"
    languages = ("ascendc",)

    def detect(self) -> ToolchainInfo:
        home = cann_home()
        compiler = _tool("bisheng") or _tool("ccec")
        npu_smi = shutil.which("npu-smi")
        info = ToolchainInfo(
            backend=self.name,
            found=home is not None,
            can_compile=compiler is not None,
            can_run=False,  # see run(): no launcher is written for a machine nobody here has had
            platform=None,
        )
        if home:
            info.paths["cann"] = home
            info.versions["cann"] = _version(home) or "unknown"
        else:
            info.missing.append("CANN toolkit (ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME)")
        if compiler:
            info.paths["compiler"] = compiler
        else:
            info.missing.append("AscendC compiler (bisheng or ccec)")
        if _tool("msopgen"):
            info.paths["msopgen"] = _tool("msopgen") or ""
        else:
            info.missing.append("msopgen (operator project generator)")
        if npu_smi:
            info.paths["npu-smi"] = npu_smi
        else:
            info.missing.append("an Ascend NPU (npu-smi)")
        info.missing.append("an xlate launcher for AscendC kernels (not written: no CANN machine to test it on)")
        info.remedy = REMEDY
        return info

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>.cpp") -> Artifact:
        compiler = _tool("bisheng") or _tool("ccec")
        home = cann_home()
        if compiler is None or home is None:
            raise ToolchainMissing("the CANN AscendC compiler is not installed here", REMEDY)
        soc = options.arch or DEFAULT_SOC
        key = content_key(self.name, source, kernel, soc, _version(home))
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / (Path(path).stem + ".cpp")
            src.write_text(source)
            obj = Path(tmp) / "k.o"
            include = [f"-I{Path(home) / d}" for d in ("include", "compiler/tikcpp", "compiler/tikcpp/tikcfw",
                                                        "compiler/tikcpp/tikcfw/impl", "compiler/tikcpp/tikcfw/interface")]
            cmd = [compiler, "-c", "-O2", "-std=c++17", "-xcce", f"--cce-soc-version={soc}", *include, str(src), "-o", str(obj)]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                raise CompileError(self.name, (proc.stdout + proc.stderr).replace(str(src), path), path)
            out = compile_cache_dir(self.name) / f"{key}.o"
            atomic_write_bytes(out, obj.read_bytes())
        art = Artifact(self.name, kernel, key, str(out), kernel, meta={"soc": soc, "command": " ".join(cmd)},
                       compile=CompileResult(True, proc.stdout + proc.stderr, time.perf_counter() - t0))
        store_artifact(art)
        return art

    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None) -> RunResult:
        raise ToolchainMissing("xlate cannot run AscendC kernels on this machine", REMEDY)

    def worker_runtime(self):
        raise ToolchainMissing("no AscendC runtime", REMEDY)
