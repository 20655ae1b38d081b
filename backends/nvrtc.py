"""NVRTC through NVIDIA's `cuda-bindings` (works without a GPU), with `nvcc` as a compile-only fallback."""

from __future__ import annotations

import functools
import re
import time
from dataclasses import dataclass, field

from xlate.backends.cudakit import cuda_include_dirs

from xlate.model import KernelUnit
from xlate.parse.source import to_bytes
from xlate.resources import package_file

INCLUDE_DIR = package_file("xlate.backends", "include")  # xlate's headers for device compilers


@dataclass
class NvrtcOutput:
    ok: bool
    log: str
    cubin: bytes = b""
    lowered: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    tool: str = "nvrtc"


def _nvrtc():
    try:
        from cuda.bindings import nvrtc

        nvrtc.nvrtcVersion()
        return nvrtc
    except Exception:
        return None


@functools.cache
def nvrtc_version() -> str | None:
    mod = _nvrtc()
    if mod is None:
        return None
    _, major, minor = mod.nvrtcVersion()
    return f"{major}.{minor}"


def system_include_dirs() -> list[str]:
    """Where NVRTC finds `<...>` headers: xlate's shims of the C/C++ headers nvcc would give, then CUDA's."""
    return [str(INCLUDE_DIR / "nvrtc"), str(INCLUDE_DIR), *cuda_include_dirs()]


def include_options(extra_dirs: list[str] | None = None) -> list[str]:
    dirs = [str(INCLUDE_DIR / "nvrtc"), str(INCLUDE_DIR), *(extra_dirs or []), *cuda_include_dirs()]
    # nvcc's implicit environment (M_PI, INFINITY, FLT_MAX, int32_t, std::max...), which NVRTC lacks
    return [f"-I{d}" for d in dirs] + ["--pre-include=xlate_nvcc_env.h"]


# Names that nvcc's implicit environment declares (cuda_runtime.h pulls in the host's <type_traits>, <utility>
# ...; Thrust's tuple and functors are device code too), but that NVRTC's does not. The header that declares them
# is pre-included only where the text names them: libcu++'s <type_traits> or <tuple> costs seconds per compile.
# xlate's own shims (backends/include/nvrtc/) map the std:: names onto libcu++.
_TRAITS = (r"is_\w+|enable_if(?:_t)?|conditional(?:_t)?|integral_constant|true_type|false_type|bool_constant|"
           r"remove_\w+|add_\w+|decay(?:_t)?|common_type(?:_t)?|make_signed(?:_t)?|make_unsigned(?:_t)?|"
           r"underlying_type(?:_t)?|void_t")
IMPLICIT_HEADERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\bstd::(?:{_TRAITS})\b"), "type_traits"),
    (re.compile(r"\bstd::(?:pair|make_pair|move|forward|declval|index_sequence|make_index_sequence|"
                r"integer_sequence|make_integer_sequence)\b"), "utility"),
    (re.compile(r"\bstd::(?:tuple|make_tuple|tie|get)\b"), "tuple"),
    (re.compile(r"\bstd::array\b"), "array"),
    (re.compile(r"\bthrust::(?:tuple|make_tuple|tie|get|tuple_element|tuple_size)\b"), "thrust/tuple.h"),
    (re.compile(r"\bthrust::(?:pair|make_pair)\b"), "thrust/pair.h"),
    (re.compile(r"\bthrust::(?:plus|minus|multiplies|divides|modulus|negate|maximum|minimum|equal_to|"
                r"not_equal_to|greater|less|greater_equal|less_equal|logical_and|logical_or|logical_not|"
                r"bit_and|bit_or|bit_xor|identity|unary_function|binary_function)\b"), "thrust/functional.h"),
]


# `{.r = 0, .g = 0}`: nvcc takes C++20's designated initializers in C++17 mode (a GNU extension); NVRTC only
# in C++20, which such a file then gets
DESIGNATED = re.compile(r"[{,]\s*\.[A-Za-z_]\w*\s*=(?!=)")


def language_standard(source: str) -> str:
    return "-std=c++20" if DESIGNATED.search(source) else "-std=c++17"


def implicit_includes(source: str) -> list[str]:
    """--pre-include options for the headers of IMPLICIT_HEADERS whose names `source` uses."""
    return [f"--pre-include={header}" for rx, header in IMPLICIT_HEADERS if rx.search(source)]


_HIDDEN = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|^[ \t]*#(?:[^\n]|\\\n)*',
                     re.S | re.M)
_SCOPE = re.compile(rb"\b(?:inline\s+)?namespace\s+([A-Za-z_][\w:]*)?\s*\{|[{}]")


def enclosing_namespaces(text: bytes, pos: int) -> list[str]:
    """The named namespaces open at byte `pos` of `text`, outermost first (comments, literals and preprocessor
    lines skipped; an anonymous namespace needs no qualifier)."""
    code = _HIDDEN.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), text[:pos])
    stack: list[str | None] = []
    for m in _SCOPE.finditer(code):
        if m.group(0) == b"}":
            if stack:
                stack.pop()
        else:
            stack.append(None if m.group(0) == b"{" else (m.group(1) or b"").decode())
    return [s for s in stack if s]


def _other_arity(compiled: str | None, kernel: str, arity: int) -> bool:
    """Does `compiled` declare a `__global__` function named `kernel` with another number of parameters?"""
    for m in re.finditer(rf"__global__[^;{{}}()]*\b{re.escape(kernel)}\s*\(", compiled or ""):
        depth, commas, empty = 1, 0, True
        params = compiled[m.end():m.end() + 4000]
        if re.match(r"\s*void\s*\)", params):  # `k(void)`: none
            params = ")"
        for c in params:
            if c in "(<[{":
                depth += 1
            elif c in ")>]}":
                depth -= 1
                if depth == 0:
                    break
            elif c == "," and depth == 1:
                commas += 1
            if not c.isspace() and depth >= 1 and c != ")":
                empty = False
        if (0 if empty else commas + 1) != arity:
            return True
    return False


def name_expression(unit: KernelUnit, source: str, kernel: str, template_args: list[str],
                    compiled: str | None = None) -> str:
    """What NVRTC is asked to name (and to instantiate): the kernel qualified by its namespaces (`ns::k`), with
    its template arguments; a kernel that shares its name with other functions (overloads for __half and
    __nv_bfloat16) is picked by its parameter types, those of the kernel the model sees under that name."""
    fn = unit.kernel(kernel)
    targs = f"<{', '.join(template_args)}>" if template_args else ""
    if fn is None or fn.span is None:
        return kernel + targs
    name = "::".join([*enclosing_namespaces(to_bytes(source), fn.span.start_byte), kernel]) + targs
    # `compiled`: the text NVRTC gets; a header's stale prototype of the kernel with other parameters
    # (`__global__ void k(int*, int);` beside the definition `k(int*, float*, int)`) overloads it there
    if sum(f.name == kernel for f in unit.functions) > 1 or _other_arity(compiled, kernel, len(fn.params)):
        given = dict(zip((t.name for t in fn.template_params), template_args))
        types = [re.sub(r"\b[A-Za-z_]\w*\b", lambda m: given.get(m.group(0), m.group(0)), p.type) for p in fn.params]
        name = f"static_cast<void(*)({', '.join(types)})>({name})"
    return name


def global_expressions(source: str, names: list[str]) -> dict[str, str]:
    """What NVRTC is asked to name for the module variables the gate fills whose symbol is not their name
    (`&ns::d_cost`): a namespaced or `static` one, its address qualified by its namespaces. A variable of the
    global namespace with external linkage is its own symbol and is not asked for: NVRTC refuses the address of
    a `__managed__` one as a name expression ("expression must have a constant value")."""
    code = to_bytes(source)
    hidden = _HIDDEN.sub(lambda m: re.sub(rb"[^\n]", b" ", m.group(0)), code)
    out: dict[str, str] = {}
    for name in names:
        m = re.search(rb"__(?:device|constant|managed)__[^;{}()]*?\b" + re.escape(name.encode()) + rb"\b", hidden)
        spaces = enclosing_namespaces(code, m.start()) if m else []
        start = max(hidden.rfind(c, 0, m.start()) for c in (b";", b"}", b"{", b"\n")) + 1 if m else 0
        static = m is not None and re.search(rb"\bstatic\b", hidden[start : m.end()]) is not None
        if spaces or static or m is None:
            out[name] = "&" + "::".join([*spaces, name])
    return out


def _check(result) -> int:
    return int(result[0]) if isinstance(result, tuple) else int(result)


def compile_nvrtc(
    source: str,
    *,
    name: str,
    arch: str,
    name_expressions: list[str],
    options: list[str] | None = None,
) -> NvrtcOutput:
    from xlate.backends import sandbox

    if sandbox.decide():  # untrusted text: NVRTC runs in the sandboxed worker, never reads a file for this process
        from xlate.backends.worker import remote_compile

        return NvrtcOutput(**remote_compile("nvrtc", source=source, name=name, arch=arch,
                                            name_expressions=name_expressions, options=options))
    mod = _nvrtc()
    if mod is None:
        raise RuntimeError("NVRTC is not available (pip install cuda-bindings nvidia-cuda-nvrtc)")
    t0 = time.perf_counter()
    # surrogateescape: a source read with stray non-UTF-8 bytes (a Latin-1 comment) gets its own bytes back
    _, prog = mod.nvrtcCreateProgram(source.encode("utf-8", "surrogateescape"),
                                     name.encode("utf-8", "surrogateescape"), 0, [], [])
    try:
        for expr in name_expressions:
            mod.nvrtcAddNameExpression(prog, expr.encode())
        opts = [f"--gpu-architecture={arch}", language_standard(source), "--device-int128", *include_options(),
                *implicit_includes(source), *(options or [])]
        res = mod.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        _, size = mod.nvrtcGetProgramLogSize(prog)
        # A bytearray, never `b" " * size`: for size 1 that is CPython's shared b" " object, and NVRTC writing
        # its NUL into it would turn every b" " in the process into b"\0". (Edit by the LLM-translator helper.)
        log_buf = bytearray(size)
        mod.nvrtcGetProgramLog(prog, log_buf)
        log = log_buf.rstrip(b"\0 ").decode("utf-8", "replace")
        if _check(res) != 0:
            return NvrtcOutput(False, log, seconds=time.perf_counter() - t0)
        _, size = mod.nvrtcGetCUBINSize(prog)
        cubin_buf = bytearray(size)
        mod.nvrtcGetCUBIN(prog, cubin_buf)
        cubin = bytes(cubin_buf)
        lowered = {}
        for expr in name_expressions:
            _, low = mod.nvrtcGetLoweredName(prog, expr.encode())
            lowered[expr] = low.decode() if isinstance(low, bytes) else str(low)
        return NvrtcOutput(True, log, cubin, lowered, time.perf_counter() - t0)
    finally:
        mod.nvrtcDestroyProgram(prog)
