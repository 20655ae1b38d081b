"""The source model: one `KernelUnit` per file, shared by every stage (translate, verify, report).

Everything here is plain data (dataclasses) with a JSON form; no stage reaches into another's internals.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from xlate.errors import Located

Language = str  # a language of data/targets.yaml: cuda, hip, ascendc, triton, or one a package adds


@dataclass(frozen=True)
class Span:
    """A source range. Lines and columns are 1-based; columns count characters, not bytes."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    start_byte: int
    end_byte: int

    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


@dataclass
class Param:
    name: str
    type: str  # the declared type as written, e.g. "const float* __restrict__"
    base_type: str  # innermost type without qualifiers or pointers, e.g. "float", "T"
    pointer_depth: int
    is_const: bool  # the pointee is const (for pointers) / the value is const (for scalars)
    is_restrict: bool
    is_reference: bool
    is_template_dependent: bool
    reads: bool = False  # the function body (or a callee) reads through this pointer
    writes: bool = False  # ... writes through it
    span: Span | None = None

    @property
    def is_pointer(self) -> bool:
        return self.pointer_depth > 0


@dataclass
class TemplateParam:
    kind: Literal["type", "value"]
    name: str
    type: str | None = None  # for value parameters, e.g. "int"
    default: str | None = None


@dataclass
class SharedDecl:
    name: str
    type: str
    dims: list[str]  # outer first; empty for `extern __shared__ T x[]` and scalars
    dynamic: bool  # `extern __shared__` (sized at launch)
    size_bytes: int | None  # evaluated through macros and constants where possible
    function: str | None
    span: Span


@dataclass
class IntrinsicUse:
    name: str
    category: str  # shuffle, vote, ballot, activemask, warpsize, barrier, lane, fence, cooperative_groups...
    args: list[str]
    function: str | None
    span: Span


@dataclass
class AtomicUse:
    name: str
    args: list[str]
    function: str | None
    span: Span


@dataclass
class AsmUse:
    text: str  # the assembler template string
    function: str | None
    span: Span


@dataclass
class Function:
    """A `__global__` kernel or a `__device__` function."""

    name: str
    kind: Literal["kernel", "device"]
    qualifiers: list[str]
    return_type: str
    params: list[Param]
    template_params: list[TemplateParam] = field(default_factory=list)
    launch_bounds: list[str] | None = None
    calls: list[str] = field(default_factory=list)  # device functions of this unit called directly
    shared: list[SharedDecl] = field(default_factory=list)
    intrinsics: list[IntrinsicUse] = field(default_factory=list)
    atomics: list[AtomicUse] = field(default_factory=list)
    asm: list[AsmUse] = field(default_factory=list)
    barriers: int = 0  # __syncthreads / cg sync count
    annotation: str | None = None  # joined text of `// xlate:` lines above the function
    annotation_span: Span | None = None
    notes: list[str] = field(default_factory=list)  # `// xlate-note:` lines
    span: Span | None = None
    body_span: Span | None = None
    signature_span: Span | None = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass
class LaunchSite:
    kernel: str
    form: Literal["chevron", "hipLaunchKernelGGL", "cudaLaunchKernel", "cudaLaunchCooperativeKernel", "triton"]
    template_args: list[str]
    grid: str | None
    block: str | None
    shmem: str | None
    stream: str | None
    args: list[str]
    function: str | None  # enclosing host function
    span: Span


@dataclass
class ApiCall:
    name: str
    family: str  # runtime, driver, cublas, ...
    function: str | None
    span: Span


@dataclass
class Include:
    path: str
    system: bool
    span: Span


@dataclass
class Macro:
    name: str
    params: list[str] | None  # None for object-like macros
    value: str
    span: Span


@dataclass
class HostFunction:
    name: str
    span: Span  # the whole definition, template header included


@dataclass
class HostVariable:
    """A file-scope host-only declaration: a variable with no device memory space (not a constant), or the
    prototype of a function with no execution space."""

    name: str
    span: Span


@dataclass
class TritonParam:
    name: str
    annotation: str | None
    constexpr: bool
    default: str | None


@dataclass
class TritonKernel:
    name: str
    decorators: list[str]
    params: list[TritonParam]
    annotation: str | None
    span: Span


@dataclass
class PyFunction:
    """A plain Python function of a Triton module (a launcher, usually)."""

    name: str
    params: list[str]
    launches: list[str]  # jit kernels it launches with kernel[grid](...)
    annotation: str | None
    span: Span


@dataclass(frozen=True)
class ProjectMacros:
    """Macros defined outside a file (its headers) that change how the front end must read it."""

    qualifiers: tuple[tuple[str, tuple[str, ...]], ...] = ()  # HOST_DEVICE -> (__host__, __device__)
    statement_headers: tuple[str, ...] = ()  # LOOP(i, n) -> for (...)

    def merged_under(self, outer: ProjectMacros) -> ProjectMacros:
        """These macros, plus `outer`'s (an includer's) where these do not define the name."""
        if not outer.qualifiers and not outer.statement_headers:
            return self
        qualifiers = dict(outer.qualifiers) | dict(self.qualifiers)
        return ProjectMacros(tuple(sorted(qualifiers.items())),
                             tuple(sorted(set(self.statement_headers) | set(outer.statement_headers))))


@dataclass
class KernelUnit:
    path: str
    language: Language
    kernels: list[Function] = field(default_factory=list)
    device_functions: list[Function] = field(default_factory=list)
    launches: list[LaunchSite] = field(default_factory=list)
    api_calls: list[ApiCall] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    macros: list[Macro] = field(default_factory=list)
    host_functions: list[HostFunction] = field(default_factory=list)
    host_variables: list[HostVariable] = field(default_factory=list)
    constants: dict[str, str] = field(default_factory=dict)  # file-scope integral constants (constexpr/const/enum)
    triton_kernels: list[TritonKernel] = field(default_factory=list)
    py_functions: list[PyFunction] = field(default_factory=list)
    size_bytes: int = 0
    warnings: list[Located] = field(default_factory=list)  # what the front end could not read (file:line:col)
    project_macros: ProjectMacros = field(default_factory=ProjectMacros)  # from the headers it includes
    text: str = field(default="", repr=False)  # the source (not part of the JSON form)

    @property
    def functions(self) -> list[Function]:
        return self.kernels + self.device_functions

    def kernel(self, name: str) -> Function | None:
        return next((k for k in self.kernels if k.name == name), None)

    def kernel_names(self) -> list[str]:
        """The kernels a port or the gate works on: C-family `__global__` functions, and a Python module's
        launchers (the functions that launch a jit kernel)."""
        return [k.name for k in self.kernels] + [f.name for f in self.py_functions if f.launches]

    def callable_names(self) -> list[str]:
        """Every function the gate may be asked to call as a kernel: `__global__` functions, and any function of
        a Python module (a launcher the front end did not recognise as one is still callable)."""
        return [k.name for k in self.kernels] + [f.name for f in self.py_functions]

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)

    @property
    def call_graph(self) -> dict[str, list[str]]:
        return {f.name: list(f.calls) for f in self.functions}

    def reachable(self, name: str) -> list[Function]:
        """`name` and every device function it calls, transitively (each once, callers first)."""
        seen: list[Function] = []
        stack = [name]
        while stack:
            fn = self.function(stack.pop())
            if fn is None or fn in seen:
                continue
            seen.append(fn)
            stack.extend(reversed(fn.calls))
        return seen

    def launches_of(self, kernel: str) -> list[LaunchSite]:
        return [site for site in self.launches if site.kernel == kernel]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("text", None)
        data["call_graph"] = self.call_graph
        return data
