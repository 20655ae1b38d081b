"""What a kernel names that its own file does not define: the program around it (the files spec inference reads
as one program: the kernel's folder, its headers and includers).

Real kernels use macros and constants from a header the includer defines first (`#define BLOCK_SIZE 16` in
main.cu before `#include "kernels.cu"`), file-scope constants computed from them (`const Real dx = L / N;`), and
device functions and function-like macros of other headers. The lifter asks here when a name is unknown:

* an object-like macro, an enumerator or a `const`/`constexpr` scalar of file scope: its value as an expression
  (IR), evaluated where it is used, as the preprocessor's expansion would be (a macro) or as its initialiser
  (a constant, converted to its declared type);
* a function-like macro the kernel's file does not define: added to the macros its functions are expanded with;
* a device function of another file (also namespace-qualified, `ns::f`): its IR, inlined like a local one.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from xlate.cir import ir
from xlate.cir.build import BuildError, build_function
from xlate.model import KernelUnit, Macro, Span

IDENT = re.compile(r"[A-Za-z_]\w*")
_UNITS: dict[tuple[str, float], KernelUnit | None] = {}


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


class ProgramNames:
    """Names of the program a unit belongs to, for its kernels' lifting."""

    def __init__(self, unit: KernelUnit, program: Any):
        self.unit = unit
        self.program = program
        own = {m.name for m in unit.macros} | {f.name for f in unit.functions}
        self._own = own
        self._exprs: dict[str, ir.Expr | None] = {}
        self._devices: dict[str, ir.FunctionIR | None] = {}
        self._overloads: dict[str, list[ir.FunctionIR]] = {}

    # -- macros for the build -----------------------------------------------------------------------------------

    def build_unit(self) -> KernelUnit:
        """The unit with the program's function-like macros it does not define itself, for build_function."""
        extra = [Macro(m.name, list(m.params), m.body, Span(m.path, m.line, 1, m.line, 1, 0, 0))
                 for m in self.program.macros.values()
                 if m.params is not None and m.name not in self._own and m.body and m.path != self.unit.path]
        return replace(self.unit, macros=[*self.unit.macros, *extra]) if extra else self.unit

    # -- values ------------------------------------------------------------------------------------------------

    def value(self, name: str) -> ir.Expr | None:
        """The expression a name of the program stands for (macro body, constant initialiser), or None."""
        if name not in self._exprs:
            self._exprs[name] = self._value(name)
        return self._exprs[name]

    def _value(self, name: str) -> ir.Expr | None:
        own = next((m for m in self.unit.macros if m.name == name), None)  # met inside another file's expression
        if own is not None:
            return self._expr(own.value) if own.params is None and own.value.strip() else None
        m = self.program.macros.get(name)
        if m is not None and m.params is None and m.body.strip():
            return self._expr(m.body)
        qual, _, short = name.rpartition("::")  # `ns::K`: a constant declared in namespace ns
        for _file, node in self.program.globals:
            if qual and not _in_namespace(node, qual.removeprefix("::")):
                continue
            text = self._constant(node, short)
            if text is not None:
                return self._expr(text)
        return None

    def _constant(self, node: Any, name: str) -> str | None:
        """`(T)(init)` of `const T name = init;` / `constexpr T name = init;` (file or namespace scope)."""
        quals = {_text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        if not quals & {"const", "constexpr"} or quals & {"__constant__", "__device__", "__shared__", "extern"}:
            return None
        raw = _text(node)
        if "__constant__" in raw.split("=")[0] or "__device__" in raw.split("=")[0]:
            return None
        ctype = _text(node.child_by_field_name("type"))
        for d in node.children_by_field_name("declarator"):
            if d.type != "init_declarator":
                continue
            target = d.child_by_field_name("declarator")
            value = d.child_by_field_name("value")
            if target is None or target.type != "identifier" or _text(target) != name or value is None:
                continue
            init = _text(value)
            if value.type == "initializer_list":  # `const int n{4};`
                inner = [c for c in value.named_children]
                if len(inner) != 1:
                    return None
                init = _text(inner[0])
            return f"static_cast<{ctype}>({init})"  # a cast whatever the type's spelling (a macro, a typedef)
        return None

    def _expr(self, text: str) -> ir.Expr | None:
        """IR of an expression written in the program (its names resolved lazily where it is used)."""
        from xlate.parse import parse_string

        src = f"__device__ double __xl_value() {{ return ({text}); }}\n"
        try:
            unit = parse_string(src, "<program>.cu", "cuda")
            fn = unit.function("__xl_value")
            if fn is None:
                return None
            extra = [m for m in self.build_unit().macros if m.params is not None]
            fir = build_function(replace(unit, macros=[*unit.macros, *extra]), fn)
        except (BuildError, ValueError, RecursionError):
            return None
        if len(fir.body) != 1 or not isinstance(fir.body[0], ir.Return) or fir.body[0].value is None:
            return None
        return fir.body[0].value

    # -- device functions ----------------------------------------------------------------------------------------

    def device(self, name: str, nargs: int) -> ir.FunctionIR | None:
        """IR of a device function of another file of the program taking `nargs` arguments (`ns::f` looked up as
        `f`; of overloads, the one with that many parameters)."""
        key = f"{name}/{nargs}"
        if key not in self._devices:
            self._devices[key] = self._device(name, nargs)
        return self._devices[key]

    def overloads(self, name: str) -> list[ir.FunctionIR]:
        """IR of every device function called `name` in the program (this file first), for picking an overload
        by its parameter types (`operator*` of helper_math.h's float2, float2 * float, float * float2 ...)."""
        key = f"{name}/*"
        if key not in self._overloads:
            out: list[ir.FunctionIR] = []
            mine = os.path.abspath(self.unit.path)
            paths = [self.unit.path] + [fd.path for fd in self.program.functions.get(name, []) if not fd.cls]
            seen: set[str] = set()
            for path in paths:
                if os.path.abspath(path) in seen:
                    continue
                seen.add(os.path.abspath(path))
                unit = self.unit if os.path.abspath(path) == mine else _unit_of(path)
                if unit is None:
                    continue
                built = self.build_unit() if unit is self.unit else ProgramNames(unit, self.program).build_unit()
                for f in unit.device_functions:
                    if f.name != name:
                        continue
                    try:
                        out.append(build_function(built, f))
                    except BuildError:
                        continue
            self._overloads[key] = out
        return self._overloads[key]

    def _device(self, name: str, nargs: int) -> ir.FunctionIR | None:
        short = name.rsplit("::", 1)[-1]
        if not IDENT.fullmatch(short) or short in {f.name for f in self.unit.functions}:
            return None
        paths = []
        for fd in self.program.functions.get(short, []):
            if fd.cls or fd.path in paths or os.path.abspath(fd.path) == os.path.abspath(self.unit.path):
                continue
            paths.append(fd.path)
        for path in paths:
            other = _unit_of(path)
            found = [f for f in other.device_functions if f.name == short] if other is not None else []
            fn = next((f for f in found if len(f.params) == nargs), found[0] if len(found) == 1 else None)
            if fn is None:
                continue
            try:
                return replace(build_function(ProgramNames(other, self.program).build_unit(), fn), path=path)
            except BuildError:
                continue
        return None


def _in_namespace(node: Any, qual: str) -> bool:
    """Whether a declaration stands in namespace `qual` (`a::b`), or in one it names from an enclosing one (the
    qualification as written in a kernel of namespace a may leave out `a::`)."""
    names: list[str] = []
    p = node.parent
    while p is not None:
        if p.type == "namespace_definition":
            n = p.child_by_field_name("name")
            names.insert(0, _text(n) if n is not None else "")
        p = p.parent
    chain = "::".join(names)
    return bool(qual) and (chain == qual or chain.endswith("::" + qual))


def _unit_of(path: str) -> KernelUnit | None:
    """A file of the program read as CUDA (cached by path and modification time)."""
    from xlate.parse import parse_string
    from xlate.parse.frontend import include_macros

    try:
        key = (path, os.stat(path).st_mtime)
    except OSError:
        return None
    if key not in _UNITS:
        if len(_UNITS) > 64:
            _UNITS.clear()
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            name = path if path.endswith((".cu", ".cuh")) else path + ".cu"
            # the qualifier macros it uses may come from a sibling header its includer read first (`ESS f()`)
            unit = parse_string(data.decode("utf-8", "replace"), name, "cuda", context=include_macros(path, data))
            unit.path = path
            _UNITS[key] = unit
        except Exception:  # a file the front end cannot read gives no functions, not a failed port
            _UNITS[key] = None
    return _UNITS[key]
