"""AscendC backend (Huawei CANN): detection, and compile-checks through CANN's bisheng compiler when installed.

No registry reachable from the machines this project is developed on offers CANN, so nothing here has ever
compiled or run an AscendC kernel; `detect()` says exactly what is missing and the backend never claims more.

How AscendC sources are compiled (sources checked through public material; none verified here):
  * CANN's single-file ("heterogeneous") form, host code and kernels in one file, as xlate's ports are:
      bisheng -x asc k.cpp -c -o k.o --npu-arch=dav-2201
    (Ascend C operator development guide, 2.3.1.2 "compile with the bisheng command line": `-x asc` selects the
    Ascend C language for .cpp files, `--npu-arch=dav-<arch version>` the NPU architecture, `-c` an object;
    asc-devkit examples/00_introduction/11_vectoradd/add_tiling/CMakeLists.txt passes the same --npu-arch=dav-2201.)
  * Older bisheng releases select the core architecture instead: `bisheng -x asc --cce-aicore-arch=dav-c220 ...`
    (public build scripts, e.g. `bisheng -x asc k.cpp -shared -fPIC -O2 --cce-aicore-arch=dav-c220`), and the
    kernel-launch CMake of CANN's samples compiles device code with
      bisheng --cce-aicore-lang --cce-aicore-arch=dav-c220-vec --cce-aicore-only --cce-auto-sync -O3 -std=c++17
              -I<toolkit>/tools/tikcpp/tikcfw{,/interface,/impl} -c k.cpp
    (compile_commands.json of Ascend/samples AddKernelInvocationNeo builds published on GitHub, CANN 8.x
    `tools/ccec_compiler/bin/bisheng`; CANN 8.5 adds `<arch>-linux/asc/include{,/basic_api,...}`).
  xlate tries the --npu-arch form first and falls back to --cce-aicore-arch when the compiler rejects the option.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from pathlib import Path

from xlate.backends.base import (
    Arg,
    Artifact,
    BackendDefaults,
    Capability,
    CompileError,
    CompileOptions,
    CompileResult,
    LaunchConfig,
    RunResult,
    StaticCheck,
    ToolchainInfo,
    WorkerRuntime,
    compile_cache_dir,
    content_key,
    store_artifact,
)
from xlate.backends.sandbox import run_tool

from xlate.errors import ToolchainMissing
from xlate.fsutil import atomic_write_bytes

DEFAULT_SOC = "Ascend910B1"
REMEDY = (
    "install Huawei CANN (the Ascend-cann-toolkit package from https://www.hiascend.com/software/cann) and "
    "`source <install dir>/ascend-toolkit/set_env.sh` (or `<install dir>/latest/bin/setenv.bash`) so that "
    "ASCEND_HOME_PATH is set and bisheng is on PATH; running also needs an Ascend NPU with its driver (npu-smi)"
)
# Where CANN releases keep the compiler and the AscendC headers, relative to the toolkit home.
HOST_ARCHES = ("x86_64-linux", "aarch64-linux", "")
COMPILER_DIRS = ("bin", "compiler/ccec_compiler/bin", "tools/ccec_compiler/bin", "ccec_compiler/bin")
INCLUDE_DIRS = ("asc/include", "asc/include/basic_api", "asc/include/adv_api", "asc/include/utils", "asc/impl/basic_api",
                "asc/impl/adv_api", "asc/impl/utils", "tikcpp/tikcfw", "tikcpp/tikcfw/interface", "tikcpp/tikcfw/impl",
                "compiler/tikcpp/tikcfw", "compiler/tikcpp/tikcfw/interface", "compiler/tikcpp/tikcfw/impl",
                "tools/tikcpp/tikcfw", "tools/tikcpp/tikcfw/interface", "tools/tikcpp/tikcfw/impl", "include")


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


def _under_home(rel: str) -> list[Path]:
    home = cann_home()
    if not home:
        return []
    return [Path(home) / arch / rel if arch else Path(home) / rel for arch in HOST_ARCHES]


def _tool(name: str) -> str | None:
    candidates = [shutil.which(name)]
    for d in COMPILER_DIRS:
        candidates += [str(p / name) for p in _under_home(d)]
    return next((c for c in candidates if c and os.path.exists(c)), None)


def include_dirs() -> list[str]:
    return [str(p) for d in INCLUDE_DIRS for p in _under_home(d) if p.is_dir()]


def _version(home: str | None) -> str | None:
    if home is None:
        return None
    for info in ("version.cfg", "compiler/version.info", "version.info", "x86_64-linux/ascend_toolkit_install.info",
                 "aarch64-linux/ascend_toolkit_install.info"):
        path = Path(home) / info
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                if "version" in line.lower():
                    return line.split("=", 1)[-1].strip()
    return "unknown"


def soc_flags(arch: str | None) -> tuple[str, list[list[str]]]:
    """(SoC name, candidate architecture flags in the order to try) for an --arch value."""
    from xlate.arch import find_arch

    spec = find_arch(arch or DEFAULT_SOC)
    target = str(spec.get("target", "dav-c220"))
    flags: list[list[str]] = []
    if spec.get("npu_arch"):
        flags.append([f"--npu-arch=dav-{spec['npu_arch']}"])
    flags.append([f"--cce-aicore-arch={target}"])
    return str(spec.get("soc_version", spec.get("name"))), flags


def compile_command(compiler: str, src: str, obj: str, arch_flags: list[str], defines: dict[str, str],
                    extra: list[str]) -> list[str]:
    return [compiler, "-x", "asc", src, "-c", "-o", obj, "-O2", "-std=c++17", *arch_flags,
            *(f"-I{d}" for d in include_dirs()), *(f"-D{k}={v}" if v else f"-D{k}" for k, v in defines.items()), *extra]


def _rejected_option(log: str) -> bool:
    low = log.lower()
    return ("unknown argument" in low or "unsupported option" in low or "unrecognized" in low) and "npu-arch" in low


class AscendCBackend(BackendDefaults):
    name = "ascendc"
    languages = ("ascendc",)
    capabilities: frozenset[Capability] = frozenset({"grid_launch"})

    def detect(self) -> ToolchainInfo:
        home = cann_home()
        compiler = _tool("bisheng") or _tool("ccec")
        npu_smi = shutil.which("npu-smi")
        info = ToolchainInfo(
            backend=self.name,
            found=home is not None,
            can_compile=compiler is not None and home is not None,
            can_run=False,  # see run(): no launcher is written for a machine nobody here has had
            platform=None,
        )
        if home:
            info.paths["cann"] = home
            info.versions["cann"] = _version(home) or "unknown"
        else:
            info.missing.append("CANN toolkit (ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME not set, no /usr/local/Ascend)")
        if compiler:
            info.paths["compiler"] = compiler
        else:
            info.missing.append("the AscendC compiler bisheng (CANN's ccec_compiler)")
        if npu_smi:
            info.paths["npu-smi"] = npu_smi
        else:
            info.missing.append("an Ascend NPU (npu-smi)")
        info.missing.append("an xlate launcher for AscendC kernels (not written: no CANN machine to test it on)")
        info.remedy = REMEDY
        info.notes.append("AscendC ports are checked statically everywhere (xlate.backends.ascendc_check); "
                          "compiling needs CANN, running an NPU")
        return info

    def compile(self, source: str, kernel: str, options: CompileOptions, *, path: str = "<source>.cpp") -> Artifact:
        compiler = _tool("bisheng") or _tool("ccec")
        home = cann_home()
        if compiler is None or home is None:
            raise ToolchainMissing("the CANN AscendC compiler is not installed here", REMEDY)
        soc, candidates = soc_flags(options.arch)
        defines = dict(options.defines)
        key = content_key(self.name, source, kernel, soc, defines, options.extra, _version(home))
        t0 = time.perf_counter()
        log = ""
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / (Path(path).stem + ".cpp")
            src.write_text(source)
            obj = Path(tmp) / "k.o"
            for flags in candidates:
                cmd = compile_command(compiler, str(src), str(obj), flags, defines, list(options.extra))
                # sandboxed when the source is untrusted (the toolkit read-only)
                proc = run_tool(cmd, workdir=tmp, timeout=600, extra_ro=[home])
                log = (proc.stdout + proc.stderr).replace(str(src), path)
                if proc.returncode == 0 or not _rejected_option(log):
                    break
            if proc.returncode != 0:
                raise CompileError(self.name, log, path)
            out = compile_cache_dir(self.name) / f"{key}.o"
            atomic_write_bytes(out, obj.read_bytes())
        art = Artifact(self.name, kernel, key, str(out), kernel, meta={"soc": soc, "command": " ".join(cmd)},
                       compile=CompileResult(True, log, time.perf_counter() - t0))
        store_artifact(art)
        return art

    def check_source(self, source: str, path: str, arch: str | None) -> StaticCheck:
        from xlate.backends.ascendc_check import check_ascendc, what_was_checked

        findings = check_ascendc(source, path, arch)
        return StaticCheck(findings, what_was_checked(findings))

    def run(self, artifact: Artifact, args: list[Arg], launch: LaunchConfig, *, timeout: float = 60.0,
            bench: dict[str, int] | None = None, wrapper: list[str] | None = None) -> RunResult:
        raise ToolchainMissing("xlate cannot run AscendC kernels on this machine", REMEDY)

    def worker_runtime(self) -> WorkerRuntime:
        raise ToolchainMissing("no AscendC runtime", REMEDY)
