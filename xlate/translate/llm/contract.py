"""The output contract of one kernel's port: the exact signature and launcher the harness calls, how it is
launched, and the static checks an answer must pass before anything compiles it.

The checks parse the candidate (tree-sitter, or Python's `ast` for Triton: parsing only, nothing is executed)
and hold it to an allow-list before anything compiles or runs it: pycheck.py for Triton modules (imports,
names, attributes, calls), ccheck.py for C/C++ (includes, directives, pragmas, asm, preprocessor tricks).
Violations go back to the model as contract errors; the candidate is never built. This is the first line; the
OS sandbox (backends/sandbox.py) that every build and run of model output goes through is the second.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from xlate.errors import InputError
from xlate.model import Function, KernelUnit
from xlate.specs import KernelSpec
from xlate.targets import candidate_file
from xlate.targets import target as target_of
from xlate.translate.llm.ccheck import check_c, include_names
from xlate.translate.llm.pycheck import check_module

C_BANNED_CALLS = re.compile(r"\b(system|popen|fopen|freopen|open|creat|remove|unlink|rename|execv\w*|execl\w*|fork|"
                            r"dlopen|mkdir|chmod)\s*\(")


C_RULE = ("#include only the toolchain's headers and those the source includes; no #include_next, #embed, #line, "
          "__has_include, _Pragma, __FILE__, ## pasting, raw strings or assembler directives in asm.")


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
    includes: set[tuple[str, str]] = field(default_factory=set)  # (delimiter, name) the source includes


def _describe(spec: KernelSpec | None, name: str, is_pointer: bool, ctype: str) -> str:
    p = spec.param(name) if spec else None
    if p is None:
        return f"pointer to {ctype}" if is_pointer else ctype
    elem = p.ctype or "float32 (or the dtype under test)"
    rng = f", values {p.lo}..{p.hi}" if p.lo is not None and p.hi is not None else ""
    if p.is_buffer:
        dims = " x ".join(p.dims) or "?"
        return {"in": "input", "out": "output", "inout": "input and output"}[p.role] + f" buffer of {dims} {elem} elements{rng}"
    if p.role == "null":
        return "a pointer that is always nullptr (the kernel's null tests are false): keep the parameter"
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
        if p is not None and (p.is_buffer or p.is_null):
            ctype = {"": "float", "float32": "float", "float16": "__half", "float64": "double", "int32": "int"}.get(p.ctype, p.ctype)
            out.append((f"{'const ' if p.role in ('in', 'null') else ''}{ctype}* {n}", n, True))
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
                 "Import only triton, triton.language, torch and math. The module holds only imports, constants, "
                 "@triton.jit kernels and plain functions that compute the grid, allocate scratch buffers "
                 "(torch.empty/zeros) and launch the kernels: no other module-level code, no getattr/setattr, "
                 "no dunder names, no file, process or network access."]
        return Contract(target, kernel, target_of(target).language, target_of(target).fence, sig, params, launch, rules, names, [])
    if target == "ascendc":
        decls = [f"GM_ADDR {n}" if ptr else decl for decl, n, ptr in c_params]
        sig = f'extern "C" __global__ __aicore__ void {kernel}({", ".join(decls)})'
        launch = (f"The host launches `{kernel}` through `<<<blockDim, nullptr, stream>>>` with one GM_ADDR per "
                  f"pointer parameter and the scalars by value, in this order; the source's grid was ({grid}) with "
                  f"blocks of ({block}) threads.")
        rules = ["Write a complete AscendC kernel file: #include \"kernel_operator.h\", the kernel class and the "
                 "entry point with exactly this signature.",
                 "No host code, no file or process access.", C_RULE]
        return Contract(target, kernel, target_of(target).language, target_of(target).fence, sig, params, launch, rules, names, [ptr for *_, ptr in c_params],
                        include_names(unit.text))
    decls = [decl for decl, _, _ in c_params]
    sig = f"{_template_header(fn)}__global__ void {kernel}({', '.join(decls)})"
    shmem = spec.shmem if spec and spec.shmem not in ("0", "") else None
    launch = (f"The harness compiles the file's device code and launches `{kernel}` itself with grid = ({grid}) and "
              f"block = ({block})" + (f", {shmem} bytes of dynamic shared memory" if shmem else "") +
              " (expressions in the kernel's parameters); host code in the file is not run.")
    rules = ["Keep the kernel's name, parameter names, order and types exactly as in this signature.",
             "Include the __device__ functions, macros and constants it needs; no main(), no file or process access.",
             C_RULE]
    if target == "hip":
        rules.append("Use #include <hip/hip_runtime.h>.")
    return Contract(target, kernel, target_of(target).language, target_of(target).fence, sig, params, launch, rules, names,
                    [ptr for *_, ptr in c_params], include_names(unit.text))


# -- checks ---------------------------------------------------------------------------------------------------


def check(contract: Contract, code: str) -> tuple[str | None, list[str]]:
    """(failure class, problems): ("compile error", syntax errors) or ("contract", violations) or (None, [])."""
    if contract.target == "triton":
        return _check_python(contract, code)
    return _check_c(contract, code)


def _check_python(contract: Contract, code: str) -> tuple[str | None, list[str]]:
    try:
        ast.parse(code, "<candidate>.py")
    except SyntaxError as exc:
        return "compile error", [f"<candidate>.py:{exc.lineno}:{exc.offset}: error: {exc.msg}"]
    except ValueError as exc:  # e.g. a NUL byte
        return "contract", [f"the module cannot be parsed: {exc}"]
    parsed, problems = check_module(code)
    tree = parsed if parsed is not None else ast.parse(code)
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

    path = candidate_file(contract.target)
    try:
        unit = parse_string(code, path, contract.language)  # type: ignore[arg-type]
    except InputError as exc:
        return "compile error", exc.lines()[:20]
    problems: list[str] = check_c(code, contract.includes)
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


# -- the written port -----------------------------------------------------------------------------------------


def allowlist_problems(code: str, target: str, includes: set[tuple[str, str]] | None = None) -> list[str]:
    """The allow-list alone (no signature checks): what a file holding model output must pass."""
    if target == "triton":
        _, problems = check_module(code)
        return problems
    return check_c(code, includes or set())


def check_written(text: str, target: str, source: str | None, engine: str,
                  accepted: dict[str, str] | None = None) -> list[str]:
    """Checked again just before a port holding model output is written (xlate.port): every accepted model
    answer (`accepted`, kernel -> code, from the translation's meta) and, when the whole file is the model's
    (engine `llm`), the file itself, against the same allow-list the repair loop used. A rule-only port is
    xlate's own output: nothing to check. Returns the violations (empty: write it)."""
    if "llm" not in engine:
        return []
    includes: set[tuple[str, str]] = set()
    if source and target != "triton":
        try:
            with open(source, encoding="utf-8", errors="replace") as fh:
                includes = include_names(fh.read())
        except OSError:
            pass
    problems = [f"{k}: {p}" for k, code in sorted((accepted or {}).items())
                for p in allowlist_problems(code, target, includes)]
    if engine == "llm" or not accepted:  # a merged file whose model parts are not on record: check it whole
        problems += allowlist_problems(text, target, includes)
    return problems


MODEL_HEADER = re.compile(r"Generated by xlate \S+ from .* \((?:[\w]+\+)?llm translator\)")


def is_model_output(path: str) -> bool:
    """A file xlate wrote from model output (its header names the LLM translator)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = "".join(fh.readline() for _ in range(5))
    except OSError:
        return False
    return MODEL_HEADER.search(head) is not None
