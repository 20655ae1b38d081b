"""The OS sandbox for untrusted builds and runs (model output, and the implementations `xlate fuzz` is given).

Mechanism: bubblewrap (`bwrap`, Debian's `bubblewrap` package): new user, mount, PID, network, IPC, UTS and
cgroup namespaces; a filesystem view holding only the system's /usr, a few loader files of /etc, the Python
environment and the toolchains (all read-only), a private memory-backed /tmp, and the device nodes a GPU run
needs; no network (an empty network namespace); no capabilities; a cleared environment (credentials never
pass); resource limits through util-linux `prlimit`. What the view holds is data: backends/sandbox.yaml.

Whether something is sandboxed is decided by the *policy* in force (a context variable): code outside
`untrusted(...)` is xlate's own business and runs as before. Inside it, every compile of untrusted text and
every worker runs in the sandbox when one works here; when none does, model output (`require=True`) is not
built or run at all (SandboxUnavailable, a ToolchainMissing: the verdict is `unverified`) unless the user said
`--trust-model-output` (XLATE_TRUST_MODEL_OUTPUT=1); other untrusted input (`require=False`) runs unsandboxed.
The policy records which of these happened, so verdicts and reports can say so.

XLATE_SANDBOX=none makes xlate behave as if no sandbox existed here (to debug a sandbox problem); model output
then still needs --trust-model-output.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import glob
import os
import re
import shutil
import site
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from xlate.backends.cudakit import cuda_include_dirs

from xlate.errors import ToolchainMissing
from xlate.resources import package_file

INBOX = "/xlate-in"  # where a sandboxed worker finds the artifacts it is asked to load (read-only)
SANDBOX_UID = 65534  # nobody, inside the user namespace
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
TRUST_ENV = "XLATE_TRUST_MODEL_OUTPUT"
REMEDY = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are allowed; "
          "or, knowing that model-written code then runs with your privileges, pass --trust-model-output")


class SandboxUnavailable(ToolchainMissing):
    """Untrusted code would have to run unsandboxed and the user has not allowed it."""


@functools.cache
def config() -> dict[str, Any]:
    with open(package_file("xlate.backends", "sandbox.yaml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


# -- detection -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mechanism:
    tool: str
    version: str
    flags: tuple[str, ...]  # the namespace flags that work here
    variant: str  # userns+disable-userns | userns | no-userns


@dataclass
class Detection:
    mechanism: Mechanism | None
    reason: str  # what works, or why nothing does
    tried: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        m = self.mechanism
        return {"available": m is not None, "tool": m.tool if m else None, "version": m.version if m else None,
                "variant": m.variant if m else None, "reason": self.reason, "tried": self.tried,
                "limits": "prlimit" if prlimit_path() else "none (prlimit missing)"}


NO_USERNS = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")
USERNS = ("--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID))
VARIANTS = (("userns+disable-userns", (*NO_USERNS, *USERNS, "--disable-userns")),
            ("userns", (*NO_USERNS, *USERNS)),
            ("no-userns", NO_USERNS))


@functools.cache
def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def prlimit_path() -> str | None:
    path = shutil.which("prlimit")
    return path if path and path.startswith("/usr/") else None  # it runs inside the view: /usr only


def _version(tool: str) -> str:
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.strip().split()[-1] if out.strip() else "unknown"


@functools.cache
def detect() -> Detection:
    """The first bubblewrap variant that starts this Python inside the full view, or why none does."""
    if os.environ.get("XLATE_SANDBOX", "").lower() in ("none", "off", "0"):
        return Detection(None, "disabled by XLATE_SANDBOX=none")
    tool = bwrap_path()
    if tool is None:
        return Detection(None, "bubblewrap (bwrap) is not installed")
    version = _version(tool)
    tried: list[dict[str, str]] = []
    for variant, flags in VARIANTS:
        mech = Mechanism(tool, version, flags, variant)
        cmd = build([sys.executable, "-P", "-c", "import xlate.backends.worker"], mech=mech)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append({"variant": variant, "error": str(exc)[:300]})
            continue
        if proc.returncode == 0:
            why = {"userns+disable-userns": "user namespace as uid nobody, nested user namespaces disabled",
                   "userns": "user namespace as uid nobody (this bwrap cannot disable nested user namespaces)",
                   "no-userns": "no user namespace available: the sandboxed process keeps this uid, all "
                                "capabilities dropped"}[variant]
            return Detection(mech, f"bubblewrap {version}: {why}", tried)
        tried.append({"variant": variant, "error": (proc.stderr.strip() or f"exit {proc.returncode}")[-300:]})
    last = tried[-1]["error"] if tried else "?"
    hint = ""
    if any(w in last.lower() for w in ("permission", "uid map", "namespace", "operation not permitted")):
        hint = (" (user namespaces look disabled: kernel.unprivileged_userns_clone=0, "
                "user.max_user_namespaces=0, an AppArmor restriction, or a container without CAP_SYS_ADMIN)")
    return Detection(None, f"bubblewrap {version} is installed but cannot start a sandbox here: {last}{hint}", tried)


def available() -> bool:
    return detect().mechanism is not None


# -- policy --------------------------------------------------------------------------------------------------


@dataclass
class Policy:
    require: bool  # model output: never run unsandboxed unless the user trusts it explicitly
    what: str  # "model output", "fuzz input": for messages
    used: set[str] = field(default_factory=set)  # sandboxed, trusted-unsandboxed, unsandboxed, refused

    def label(self) -> str | None:
        """One word for reports: what actually happened to the code run under this policy."""
        for word in ("refused", "trusted-unsandboxed", "unsandboxed", "sandboxed"):
            if word in self.used:
                return word
        return None

    def caveat(self) -> str | None:
        label = self.label()
        if label is None:
            return None
        if label == "sandboxed":
            m = detect().mechanism
            return (f"isolation: sandboxed ({m.tool.rsplit('/', 1)[-1]} {m.version if m else ''}: no network, private "
                    "/tmp, read-only toolchain and Python, no home or source tree, rlimits)")
        if label == "trusted-unsandboxed":
            return f"isolation: trusted-unsandboxed: {self.what} ran with your privileges (--trust-model-output; {detect().reason})"
        if label == "unsandboxed":
            return f"isolation: unsandboxed ({detect().reason})"
        return f"isolation: {self.what} was not built or run: no sandbox here ({detect().reason})"


_POLICY: contextvars.ContextVar[Policy | None] = contextvars.ContextVar("xlate_sandbox_policy", default=None)


@contextlib.contextmanager
def untrusted(*, require: bool = True, what: str = "model output") -> Iterator[Policy]:
    """Everything built or run inside is untrusted: sandboxed, or (see module doc) refused or labelled."""
    outer = _POLICY.get()
    inherit = outer is not None and outer.require and not require  # a model-output scope stays one
    policy = Policy(True, outer.what) if inherit and outer else Policy(require, what)
    token = _POLICY.set(policy)
    try:
        yield policy
    finally:
        _POLICY.reset(token)
        if outer is not None:
            outer.used |= policy.used


def current() -> Policy | None:
    return _POLICY.get()


def trusted_by_user() -> bool:
    return os.environ.get(TRUST_ENV) == "1"


def set_trust_model_output(on: bool) -> None:
    """The CLI flag. An environment variable, so that migrate's worker processes inherit it."""
    if on:
        os.environ[TRUST_ENV] = "1"


def decide() -> bool:
    """For one untrusted build or run: True to sandbox it, False to run it directly (no policy, or allowed
    unsandboxed). Raises SandboxUnavailable when it must not run at all."""
    policy = current()
    if policy is None:
        return False
    det = detect()
    if det.mechanism is not None:
        policy.used.add("sandboxed")
        return True
    if policy.require and not trusted_by_user():
        policy.used.add("refused")
        raise SandboxUnavailable(f"{policy.what} is only built and run inside a sandbox, and none works here "
                                 f"({det.reason})", REMEDY)
    policy.used.add("trusted-unsandboxed" if policy.require else "unsandboxed")
    return False


def isolate(fn: Any, *args: Any, require: bool = True, what: str = "model output", **kwargs: Any) -> Any:
    """Call fn under `untrusted(...)`; a returned Verdict gets the isolation caveat (sandboxed or not)."""
    with untrusted(require=require, what=what) as policy:
        result = fn(*args, **kwargs)
    caveat = policy.caveat()
    caveats = getattr(result, "caveats", None)
    if caveat and isinstance(caveats, list) and caveat not in caveats:
        caveats.append(caveat)
    return result


# -- the view ------------------------------------------------------------------------------------------------


def _package_dirs() -> list[str]:
    """xlate's own code and data (an editable install maps them into the source checkout)."""
    import importlib

    out: list[str] = []
    for name in ("xlate", "xlate.backends", "xlate.grammars", "xlate.templates"):
        try:
            init = importlib.import_module(name).__file__
        except ImportError:
            continue
        if init:  # the package's own folder (xlate.__path__ may also hold a checkout's root: never bound)
            out.append(str(Path(init).parent))
    return out


@functools.cache
def python_paths() -> tuple[str, ...]:
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(os.path.realpath(sys.executable)).parent.parent), *site.getsitepackages()]
    user_site = site.getusersitepackages()
    if isinstance(user_site, str) and user_site in sys.path:
        paths.append(user_site)
    # the whole PYTHONPATH entry holding xlate (a wheel unpacked with pip --target): its dist-info (the backend
    # entry points) and its dependencies live beside the package folders
    return tuple(paths + _package_dirs() + pythonpath_entries())


def pythonpath_entries() -> list[str]:
    """The PYTHONPATH entries that hold xlate's package folders; other entries are neither bound nor passed."""
    packages = _package_dirs()
    return [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and any(_covered(d, [os.path.abspath(p)]) for d in packages)]


@functools.cache
def toolchain_paths() -> tuple[str, ...]:
    cfg = config()
    paths = [os.environ[v] for v in cfg["toolchain_env"] if os.environ.get(v)]
    paths += list(cfg["toolchain_dirs"])
    paths += list(cuda_include_dirs())
    return tuple(paths)


def gpu_nodes() -> list[str]:
    nodes: list[str] = []
    for pattern in config()["gpu_devices"]:
        nodes.extend(sorted(glob.glob(pattern)))
    return nodes


def _covered(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _ro_binds(extra: list[str]) -> tuple[list[str], list[str]]:
    """--ro-bind arguments for the system trees, /etc entries, Python and toolchains, deduplicated; those under
    /tmp apart (a `pip --target /tmp/site` install): they go after the private /tmp, which would hide them."""
    cfg = config()
    args: list[str] = []
    late: list[str] = []
    bound: list[str] = []
    for p in cfg["system_ro"]:
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            args += ["--ro-bind", p, p]
            bound.append(p)
    for name in cfg["etc_ro"]:
        p = f"/etc/{name}"
        if os.path.exists(p):
            args += ["--ro-bind", p, p]
    candidates = [os.path.realpath(p) for p in (*python_paths(), *toolchain_paths(), *extra)]
    for p in sorted(set(candidates), key=len):
        if (os.path.isdir(p) or os.path.isfile(p)) and not _covered(p, bound):
            (late if _covered(p, ["/tmp"]) else args).extend(["--ro-bind", p, p])
            bound.append(p)
    return args, late


def sandbox_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment inside: an allow-list of the caller's variables minus anything credential-like."""
    cfg = config()
    exact = {p for p in cfg["env_pass"] if not p.endswith("*")}
    prefixes = tuple(p[:-1] for p in cfg["env_pass"] if p.endswith("*"))
    env = {k: v for k, v in os.environ.items()
           if (k in exact or k.startswith(prefixes)) and not SECRET_NAME.search(k) and k != TRUST_ENV}
    bins = [str(Path(sys.executable).parent)]
    bins += [f"{p}/bin" for p in toolchain_paths() if os.path.isdir(f"{p}/bin")]
    env.update({"PATH": ":".join([*bins, "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]),
                "HOME": "/tmp", "TMPDIR": "/tmp", "USER": "xlate", "LOGNAME": "xlate", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONUNBUFFERED": "1", "XLATE_IN_SANDBOX": "1", "TRITON_CACHE_DIR": "/tmp/triton"})
    env.setdefault("LANG", "C.UTF-8")
    # xlate installed through PYTHONPATH: the bound entries that hold it, so `import xlate` works inside
    entries = pythonpath_entries()
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    for k, v in (extra or {}).items():
        if not SECRET_NAME.search(k):
            env[k] = v
    return env


def _limits(gpu: bool, cpu_seconds: int | None) -> list[str]:
    tool = prlimit_path()
    if tool is None:
        return []
    lim = config()["limits"]
    args = [tool, f"--core={lim['core']}", f"--fsize={lim['file_size_mb'] << 20}", f"--nofile={lim['open_files']}"]
    if not gpu:
        args.append(f"--as={lim['address_space_mb'] << 20}")
    if cpu_seconds:
        args.append(f"--cpu={cpu_seconds}")
    return [*args, "--"]


def build(argv: list[str], *, mech: Mechanism | None = None, ro: list[tuple[str, str]] | None = None,
          rw: list[tuple[str, str]] | None = None, env: dict[str, str] | None = None, cwd: str = "/tmp",
          cpu_seconds: int | None = None, extra_ro: list[str] | None = None) -> list[str]:
    """The bwrap command line that runs argv in the sandbox. `ro`/`rw` bind (host, inside) pairs after the
    private /tmp exists, so they may lie inside it; `extra_ro` adds host paths at their own place."""
    mech = mech or detect().mechanism
    if mech is None:
        raise SandboxUnavailable("no sandbox mechanism works here", REMEDY)
    cfg = config()
    nodes = gpu_nodes()
    binds, under_tmp = _ro_binds(list(extra_ro or []))
    args = [mech.tool, *mech.flags, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--hostname", "xlate-sandbox", *binds, "--dev", "/dev", "--proc", "/proc"]
    for node in nodes:
        args += ["--dev-bind", node, node]
    if nodes:
        for p in cfg["gpu_ro"]:
            if os.path.exists(p):
                args += ["--ro-bind", p, p]
    args += ["--size", str(cfg["tmpfs_mb"] << 20), "--tmpfs", "/tmp", *under_tmp]
    for host, inside in ro or []:
        args += ["--ro-bind", host, inside]
    for host, inside in rw or []:
        args += ["--bind", host, inside]
    args += ["--chdir", cwd, "--clearenv"]
    for k, v in sorted((env if env is not None else sandbox_env()).items()):
        args += ["--setenv", k, v]
    return [*args, "--", *_limits(bool(nodes), cpu_seconds), *argv]


def run_tool(argv: list[str], *, workdir: str, extra_env: dict[str, str] | None = None, timeout: float = 600,
             extra_ro: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run a compiler on untrusted source: inside the sandbox when the policy asks (`workdir`, holding the
    source and receiving the output, bound read-write at its own path), else directly as before."""
    if not decide():
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(extra_env or {})}, stdin=subprocess.DEVNULL)
    tool_dir = os.path.dirname(os.path.realpath(argv[0]))
    cmd = build(argv, rw=[(workdir, workdir)], env=sandbox_env(extra_env), cwd=workdir,
                cpu_seconds=config()["limits"]["tool_cpu_seconds"], extra_ro=[tool_dir, *(extra_ro or [])])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


if __name__ == "__main__":  # `python -m xlate.backends.sandbox`: what works here, as JSON
    import json

    print(json.dumps(detect().to_dict(), indent=2))
