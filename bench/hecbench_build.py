"""Build HeCBench-style programs with the local hipcc, the same way for every tree.

A program's build recipe comes from its own Makefile: `make -n -B` in a scratch copy prints the commands, and each
compiler command is reduced to what matters to a HIP build (source, -I/-D/-U/-include/-isystem, -std, -O, -x,
-fopenmp, relocatable device code; link: -l/-L/-fopenmp). Every translation unit is then compiled with
`HIP_PLATFORM=amd hipcc --offload-arch=gfx90a -c` whatever compiler the Makefile names (nvcc, g++, hipcc), and
each link command of the Makefile is run with hipcc on the objects it names. Other flags (-arch=sm_XX, -Xcompiler
-Wall, --expt-*, -Werror...) are dropped: they do not decide whether the code is HIP. CUDA libraries on a CUDA
link line are replaced by their HIP names (bench/data/hip_link_libs.json) so that a translated tree is linked as
a user moving to ROCm would link it.

Used by bench/realworld_hip.py; nothing here knows a program by name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_EXTS = {".cu", ".hip", ".cpp", ".cc", ".cxx", ".c", ".C"}
COMPILERS = re.compile(r"(hipcc|nvcc|clang\+\+|clang|amdclang\+\+|g\+\+|gcc|c\+\+|cc|icpx|icx|mpicxx|mpicc|mpic\+\+)"
                       r"(-[0-9.]+)?$")
HIPCC = ["hipcc", "--offload-arch=gfx90a"]
BUILD_VERSION = 1  # bump when the recipe or the build changes: invalidates cached human-port builds


@dataclass
class Unit:
    source: str  # path as the Makefile names it, relative to cwd
    obj: str  # object name the Makefile gives it (link lines refer to it), relative to cwd
    flags: list[str]
    cwd: str = "."  # where the command runs, relative to the program folder (a sub-make's folder)

    def rel(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, path))


@dataclass
class Link:
    inputs: list[str]  # object names (or sources compiled in the same command), relative to cwd
    output: str
    flags: list[str]
    cwd: str = "."


@dataclass
class Recipe:
    units: list[Unit] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    rdc: bool = False
    error: str | None = None


@dataclass
class Step:
    what: str  # "compile SOURCE" | "link OUTPUT" | "missing SOURCE"
    ok: bool
    seconds: float
    error: str | None = None  # first compiler error line (file:line: error: ...)


@dataclass
class BuildResult:
    built: bool
    steps: list[Step]
    first_error: str | None
    seconds: float

    def to_dict(self) -> dict:
        return asdict(self)


# --- commands --------------------------------------------------------------------------------------------------

def run_cmd(argv: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None) -> tuple[int, str, float]:
    """Run argv in its own process group (hipcc forks clang: a timeout must kill them all). Returns (rc, output,
    seconds); rc 124 on timeout, 127 when the program is missing."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except FileNotFoundError as exc:
        return 127, str(exc), 0.0
    try:
        out, _ = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc = 124
        out += f"\nerror: timed out after {timeout:.0f} s".encode()
    return rc, out.decode("utf-8", errors="replace"), time.perf_counter() - t0


def hip_env() -> dict[str, str]:
    return {**os.environ, "HIP_PLATFORM": "amd"}


def hipcc_version() -> str:
    rc, out, _ = run_cmd(["hipcc", "--version"], Path.cwd(), 60, hip_env())
    m = re.search(r"HIP version: *(\S+)", out)
    return m.group(1) if m else out.strip().splitlines()[0] if out.strip() else f"unavailable (rc {rc})"


# --- copies that never touch the corpus -------------------------------------------------------------------------

def copy_tree(src: Path, dst: Path) -> None:
    """Copy file contents only (the corpus is read-only: its modes must not follow)."""
    shutil.copytree(src, dst, copy_function=shutil.copyfile, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".git"))
    for d, _, _ in os.walk(dst):
        os.chmod(d, 0o755)


def sibling_refs(makefile: Path, src_dir: Path) -> list[str]:
    """Folders of the corpus a Makefile reaches through ../NAME (headers or sources of another program)."""
    if not makefile.exists():
        return []
    text = makefile.read_text(errors="replace")
    names = sorted(set(re.findall(r"\.\./([A-Za-z0-9_.+-]+)", text)))
    return [n for n in names if (src_dir / n).is_dir()]


def tree_hash(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for root in paths:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root.parent)).encode())
                h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


# --- the recipe ---------------------------------------------------------------------------------------------------

def dry_run(program_dir: Path, timeout: float = 60) -> tuple[int, str]:
    """`make -n -B` in program_dir (a scratch copy): the commands the Makefile would run."""
    env = {**os.environ, "MAKEFLAGS": ""}
    rc, out, _ = run_cmd(["make", "-n", "-B"], program_dir, timeout, env)
    return rc, out


def _commands(text: str, root: str | None) -> list[tuple[str, list[str]]]:
    """(cwd relative to root, argv) per command; sub-makes announce their folders ("Entering directory")."""
    text = text.replace("\\\n", " ")
    cmds, stack = [], ["."]
    for line in text.splitlines():
        m = re.match(r"make(\[\d+\])?: (Entering|Leaving) directory ['`\"](.*)['\"]", line)
        if m:
            if m.group(2) == "Entering":
                stack.append(os.path.relpath(m.group(3), root) if root else ".")
            elif len(stack) > 1:
                stack.pop()
            continue
        for part in re.split(r"&&|;|\|\|", line):
            try:
                argv = shlex.split(part)
            except ValueError:
                continue
            if argv:
                cmds.append((stack[-1], argv))
    return cmds


def _load_lib_map() -> dict[str, str | None]:
    return json.loads((HERE / "data" / "hip_link_libs.json").read_text())["libraries"]


def _split_xcompiler(argv: list[str]) -> list[str]:
    """nvcc's -Xcompiler A,B and --compiler-options A,B: the host flags become plain flags."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-Xcompiler", "--compiler-options") and i + 1 < len(argv):
            out += [x for x in argv[i + 1].split(",") if x]
            i += 2
            continue
        m = re.match(r"(-Xcompiler|--compiler-options)=(.*)", a)
        if m:
            out += [x for x in m.group(2).split(",") if x]
        else:
            out.append(a)
        i += 1
    return out


# flags whose value may be the next word, and how to join them into one token
TWO_PART = {"-I": "", "-D": "", "-U": "", "-L": "", "-l": "", "-o": "", "-std": "=", "--std": "=",
            "-include": " ", "-isystem": " ", "-x": " "}


def parse_recipe(text: str, cuda_libs: bool = False, root: str | None = None) -> Recipe:
    """Reduce `make -n` output (run in root) to compile units and link commands."""
    lib_map = _load_lib_map() if cuda_libs else {}
    recipe = Recipe()
    for cwd, raw in _commands(text, root):
        if not COMPILERS.search(os.path.basename(raw[0])):
            continue
        nvcc = os.path.basename(raw[0]).startswith("nvcc")
        argv = _split_xcompiler(raw[1:])
        flags, link_flags, inputs, objs, out = [], [], [], [], None
        compile_only = False
        i = 0
        while i < len(argv):
            a = argv[i]
            nxt = argv[i + 1] if i + 1 < len(argv) else ""
            if a in TWO_PART and nxt:  # "-I dir" -> "-Idir", "-std c++17" -> "-std=c++17", "-x cu" stays two words
                a, i = a + TWO_PART[a] + nxt, i + 1
            i += 1
            if a in ("-c", "-dc", "--device-c"):
                compile_only = True
                if a != "-c":
                    recipe.rdc = True
            elif a.startswith("-o"):
                out = a[2:].strip() or None
            elif re.match(r"(-rdc|--relocatable-device-code)(=true)?$", a) or a == "-fgpu-rdc":
                recipe.rdc = True
            elif a.startswith(("-I", "-D", "-U", "-include ", "-isystem ", "-O")):
                flags.append(a)
            elif re.match(r"--?std[= ]", a):
                flags.append("-std=" + re.split(r"[= ]", a, maxsplit=1)[1])
            elif a.startswith("-x "):
                lang = a[3:]
                flags.append("-x hip" if lang in ("cu", "cuda", "hip") else a)
            elif a == "-fopenmp" or a.startswith("-fopenmp="):
                flags.append(a)
                link_flags.append(a)
            elif a.startswith("-L") or a == "-pthread":
                link_flags.append(a)
            elif a.startswith("-l"):
                name = a[2:].strip()
                if name in lib_map:
                    if lib_map[name]:
                        link_flags.append("-l" + lib_map[name])
                elif name:
                    link_flags.append("-l" + name)
            elif not a.startswith("-"):
                ext = os.path.splitext(a)[1]
                if ext in SOURCE_EXTS:
                    inputs.append(a)
                elif ext in (".o", ".a", ".so"):
                    objs.append(a)
        if compile_only:
            for s in inputs:
                obj = out if out and len(inputs) == 1 else os.path.splitext(os.path.basename(s))[0] + ".o"
                recipe.units.append(Unit(s, obj, _unit_flags(s, flags, nvcc), cwd))
        elif inputs or objs:
            # compile-and-link in one command: each source becomes a unit of its own
            names = []
            for s in inputs:
                obj = f"__direct_{len(recipe.units)}.o"
                recipe.units.append(Unit(s, obj, _unit_flags(s, flags, nvcc), cwd))
                names.append(obj)
            recipe.links.append(Link([*objs, *names], out or "a.out", _split_flags(link_flags), cwd))
    if not recipe.units:
        recipe.error = "no compile command found in `make -n` output"
    return recipe


def _unit_flags(source: str, flags: list[str], nvcc: bool) -> list[str]:
    """A C file: nvcc builds it with the C++ -std the Makefile gives, so its HIP counterpart is compiled as HIP
    (what HeCBench's own HIP ports do: -x hip); under a C compiler it stays C and a C++ -std (which gcc only
    warned about) is dropped, since clang refuses it."""
    if not source.endswith(".c") or any(f.startswith("-x ") for f in flags):
        return _split_flags(flags)
    if nvcc:
        return _split_flags(["-x hip", *flags])
    return _split_flags([f for f in flags if not re.match(r"-std=(c|gnu)\+\+", f)])


def _split_flags(flags: list[str]) -> list[str]:
    out: list[str] = []
    for f in flags:
        out += f.split(" ", 1) if f.startswith(("-include ", "-isystem ", "-x ")) else [f]
    return out


def recipe_for(program_dir: Path, cuda_libs: bool) -> Recipe:
    if not (program_dir / "Makefile").exists() and not (program_dir / "makefile").exists():
        return Recipe(error="no Makefile")
    rc, text = dry_run(program_dir)
    recipe = parse_recipe(text, cuda_libs, str(program_dir.resolve()))
    if rc != 0 and not recipe.units:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        recipe.error = "make -n failed: " + (lines[-1] if lines else f"exit {rc}")
    return recipe


# --- errors -------------------------------------------------------------------------------------------------------

ERROR_LINE = re.compile(r"(error:|undefined reference|fatal error|No such file)")


def first_error(output: str) -> str | None:
    for line in output.splitlines():
        if ERROR_LINE.search(line) and "errors generated" not in line:
            return line.strip()[:400]
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return lines[-1].strip()[:400] if lines else None


# --- the build ----------------------------------------------------------------------------------------------------

def build(tree: Path, recipe: Recipe, build_dir: Path, source_map: dict[str, str] | None = None,
          timeout: float = 300) -> BuildResult:
    """Compile every unit of recipe in tree (cwd: tree, so the Makefile's relative -I paths hold) and run each
    link. source_map renames the Makefile's sources to the tool's output names (None: same names)."""
    t0 = time.perf_counter()
    build_dir.mkdir(parents=True, exist_ok=True)
    env = hip_env()
    rdc = ["-fgpu-rdc"] if recipe.rdc else []
    steps: list[Step] = []
    objects: dict[str, Path] = {}
    if recipe.error:
        return BuildResult(False, [], f"recipe: {recipe.error}", 0.0)
    for n, u in enumerate(recipe.units):
        rel = u.rel(u.source)
        src = (source_map or {}).get(rel, rel)
        if not (tree / src).is_file():
            steps.append(Step(f"missing {rel}", False, 0.0, f"{rel}: not in the translated tree"))
            continue
        obj = build_dir / f"{n:03d}_{os.path.basename(u.obj)}"
        here = tree / u.cwd
        rc, out, sec = run_cmd([*HIPCC, *rdc, "-w", *u.flags, "-c", os.path.relpath(tree / src, here), "-o", str(obj)],
                               here, timeout, env)
        steps.append(Step(f"compile {src}", rc == 0, round(sec, 2), None if rc == 0 else first_error(out)))
        if rc == 0:
            objects[u.rel(u.obj)] = obj
    if all(s.ok for s in steps):
        for n, link in enumerate(recipe.links):
            ins = []
            for i in link.inputs:
                key = os.path.normpath(os.path.join(link.cwd, i))
                if key in objects:
                    ins.append(str(objects[key]))
                elif (tree / key).is_file():
                    ins.append(str(tree / key))
                else:
                    steps.append(Step(f"link {link.output}", False, 0.0, f"link input {i} was not built"))
                    break
            else:
                exe = build_dir / f"link{n}_{os.path.basename(link.output)}"
                rc, out, sec = run_cmd([*HIPCC, *rdc, *ins, "-o", str(exe), *link.flags], tree / link.cwd, timeout, env)
                steps.append(Step(f"link {link.output}", rc == 0, round(sec, 2), None if rc == 0 else first_error(out)))
    failed = [s for s in steps if not s.ok]
    return BuildResult(not failed and bool(steps), steps, failed[0].error if failed else None,
                       round(time.perf_counter() - t0, 2))
