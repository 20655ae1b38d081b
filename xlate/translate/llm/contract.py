"""The output contract of one kernel's port: the exact signature and launcher the harness calls, how it is
launched, and the static checks an answer must pass before anything compiles it.

The checks parse the candidate (tree-sitter, or Python's `ast` for Triton: parsing only, nothing is executed)
and screen it for constructs a kernel port has no business containing (file, process and import access): a
defence in depth, since backend workers run the code unsandboxed, with a timeout.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from xlate.errors import InputError
from xlate.model import Function, KernelUnit
from xlate.specs import KernelSpec

LANGUAGE = {"triton": "triton", "cuda": "cuda", "hip": "hip", "ascendc": "ascendc"}
FENCE_TAG = {"triton": "python", "cuda": "cuda", "hip": "cpp", "ascendc": "cpp"}
SUFFIX = {"triton": ".py", "cuda": ".cu", "hip": ".hip", "ascendc": ".cpp"}

PY_IMPORTS = {"triton", "torch", "math", "numpy", "functools", "typing", "__future__"}
PY_BANNED_NAMES = {"open", "exec", "eval", "compile", "__import__", "input", "breakpoint", "globals", "locals",
                   "vars", "setattr", "delattr", "memoryview"}
PY_BANNED_ATTRS = {"system", "popen", "Popen", "spawnv", "execv", "execve", "fork", "remove", "unlink", "rmdir",
                   "rmtree", "rename", "write_text", "write_bytes", "mkdir", "makedirs", "chmod", "chdir", "save",
                   "__subclasses__", "__globals__", "__builtins__", "__code__", "__dict__", "__loader__"}
C_BANNED_CALLS = re.compile(r"\b(system|popen|fopen|freopen|open|creat|remove|unlink|rename|execv\w*|execl\w*|fork|"
                            r"dlopen|mkdir|chmod)\s*\(")


@dataclass
class ContractParam:
    name: str
    describe: str  # role, type and range, for the prompt


@dataclass
class Contract:
    target: str
    kernel: str
    language: str  # the candidate's language for [verify]
    fence: str
    signature: str
    params: list[ContractParam] = field(default_factory=list)
    launch: str = ""
    rules: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)  # parameter names in order
    pointers: list[bool] = field(default_factory=list)  # parameter i is a pointer (C targets)


def _describe(spec: KernelSpec | None, name: str, is_pointer: bool, ctype: str) -> str:
    p = spec.param(name) if spec else None
    if p is None:
        return f"pointer to {ctype}" if is_pointer else ctype
    elem = p.ctype or "float32 (or the dtype under test)"
    rng = f", values {p.lo}..{p.hi}" if p.lo is not None and p.hi is not None else ""
    if p.is_buffer:
        dims = " x ".join(p.dims) or "?"
        return {"in": "input", "out": "output", "inout": "input and output"}[p.role] + f" buffer of {dims} {elem} elements{rng}"
    if p.role == "size":
        return f"size (integer){rng}"
    if p.role == "const":
        return f"always {p.const}"
    return f"scalar {p.ctype or 'float'}{rng}"


def _c_params(fn: Function | None, spec: KernelSpec | None, names: list[str]) -> list[tuple[str, str, bool]]:
    """(declaration, name, is_pointer) per parameter, as the source declares it (Triton: from the spec)."""
    if fn is not None:
        return [(f"{p.type} {p.name}", p.name, p.is_pointer) for p in fn.params]
    out = []
    for n in names:
        p = spec.param(n) if spec else None
        if p is not None and p.is_buffer:
            ctype = {"": "float", "float32": "float", "float16": "__half", "float64": "double", "int32": "int"}.get(p.ctype, p.ctype)
            out.append((f"{'const ' if p.role == 'in' else ''}{ctype}* {n}", n, True))
        else:
            ctype = (p.ctype if p and p.ctype else "int" if p and p.role == "size" else "float")
            out.append((f"{ctype} {n}", n, False))
    return out


def _template_header(fn: Function | None) -> str:
    if fn is None or not fn.template_params:
        return ""
    parts = [f"typename {t.name}" if t.kind == "type" else f"{t.type or 'int'} {t.name}" for t in fn.template_params]
    return f"template <{', '.join(parts)}>\n"


def contract_for(unit: KernelUnit, kernel: str, target: str, spec: KernelSpec | None) -> Contract:
    fn = unit.kernel(kernel)
    if unit.language == "triton":
        launcher = next(f for f in unit.py_functions if f.name == kernel)
        names = list(launcher.params)
    else:
        names = [p.name for p in fn.params] if fn else []
    c_params = _c_params(fn, spec, names)
    params = [ContractParam(n, _describe(spec, n, ptr, decl.rsplit(" ", 1)[0])) for decl, n, ptr in c_params]
    grid = ", ".join(spec.grid) if spec else "?"
    block = ", ".join(spec.block) if spec else "?"
    if target == "triton":
        sig = f"def {kernel}({', '.join(names)}):"
        launch = (f"The harness imports your module and calls `{kernel}({', '.join(names)})` with positional arguments "
                  "in exactly this order: every pointer parameter as a 1-D contiguous torch tensor (a view into a "
                  "larger, guarded allocation; never assume anything lies beyond its elements), sizes and scalars as "
                  "Python numbers. The launcher chooses the grid, launches the @triton.jit kernel(s), writes the "
                  "outputs in place and returns nothing.")
        rules = ["Define the launcher with exactly this name and these parameters, in this order.",
                 "Define at least one @triton.jit kernel; give helper names a leading underscore.",
                 "Import only triton, triton.language, torch, math or numpy; no file, process or network access."]
        return Contract(target, kernel, "triton", "python", sig, params, launch, rules, names, [])
    if target == "ascendc":
        decls = [f"GM_ADDR {n}" if ptr else decl for decl, n, ptr in c_params]
        sig = f'extern "C" __global__ __aicore__ void {kernel}({", ".join(decls)})'
        launch = (f"The host launches `{kernel}` through `<<<blockDim, nullptr, stream>>>` with one GM_ADDR per "
                  f"pointer parameter and the scalars by value, in this order; the source's grid was ({grid}) with "
                  f"blocks of ({block}) threads.")
        rules = ["Write a complete AscendC kernel file: #include \"kernel_operator.h\", the kernel class and the "
                 "entry point with exactly this signature.",
                 "No host code, no file or process access."]
        return Contract(target, kernel, "ascendc", "cpp", sig, params, launch, rules, names, [ptr for *_, ptr in c_params])
    decls = [decl for decl, _, _ in c_params]
    sig = f"{_template_header(fn)}__global__ void {kernel}({', '.join(decls)})"
    shmem = spec.shmem if spec and spec.shmem not in ("0", "") else None
    launch = (f"The harness compiles the file's device code and launches `{kernel}` itself with grid = ({grid}) and "
              f"block = ({block})" + (f", {shmem} bytes of dynamic shared memory" if shmem else "") +
              " (expressions in the kernel's parameters); host code in the file is not run.")
    rules = ["Keep the kernel's name, parameter names, order and types exactly as in this signature.",
             "Include the __device__ functions, macros and constants it needs; no main(), no file or process access."]
    if target == "hip":
        rules.append("Use #include <hip/hip_runtime.h>.")
    return Contract(target, kernel, LANGUAGE[target], FENCE_TAG[target], sig, params, launch, rules, names,
                    [ptr for *_, ptr in c_params])


# -- checks ---------------------------------------------------------------------------------------------------


def check(contract: Contract, code: str) -> tuple[str | None, list[str]]:
    """(failure class, problems): ("compile error", syntax errors) or ("contract", violations) or (None, [])."""
    if contract.target == "triton":
        return _check_python(contract, code)
    return _check_c(contract, code)


def _check_python(contract: Contract, code: str) -> tuple[str | None, list[str]]:
    try:
        tree = ast.parse(code, "<candidate>.py")
    except SyntaxError as exc:
        return "compile error", [f"<candidate>.py:{exc.lineno}:{exc.offset}: error: {exc.msg}"]
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for m in mods:
                if m.split(".")[0] not in PY_IMPORTS:
                    problems.append(f"line {node.lineno}: import of '{m}' is not allowed (only {', '.join(sorted(PY_IMPORTS - {'__future__'}))})")
        elif isinstance(node, ast.Name) and node.id in PY_BANNED_NAMES:
            problems.append(f"line {node.lineno}: '{node.id}' is not allowed in a kernel port")
        elif isinstance(node, ast.Attribute) and node.attr in PY_BANNED_ATTRS:
            problems.append(f"line {node.lineno}: '.{node.attr}' is not allowed in a kernel port")
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    launcher = funcs.get(contract.kernel)
    if launcher is None:
        problems.append(f"no module-level launcher `{contract.signature}`")
    else:
        args = launcher.args
        names = [a.arg for a in args.posonlyargs + args.args]
        required = len(names) - len(args.defaults)
        if names[: len(contract.expected)] != contract.expected or required > len(contract.expected) \
                or args.vararg or any(d is None for d in args.kw_defaults):
            problems.append(f"the launcher is `def {contract.kernel}({', '.join(names)})`; it must be `{contract.signature}`")
    jit = [n for n in tree.body if isinstance(n, ast.FunctionDef)
           and any(ast.unparse(d).split("(")[0].endswith("jit") for d in n.decorator_list)]
    if not jit:
        problems.append("no @triton.jit kernel in the module")
    return ("contract", problems) if problems else (None, [])


def _check_c(contract: Contract, code: str) -> tuple[str | None, list[str]]:
    from xlate.parse import parse_string

    path = "<candidate>" + SUFFIX[contract.target]
    try:
        unit = parse_string(code, path, contract.language)  # type: ignore[arg-type]
    except InputError as exc:
        return "compile error", exc.lines()[:20]
    problems: list[str] = []
    stripped = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", " ", code, flags=re.S)
    for m in C_BANNED_CALLS.finditer(stripped):
        problems.append(f"'{m.group(1)}(...)' is not allowed in a kernel port")
    if re.search(r"\bint\s+main\s*\(", stripped):
        problems.append("no main() in a kernel port")
    fn = unit.kernel(contract.kernel)
    if fn is None:
        names = ", ".join(k.name for k in unit.kernels) or "none"
        problems.append(f"no kernel `{contract.kernel}` (kernels defined: {names}); the signature must be `{contract.signature}`")
    else:
        got = [p.name for p in fn.params]
        ptrs = [p.is_pointer or p.type.strip() == "GM_ADDR" for p in fn.params]
        if got != contract.expected:
            problems.append(f"the kernel's parameters are ({', '.join(got)}); they must be ({', '.join(contract.expected)}) "
                            f"as in `{contract.signature}`")
        elif contract.pointers and ptrs != contract.pointers:
            bad = [n for n, a, b in zip(got, ptrs, contract.pointers) if a != b]
            problems.append(f"parameter(s) {', '.join(bad)} must be {'pointers' if contract.pointers[got.index(bad[0])] else 'values'} "
                            f"as in `{contract.signature}`")
    return ("contract", problems) if problems else (None, [])
