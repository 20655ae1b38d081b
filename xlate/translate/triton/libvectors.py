"""A library's vectors whose lanes are members (glm's `vec<3, float>`, xlate/data/library_types.yaml `fields`): their
arithmetic lane by lane with a number broadcast to every lane, their constructors, and the library functions
`vector_functions` names (glm::make_vec3, glm::dot, ...). Matrices are libmatrices.py's; a library type with
neither member lanes nor a matrix shape (a glm quaternion) has no value here: code using it is refused, naming
the type."""

from __future__ import annotations

import functools
import re
from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.resources import data
from xlate.translate.triton import sym as S
from xlate.translate.triton.exprs import has_effects
from xlate.translate.triton.state import Binding
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.tables import math_entry
from xlate.translate.triton.values import LiftError, PtrVal, StructVal

LANEWISE_OPS = ("+", "-", "*", "/")


@functools.cache
def vector_functions() -> dict[str, dict[str, Any]]:
    return dict(data("library_types.yaml").get("vector_functions") or {})


@functools.cache
def library_namespaces() -> frozenset[str]:
    """The namespaces of the libraries xlate/data/library_types.yaml describes (`glm`, `Eigen`, ...)."""
    table = data("library_types.yaml")
    names = [*table["names"], *table["templates"], *vector_functions()]
    return frozenset(n.split("::")[0] for n in names if "::" in n)


class LibraryVectors:
    """Mixin of the lifter (needs vec_info, resolve_type, data, ev, binary_data, read_at, math_data)."""

    def lanewise_info(self, v: Any) -> dict[str, Any] | None:
        """The layout of `v` where it is a library vector whose arithmetic is lane by lane; None otherwise."""
        if not isinstance(v, StructVal):
            return None
        info = self.vec_info(v.ctype)
        return info if info is not None and info.get("lanewise") else None

    def lanewise(self, op: str, a: Any, b: Any, loc: ir.Loc) -> StructVal | None:
        """`u - s * v` of library vectors: `op` on each lane, a number on either side converted to the lane type
        and used for every lane (glm's operators); None where neither operand is such a vector."""
        ia, ib = self.lanewise_info(a), self.lanewise_info(b)
        info = ia or ib
        if info is None or op not in LANEWISE_OPS:
            return None
        product = self.matrix_arith(op, a, b, loc)  # a matrix times a matrix or a vector (libmatrices.py)
        if product is not None:
            return product
        if ia and ib and (ia["fields"] != ib["fields"] or ia["scalar"] != ib["scalar"]):
            raise LiftError("XL2012", f"'{op}' of a {a.ctype} and a {b.ctype}", loc)
        scalar = info["scalar"]

        def lane(v: Any, f: str) -> Sym:
            return S.cast(self.data(v.fields[f] if isinstance(v, StructVal) else v, loc), scalar)

        out = {f: S.cast(self.binary_data(op, lane(a, f), lane(b, f), loc), scalar) for f in info["fields"]}
        return StructVal((a if ia else b).ctype, out)

    def vector_conversion(self, v: Any, base: str, loc: ir.Loc | None) -> StructVal | None:
        """A library vector converted to another of as many lanes (glm converts implicitly between lane types),
        each lane converted; None where `v` and `base` are not two such vectors."""
        from xlate.specs.infer.program import library_matrix, library_type
        from xlate.translate.triton.libmatrices import matrix_fields

        want = self.vec_info(base)
        if not isinstance(v, StructVal) or want is None or not want.get("lanewise"):
            return None
        have = self.lanewise_info(v)
        shape = library_matrix(v.ctype) if have is None else None  # of a template type: `mat<3, 3, scalar_t>`
        names = have["fields"] if have is not None else matrix_fields(shape[1], shape[2]) if shape else \
            (library_type(v.ctype) or (None, 0, []))[2]
        if names != want["fields"]:
            return None
        return StructVal(base, {f: S.cast(self.data(v.fields[f], loc), want["scalar"]) for f in names})

    def lanewise_neg(self, v: Any, loc: ir.Loc) -> StructVal | None:
        info = self.lanewise_info(v)
        if info is None:
            return None
        return StructVal(v.ctype, {f: S.cast(S.op("neg", ctyping.promote(x.ctype), x), info["scalar"])
                                   for f, x in ((f, self.data(v.fields[f], loc)) for f in info["fields"])})

    def library_vector_call(self, fn: str, e: ir.Call) -> Any | None:
        """`vec3(x, y, z)`, `vec3(s)`, `vec3(v)`, `vec3()` of a library vector, and the library's vector functions
        (`glm::dot(a, b)`); None where `fn` is neither."""
        rule = vector_functions().get(fn.removeprefix("::"))
        if rule is not None:
            return self.vector_function(fn, rule, e)
        ct = self.resolve_type(fn, e.loc)
        info = self.vec_info(ct)
        if info is None or not info.get("lanewise"):
            return None
        fields, scalar = info["fields"], info["scalar"]
        if len(e.args) == 1 and isinstance(e.args[0], ir.Call) and e.args[0].fn == ir.BRACED:
            e = ir.Call(e.loc, e.fn, e.args[0].args)  # `vec2({x, y})`: the list's values are the arguments
        args = [self.ev(a) for a in e.args]
        if info.get("matrix"):
            return self.matrix_construct(fn, ct, info, args, e.loc)
        if not args:
            return StructVal(ct, {f: S.const(0, scalar) for f in fields})
        if len(args) == 1 and isinstance(args[0], StructVal):
            src = self.lanewise_info(args[0])
            if src is None or src["fields"] != fields:
                raise LiftError("XL2012", f"a {fn} built from a {args[0].ctype}", e.loc)
            return StructVal(ct, {f: S.cast(self.data(args[0].fields[f], e.loc), scalar) for f in fields})
        if any(isinstance(a, StructVal) for a in args):  # vec3(v2, z): lanes taken from several vectors
            raise LiftError("XL2012", f"a {fn} built from vectors and numbers", e.loc)
        if len(args) == 1:  # glm's scalar constructor: the number in every lane
            args = args * len(fields)
        if len(args) != len(fields):
            raise LiftError("XL2012", f"{fn} with {len(args)} arguments, {len(fields)} lanes", e.loc)
        return StructVal(ct, {f: S.cast(self.data(a, e.loc), scalar) for f, a in zip(fields, args)})

    def argument_dependent_call(self, fn: str, e: ir.Call) -> Any | None:
        """An unqualified call `fn(v, ...)` nothing else names, with an argument of library `ns`'s vectors or
        matrices: `ns::fn`, as C++ finds it by argument-dependent lookup (`length(ray)` of a glm vector); None
        where there is no such function."""
        rule = self.argument_dependent(fn, e) if "::" not in fn else None
        return self.vector_function(fn, rule, e) if rule is not None else None

    def argument_dependent(self, fn: str, e: ir.Call) -> dict[str, Any] | None:
        """The rule of `ns::fn` for a call with an argument of library `ns`'s vectors or matrices; None otherwise.
        Arguments with side effects are not evaluated here (the call would evaluate them again)."""
        if any(has_effects(a) or (isinstance(a, ir.Call) and a.fn == ir.BRACED) for a in e.args):
            return None
        for a in e.args:
            v = self.ev(a)
            if self.lanewise_info(v) is None:
                continue
            real = ctyping.canonical(self.kc.typedefs(v.ctype)) if self.kc.typedefs is not None else v.ctype
            ns = real.removeprefix("::").split("::")[0] if "::" in real else None
            rule = vector_functions().get(f"{ns}::{fn}") if ns else None
            if rule is not None:
                return rule
        return None

    def vector_function(self, fn: str, rule: dict[str, Any], e: ir.Call) -> Any:
        kind = rule["rule"]
        if kind == "load":
            return self.vector_load(fn, str(rule["result"]), e)
        if kind == "math":
            return self.library_math(fn, rule, e)
        args = [self.ev(a) for a in e.args]
        if kind in ("transpose", "determinant", "inverse", "outer", "compmult"):
            return self.matrix_function(kind, fn, args, e.loc)
        infos = [self.lanewise_info(a) for a in args]
        want = 2 if kind in ("dot", "cross") else 1
        if len(args) != want or None in infos or any(i != infos[0] for i in infos):
            raise LiftError("XL2008", f"{fn} of {', '.join(getattr(a, 'ctype', 'a number') for a in args)}", e.loc)
        info = infos[0]
        if not ctyping.is_float(info["scalar"]):
            raise LiftError("XL2008", f"{fn} of a vector of {info['scalar']}", e.loc)
        if kind == "dot":
            return self.lane_dot(args[0], args[1], info, e.loc)
        if kind == "length":
            return self.lane_sqrt(self.lane_dot(args[0], args[0], info, e.loc), e.loc)
        if kind == "normalize":  # glm: v * inversesqrt(dot(v, v)), inversesqrt(x) = 1 / sqrt(x)
            root = self.lane_sqrt(self.lane_dot(args[0], args[0], info, e.loc), e.loc)
            inv = S.cast(self.binary_data("/", S.const(1.0, info["scalar"]), root, e.loc), info["scalar"])
            return self.lanewise("*", args[0], inv, e.loc)
        if kind == "cross" and info["fields"] == ["x", "y", "z"]:
            return self.lane_cross(args[0], args[1], info, e.loc)
        raise LiftError("XL2008", f"{fn} of a {args[0].ctype}", e.loc)

    def library_math(self, fn: str, rule: dict[str, Any], e: ir.Call) -> Any:
        """`glm::atan(y, x)` of numbers: the CUDA math function the rule names for that many arguments, lifted as
        the source's own call of it; of library vectors (all of one layout, numbers broadcast), lane by lane."""
        name = (rule.get("names") or {}).get(len(e.args))
        if name is None:
            raise LiftError("XL2008", f"{fn} with {len(e.args)} arguments", e.loc)
        args = [self.ev(a) for a in e.args]
        infos = [self.lanewise_info(a) for a in args]
        shaped = [i for i in infos if i is not None]
        types = {i["scalar"] for i in shaped} | {self.data(a, e.loc).ctype for a in args if not isinstance(a, StructVal)}
        if types <= {"float"} and math_entry(name + "f") is not None:
            name += "f"  # glm's float overload is the float function (atan2f), not the double one
        if not shaped:
            return self._call_on_values(name, [self.data(v, e.loc) for v in args], e)
        if any(i["fields"] != shaped[0]["fields"] or i.get("matrix") for i in shaped):
            raise LiftError("XL2008", f"{fn} of {', '.join(getattr(a, 'ctype', 'a number') for a in args)}", e.loc)
        info = shaped[0]
        lanes = {f: S.cast(self.data(self._call_on_values(name, [
            S.cast(self.data(v.fields[f] if isinstance(v, StructVal) else v, e.loc), info["scalar"]) for v in args], e),
            e.loc), info["scalar"]) for f in info["fields"]}
        return StructVal(next(a for a in args if isinstance(a, StructVal)).ctype, lanes)

    def _call_on_values(self, name: str, values: list[Sym], e: ir.Call) -> Any:
        """The source's own call `name(...)` of values already computed (bound to names only the call sees, so
        each is evaluated once)."""
        self.push_scope()
        try:
            names = []
            for k, (a, v) in enumerate(zip(e.args, values)):
                tmp = f"__xl_arg{k}"
                self.st.scopes[-1][tmp] = Binding(ir.CType(v.ctype), v, len(self.st.pred))
                names.append(ir.Name(a.loc, tmp))
            return self.ev(ir.Call(e.loc, name, tuple(names)))
        finally:
            self.pop_scope()

    def vector_load(self, fn: str, result: str, e: ir.Call) -> StructVal:
        """glm::make_vec3(p): the vector of p[0], p[1], p[2] (its lane type p's element type); glm::make_mat3(p)
        the matrix of p[0..8], column after column."""
        from xlate.specs.infer.program import library_matrix, library_type
        from xlate.translate.triton.libmatrices import matrix_fields

        p = self.ev(e.args[0]) if len(e.args) == 1 else None
        if not isinstance(p, PtrVal):
            raise LiftError("XL2008", f"{fn} of something other than one pointer", e.loc)
        scalar = self.resolve_type(p.elem.base, e.loc)
        if self.vec_info(scalar) is not None:
            raise LiftError("XL2008", f"{fn} of a pointer to {p.elem.base}", e.loc)
        ct = re.sub(r"\bT\b", scalar, result)
        shape = library_matrix(ct)
        fields = matrix_fields(shape[1], shape[2]) if shape else (library_type(ct) or (None, 0, []))[2]
        # a template type's lanes keep the type read (a vector declared of them converts them, vector_conversion)
        vals = {f: self.data(self.read_at(p, [S.const(k, "int")], e.loc), e.loc) for k, f in enumerate(fields)}
        return StructVal(ct, {f: S.cast(x, scalar) if ctyping.row(scalar) else x for f, x in vals.items()})

    def lane_dot(self, a: StructVal, b: StructVal, info: dict[str, Any], loc: ir.Loc) -> Sym:
        """glm's order: the products' lanes summed first to last, four lanes as (x + y) + (z + w)."""
        scalar = info["scalar"]

        def add(x: Sym, y: Sym) -> Sym:
            return S.cast(self.binary_data("+", x, y, loc), scalar)

        p = [S.cast(self.binary_data("*", self.data(a.fields[f], loc), self.data(b.fields[f], loc), loc), scalar)
             for f in info["fields"]]
        if len(p) == 4:
            return add(add(p[0], p[1]), add(p[2], p[3]))
        total = p[0]
        for x in p[1:]:
            total = add(total, x)
        return total

    def lane_sqrt(self, x: Sym, loc: ir.Loc) -> Sym:
        name = "sqrtf" if x.ctype == "float" else "sqrt"
        return S.cast(self.math_data(name, math_entry(name), [x], loc), x.ctype)

    def lane_cross(self, a: StructVal, b: StructVal, info: dict[str, Any], loc: ir.Loc) -> StructVal:
        scalar = info["scalar"]

        def term(p: str, q: str) -> Sym:  # a.p * b.q - b.p * a.q, glm's order
            x = self.binary_data("*", self.data(a.fields[p], loc), self.data(b.fields[q], loc), loc)
            y = self.binary_data("*", self.data(b.fields[p], loc), self.data(a.fields[q], loc), loc)
            return S.cast(self.binary_data("-", x, y, loc), scalar)

        return StructVal(a.ctype, {"x": term("y", "z"), "y": term("z", "x"), "z": term("x", "y")})

    def library_type_refusal(self, ctype: str, loc: ir.Loc) -> LiftError | None:
        """The refusal of a value of a library type without member lanes and no matrix (a glm quaternion: its
        algebra is not lifted); None for any other type (a matrix: libmatrices.py)."""
        from xlate.specs.infer.program import library_matrix, library_type

        real = ctyping.canonical(self.kc.typedefs(ctype)) if self.kc.typedefs is not None else ctype
        found = library_type(real) or library_type(ctype)
        if found is None or found[2] or library_matrix(real) or library_matrix(ctype):
            return None
        spelt = ctype if real == ctype else f"{ctype} ({real})"
        return LiftError("XL2012", f"{spelt} is a library quaternion or other type of {found[1]} {found[0]}s: the "
                                   "Triton lifter keeps values of a library's vectors and matrices only "
                                   "(xlate/data/library_types.yaml); port the kernel to CUDA or HIP", loc)

    def library_refusal(self, fn: str, loc: ir.Loc) -> LiftError | None:
        """The precise refusal of a call `fn` naming a library type neither kept as lanes nor as a matrix
        (`glm::quat(...)`) or a function of such a library without a rule (`glm::distance`); None for anything
        else."""
        refused = self.library_type_refusal(fn, loc)
        if refused is not None:
            return refused
        head = re.match(r"(?:::)?(\w+)::", fn)
        if head is not None and head.group(1) in library_namespaces():
            return LiftError("XL2008", f"call of '{fn}', a {head.group(1)} function with no rule (the lifted ones: "
                                       f"xlate/data/library_types.yaml vector_functions)", loc)
        return None
