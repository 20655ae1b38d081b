"""A library's column-major matrices (glm's `mat<C, R, T>`, xlate/data/library_types.yaml `matrix`) and the
subscripts of its vectors, for the Triton lifter.

A matrix local is kept as its C * R numbers, column after column (fields `c0r0, c0r1, ...`, the order of its
lanes in memory), so loads, stores, copies, selects and loop carries treat it like any other struct of lanes.
What is a matrix's own: `m[c]` (column c, a vector of R lanes) and `m[c][r]` (a number), read and assigned;
its constructors (`mat3(s)` puts s on the diagonal, `mat3(col0, col1, col2)`, `mat3(9 numbers)` column after
column); the products `m * n`, `m * v` and `v * m`; and `glm::transpose`, `determinant`, `inverse` (2x2, 3x3),
`outerProduct`, `matrixCompMult`, `make_mat3(p)`. Each is written in the library's order of operations (glm's
func_matrix.inl and type_mat*.inl), so a port computes the same roundings as the source up to FMA contraction,
which the gate's tolerance covers as it does for nvcc's own. `+`, `-`, and a number times or over a matrix are
lane by lane (libvectors.py). Quaternions are no matrices: code using them stays refused."""

from __future__ import annotations

from typing import Any

from xlate.cir import ctype as ctyping
from xlate.cir import ir
from xlate.translate.triton import sym as S
from xlate.translate.triton.sym import Sym
from xlate.translate.triton.values import LiftError, StructVal

VECTOR_LANES = ("x", "y", "z", "w")


def matrix_fields(columns: int, rows: int) -> list[str]:
    """The lanes of a columns x rows matrix, in memory order (column-major)."""
    return [f"c{c}r{r}" for c in range(columns) for r in range(rows)]


def vector_type(scalar: str, lanes: int) -> str:
    return f"glm::vec<{lanes}, {scalar}>"


def matrix_type(scalar: str, columns: int, rows: int) -> str:
    return f"glm::mat<{columns}, {rows}, {scalar}>"


class LibraryMatrices:
    """Mixin of the lifter (needs lanewise_info, data, binary_data, select, set_var, pick_lane, em)."""

    # -- shapes ----------------------------------------------------------------------------------------------

    def matrix_shape(self, v: Any) -> tuple[int, int] | None:
        info = self.lanewise_info(v)
        return tuple(info["matrix"]) if info is not None and info.get("matrix") else None  # type: ignore[return-value]

    def _mat_scalar(self, v: StructVal) -> str:
        return self.lanewise_info(v)["scalar"]

    def _mat_lane(self, v: StructVal, field: str, scalar: str, loc: ir.Loc) -> Sym:
        return S.cast(self.data(v.fields[field], loc), scalar)

    def _mat_column(self, m: StructVal, c: int, loc: ir.Loc) -> StructVal:
        _, rows = self.matrix_shape(m)
        scalar = self._mat_scalar(m)
        return StructVal(vector_type(scalar, rows),
                         {VECTOR_LANES[r]: self._mat_lane(m, f"c{c}r{r}", scalar, loc) for r in range(rows)})

    def _mat_build(self, scalar: str, columns: int, rows: int, at: Any) -> StructVal:
        """The matrix whose element [c][r] is at(c, r)."""
        return StructVal(matrix_type(scalar, columns, rows),
                         {f"c{c}r{r}": at(c, r) for c in range(columns) for r in range(rows)})

    def _mat_named(self, v: StructVal) -> StructVal:
        """`v` with each computed lane named where the port first needs it: a product's lanes are read by every
        lane of the next product, and unnamed they would be written out again at each use (a chain of three
        3x3 products grows the port's text 27-fold)."""
        for x in v.fields.values():
            if isinstance(x, Sym) and not x.is_const and x.op not in ("uni", "var") and x.id not in self.em.hints:
                self.em.hints[x.id] = "m"
        return v

    def _mat_op(self, op: str, x: Sym, y: Sym, scalar: str, loc: ir.Loc) -> Sym:
        return S.cast(self.binary_data(op, x, y, loc), scalar)

    def _mat_dot(self, pairs: list[tuple[Sym, Sym]], scalar: str, loc: ir.Loc) -> Sym:
        """p0 * q0 + p1 * q1 + ..., added left to right (glm's order)."""
        total = self._mat_op("*", pairs[0][0], pairs[0][1], scalar, loc)
        for p, q in pairs[1:]:
            total = self._mat_op("+", total, self._mat_op("*", p, q, scalar, loc), scalar, loc)
        return total

    # -- subscripts ------------------------------------------------------------------------------------------

    def lane_read(self, v: StructVal, idx: list[Sym], loc: ir.Loc) -> Any | None:
        """`v[i]` of a library vector, `m[c]` and `m[c][r]` of a matrix; None where `v` is neither."""
        info = self.lanewise_info(v)
        if info is None:
            return None
        shape = info.get("matrix")
        if shape is None:
            if len(idx) != 1:
                raise LiftError("XL2001", f"a {v.ctype} indexed with {len(idx)} subscripts", loc)
            return self.pick_lane([v.fields[f] for f in info["fields"]], idx[0], f"the lanes of a {v.ctype}", loc)
        columns, rows = shape
        if len(idx) > 2:
            raise LiftError("XL2001", f"a {v.ctype} indexed with {len(idx)} subscripts", loc)
        cols = [self._mat_column(v, c, loc) for c in range(columns)]
        col = self.pick_lane(cols, idx[0], f"the columns of a {v.ctype}", loc)
        if len(idx) == 1:
            return col
        return self.pick_lane([col.fields[VECTOR_LANES[r]] for r in range(rows)], idx[1], f"a column of a {v.ctype}",
                              loc)

    def lane_write(self, name: str, v: StructVal, idx: list[Sym], val: Any, loc: ir.Loc) -> bool:
        """`v[i] = x`, `m[c] = col`, `m[c][r] = x` of a local; False where `v` is no library vector or matrix."""
        info = self.lanewise_info(v)
        if info is None:
            return False
        scalar, shape = info["scalar"], info.get("matrix")
        if shape is None:
            targets = [[f] for f in info["fields"]]
        else:
            columns, rows = shape
            targets = [[f"c{c}r{r}" for r in range(rows)] for c in range(columns)]
            if len(idx) == 2:  # one element: its number in memory order (constant where both subscripts are)
                targets = [[f"c{c}r{r}"] for c in range(columns) for r in range(rows)]
                idx = [S.op("add", "int", S.op("mul", "int", S.cast(idx[0], "int"), S.const(rows, "int")),
                            S.cast(idx[1], "int"))]
        if len(idx) != 1:
            raise LiftError("XL2001", f"a {v.ctype} assigned through {len(idx)} subscripts", loc)
        if len(targets[0]) == 1:
            values = [S.cast(self.data(val, loc), scalar)]
        else:  # a whole column
            have = self.lanewise_info(val)
            if have is None or have.get("matrix") or len(have["fields"]) != len(targets[0]):
                raise LiftError("XL2012", f"a column of a {v.ctype} assigned a {getattr(val, 'ctype', 'number')}", loc)
            values = [S.cast(self.data(val.fields[f], loc), scalar) for f in have["fields"]]
        i = idx[0]
        if i.is_const and not 0 <= int(i.value) < len(targets):
            raise LiftError("XL2001", f"index {int(i.value)} outside a {v.ctype}", loc)
        fields = dict(v.fields)
        for k, group in enumerate(targets):
            if i.is_const and int(i.value) != k:
                continue
            hit = None if i.is_const else S.op("eq", "bool", S.cast(i, "int"), S.const(k, "int"))
            for f, x in zip(group, values):
                fields[f] = x if hit is None else self.select(hit, x, fields[f], loc)
        self.set_var(name, StructVal(v.ctype, fields), loc)
        return True

    # -- arithmetic ------------------------------------------------------------------------------------------

    def matrix_arith(self, op: str, a: Any, b: Any, loc: ir.Loc) -> StructVal | None:
        """`m * n`, `m * v`, `v * m` (linear algebra); None where lane by lane applies (a number with a matrix,
        `+`/`-` of two matrices of one shape) or neither operand is a matrix."""
        sa, sb = self.matrix_shape(a), self.matrix_shape(b)
        if sa is None and sb is None:
            return None
        va = self.lanewise_info(a) if sa is None else None
        vb = self.lanewise_info(b) if sb is None else None
        if op in ("+", "-") and sa and sb:
            if sa != sb:
                raise LiftError("XL2012", f"'{op}' of a {a.ctype} and a {b.ctype}", loc)
            return None
        if op != "*" or (sa is None and va is None) or (sb is None and vb is None):
            if op == "/" and (sb is not None or (sa is not None and vb is not None)):
                raise LiftError("XL2012", f"'/' of a {getattr(a, 'ctype', 'number')} by a "
                                          f"{getattr(b, 'ctype', 'number')} (a matrix inverse)", loc)
            if op in ("+", "-") and (va is not None or vb is not None):
                raise LiftError("XL2012", f"'{op}' of a matrix and a vector", loc)
            return None  # a number with a matrix: lane by lane
        scalar = self._mat_scalar(a if sa else b)
        if sa and sb:  # mat<K, R> * mat<C, K> -> mat<C, R>: [c][r] = sum_k a[k][r] * b[c][k]
            (ka, rows), (columns, kb) = sa, sb
            if ka != kb:
                raise LiftError("XL2012", f"'*' of a {a.ctype} and a {b.ctype}", loc)
            return self._mat_named(self._mat_build(scalar, columns, rows, lambda c, r: self._mat_dot(
                [(self._mat_lane(a, f"c{k}r{r}", scalar, loc), self._mat_lane(b, f"c{c}r{k}", scalar, loc))
                 for k in range(ka)], scalar, loc)))
        if sa:  # mat<C, R> * vec<C> -> vec<R>: [r] = sum_c m[c][r] * v[c]
            columns, rows = sa
            if len(vb["fields"]) != columns:
                raise LiftError("XL2012", f"'*' of a {a.ctype} and a {b.ctype}", loc)
            return self._mat_named(StructVal(vector_type(scalar, rows), {VECTOR_LANES[r]: self._mat_dot(
                [(self._mat_lane(a, f"c{c}r{r}", scalar, loc), self._mat_lane(b, vb["fields"][c], scalar, loc))
                 for c in range(columns)], scalar, loc) for r in range(rows)}))
        columns, rows = sb  # vec<R> * mat<C, R> -> vec<C>: [c] = sum_r v[r] * m[c][r]
        if len(va["fields"]) != rows:
            raise LiftError("XL2012", f"'*' of a {a.ctype} and a {b.ctype}", loc)
        return self._mat_named(StructVal(vector_type(scalar, columns), {VECTOR_LANES[c]: self._mat_dot(
            [(self._mat_lane(a, va["fields"][r], scalar, loc), self._mat_lane(b, f"c{c}r{r}", scalar, loc))
             for r in range(rows)], scalar, loc) for c in range(columns)}))

    # -- constructors and functions --------------------------------------------------------------------------

    def matrix_construct(self, fn: str, ct: str, info: dict[str, Any], args: list[Any], loc: ir.Loc) -> StructVal:
        """`mat3()`, `mat3(s)` (s on the diagonal), `mat3(m)` (another matrix: glm keeps the common part and
        fills the rest from the identity), `mat3(c0, c1, c2)` (columns), `mat3(9 numbers)` (column after
        column)."""
        columns, rows = info["matrix"]
        scalar = info["scalar"]
        zero, one = S.const(0, scalar), S.const(1, scalar)
        if not args:
            return self._mat_build(scalar, columns, rows, lambda c, r: zero)
        if len(args) == 1 and not isinstance(args[0], StructVal):
            s = S.cast(self.data(args[0], loc), scalar)
            return self._mat_build(scalar, columns, rows, lambda c, r: s if c == r else zero)
        if len(args) == 1 and self.matrix_shape(args[0]) is not None:
            src = args[0]
            sc, sr = self.matrix_shape(src)
            return self._mat_build(scalar, columns, rows, lambda c, r: self._mat_lane(src, f"c{c}r{r}", scalar, loc)
                                if c < sc and r < sr else (one if c == r else zero))
        if len(args) == columns and all(isinstance(a, StructVal) for a in args):
            cols = [self.lanewise_info(a) for a in args]
            if any(ci is None or ci.get("matrix") or len(ci["fields"]) != rows for ci in cols):
                raise LiftError("XL2012", f"{fn} built from {', '.join(a.ctype for a in args)}", loc)
            return self._mat_build(scalar, columns, rows,
                                lambda c, r: self._mat_lane(args[c], cols[c]["fields"][r], scalar, loc))
        if len(args) == columns * rows and not any(isinstance(a, StructVal) for a in args):
            return self._mat_build(scalar, columns, rows,
                                lambda c, r: S.cast(self.data(args[c * rows + r], loc), scalar))
        raise LiftError("XL2012", f"{fn} with {len(args)} arguments", loc)

    def matrix_function(self, kind: str, fn: str, args: list[Any], loc: ir.Loc) -> Any:
        shapes = [self.matrix_shape(a) for a in args]
        if kind == "outer":  # outerProduct(c: vec<R>, r: vec<C>) -> mat<C, R>: [i][j] = c[j] * r[i]
            infos = [self.lanewise_info(a) for a in args]
            if len(args) != 2 or any(i is None or i.get("matrix") for i in infos):
                raise LiftError("XL2008", f"{fn} of {', '.join(getattr(a, 'ctype', 'a number') for a in args)}", loc)
            scalar = infos[0]["scalar"]
            return self._mat_build(scalar, len(infos[1]["fields"]), len(infos[0]["fields"]), lambda i, j: self._mat_op(
                "*", self._mat_lane(args[0], infos[0]["fields"][j], scalar, loc),
                self._mat_lane(args[1], infos[1]["fields"][i], scalar, loc), scalar, loc))
        want = 2 if kind == "compmult" else 1
        if len(args) != want or None in shapes:
            raise LiftError("XL2008", f"{fn} of {', '.join(getattr(a, 'ctype', 'a number') for a in args)}", loc)
        m = args[0]
        columns, rows = shapes[0]
        scalar = self._mat_scalar(m)
        if not ctyping.is_float(scalar) and kind in ("determinant", "inverse"):
            raise LiftError("XL2008", f"{fn} of a matrix of {scalar}", loc)

        def e(c: int, r: int) -> Sym:
            return self._mat_lane(m, f"c{c}r{r}", scalar, loc)

        def mul(x: Sym, y: Sym) -> Sym:
            return self._mat_op("*", x, y, scalar, loc)

        def sub(x: Sym, y: Sym) -> Sym:
            return self._mat_op("-", x, y, scalar, loc)

        def add(x: Sym, y: Sym) -> Sym:
            return self._mat_op("+", x, y, scalar, loc)

        def neg(x: Sym) -> Sym:
            return S.cast(S.op("neg", ctyping.promote(scalar), x), scalar)

        if kind == "transpose":
            return self._mat_build(scalar, rows, columns, lambda c, r: e(r, c))
        if kind == "compmult":
            if shapes[1] != shapes[0]:
                raise LiftError("XL2008", f"{fn} of a {m.ctype} and a {args[1].ctype}", loc)
            return self._mat_build(scalar, columns, rows, lambda c, r: mul(e(c, r), self._mat_lane(args[1], f"c{c}r{r}",
                                                                                             scalar, loc)))
        if columns != rows or columns not in (2, 3):
            raise LiftError("XL2008", f"{fn} of a {columns}x{rows} matrix (2x2 and 3x3 are lifted)", loc)
        if columns == 2:
            det = sub(mul(e(0, 0), e(1, 1)), mul(e(1, 0), e(0, 1)))
        else:  # glm: + m00 (m11 m22 - m21 m12) - m10 (m01 m22 - m21 m02) + m20 (m01 m12 - m11 m02)
            det = add(sub(mul(e(0, 0), sub(mul(e(1, 1), e(2, 2)), mul(e(2, 1), e(1, 2)))),
                          mul(e(1, 0), sub(mul(e(0, 1), e(2, 2)), mul(e(2, 1), e(0, 2))))),
                      mul(e(2, 0), sub(mul(e(0, 1), e(1, 2)), mul(e(1, 1), e(0, 2)))))
        if kind == "determinant":
            return det
        if kind != "inverse":
            raise LiftError("XL2008", f"{fn}", loc)
        inv = self._mat_op("/", S.const(1, scalar), det, scalar, loc)
        if columns == 2:
            cells = {(0, 0): mul(e(1, 1), inv), (0, 1): mul(neg(e(0, 1)), inv),
                     (1, 0): mul(neg(e(1, 0)), inv), (1, 1): mul(e(0, 0), inv)}
        else:  # glm's compute_inverse<3, 3>: each cofactor times 1 / determinant
            def cof(sign: int, p: tuple[int, int], q: tuple[int, int], s: tuple[int, int], t: tuple[int, int]) -> Sym:
                d = sub(mul(e(*p), e(*q)), mul(e(*s), e(*t)))
                return mul(d if sign > 0 else neg(d), inv)

            cells = {(0, 0): cof(1, (1, 1), (2, 2), (2, 1), (1, 2)), (1, 0): cof(-1, (1, 0), (2, 2), (2, 0), (1, 2)),
                     (2, 0): cof(1, (1, 0), (2, 1), (2, 0), (1, 1)), (0, 1): cof(-1, (0, 1), (2, 2), (2, 1), (0, 2)),
                     (1, 1): cof(1, (0, 0), (2, 2), (2, 0), (0, 2)), (2, 1): cof(-1, (0, 0), (2, 1), (2, 0), (0, 1)),
                     (0, 2): cof(1, (0, 1), (1, 2), (1, 1), (0, 2)), (1, 2): cof(-1, (0, 0), (1, 2), (1, 0), (0, 2)),
                     (2, 2): cof(1, (0, 0), (1, 1), (1, 0), (0, 1))}
        return self._mat_named(self._mat_build(scalar, columns, rows, lambda c, r: cells[(c, r)]))
