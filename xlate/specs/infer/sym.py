"""Symbolic integers for spec inference (SymPy): C integer division and ceil-division as functions SymPy keeps
intact, positive size symbols, and the printer that writes an expression in the spec language."""

from __future__ import annotations

import functools
from typing import Any

import sympy as sp


class FloorDiv(sp.Function):
    """C integer division of non-negative values."""

    is_integer = True
    nargs = 2

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr) -> sp.Expr | None:
        if b == 1:
            return a
        if a == 0:
            return sp.Integer(0)
        if a.is_Integer and b.is_Integer and b != 0:
            return sp.Integer(int(a) // int(b))
        if isinstance(a, FloorDiv) and a.args[1].is_Integer and b.is_Integer and int(a.args[1]) > 0 and int(b) > 0:
            return FloorDiv(a.args[0], a.args[1] * b)  # n / 2 / 8 / 8 is n / 128 (for n >= 0)
        q = sp.cancel(a / b)
        if _integer_polynomial(q):  # 4 * n / 2, and 64 * cdiv(n, 64) / 64 (an integer times the divisor)
            return sp.expand(q)
        lower = _minus_one(a, b)  # (k * b - 1) / b == k - 1: the last index of k rows of b
        if lower is not None:
            return lower
        c = sp.expand(a - b + 1)  # (n + b - 1) / b: the ceil-division idiom
        if sp.count_ops(c) < sp.count_ops(sp.expand(a)) and not c.is_negative:
            return CeilDiv(c, b)
        return None


class CeilDiv(sp.Function):
    """Ceiling division of non-negative values: `cdiv` in the spec language."""

    is_integer = True
    nargs = 2

    @classmethod
    def eval(cls, a: sp.Expr, b: sp.Expr) -> sp.Expr | None:
        if b == 1:
            return a
        if a == 0:
            return sp.Integer(0)
        if a.is_Integer and b.is_Integer and b != 0:
            return sp.Integer(-(-int(a) // int(b)))
        q = sp.cancel(a / b)
        if q.is_polynomial() and _integer_coefficients(q):
            return sp.expand(q)
        return None


class Log2(sp.Function):
    """`(int)log2(x)` of a positive integer: the floor of its base-2 logarithm (`log2` in the spec language, which
    reads 0 as 0)."""

    is_integer = True
    nargs = 1

    @classmethod
    def eval(cls, a: sp.Expr) -> sp.Expr | None:
        if a.is_Integer:
            return sp.Integer(int(a).bit_length() - 1 if int(a) > 0 else 0)
        return None


def _minus_one(a: sp.Expr, b: sp.Expr) -> sp.Expr | None:
    """(k * b - 1) / b for b >= 1: k - 1 (k an integer polynomial)."""
    a = sp.expand(a)
    if a.as_coeff_Add()[0] != -1:
        return None
    q = sp.cancel((a + 1) / b)
    if q.is_polynomial() and _integer_coefficients(q) and q.free_symbols:
        return sp.expand(q - 1)
    return None


def _integer_polynomial(q: sp.Expr) -> bool:
    """Whether `q` is a polynomial with integer coefficients in its symbols and its integer-valued function
    terms (`cdiv(n, 64)`, `n / 4`, `n % 3` stand for integers as symbols do)."""
    if q.is_polynomial() and _integer_coefficients(q):
        return True
    terms = [f for f in q.atoms(sp.Function) if f.is_integer]
    if not terms:
        return False
    flat = q.xreplace({f: sp.Dummy(integer=True) for f in terms})
    return flat.is_polynomial() and not flat.has(sp.Function) and _integer_coefficients(flat)


def _integer_coefficients(e: sp.Expr) -> bool:
    try:
        return all(c.is_Integer for c in sp.Poly(e).coeffs())
    except (sp.PolynomialError, sp.GeneratorsNeeded):
        return bool(e.is_Integer)


@functools.cache
def sym(name: str, nonneg: bool = True) -> sp.Symbol:
    return sp.Symbol(name, integer=True, nonnegative=True) if nonneg else sp.Symbol(name, integer=True)


def sizeof_symbol(ctype: str) -> sp.Symbol:
    """sizeof of a type only the fuzzer knows (a template parameter)."""
    return sp.Symbol(f"sizeof({ctype})", integer=True, positive=True)


def is_int_expr(e: Any) -> bool:
    return isinstance(e, sp.Expr) and not e.has(sp.Float) and not any(
        isinstance(a, sp.Rational) and not a.is_Integer for a in e.atoms(sp.Rational))


def concrete(e: Any) -> int | None:
    if isinstance(e, sp.Expr) and e.is_Integer:
        return int(e)
    if isinstance(e, sp.Expr) and e.is_number and e.is_finite:
        try:
            f = float(e)
        except (TypeError, ValueError, OverflowError):  # a number sympy cannot evaluate (floor of a huge power)
            return None
        return int(f) if f == int(f) else None
    return None


# -- printing ------------------------------------------------------------------------------------------------

_ADD, _MUL, _UNARY, _ATOM = 1, 2, 3, 4


def to_text(e: sp.Expr, names: dict[str, str] | None = None) -> str:
    """`e` in the spec language (C-like; `/` floors, `cdiv`, `min`, `max`)."""
    return _text(sp.sympify(e), names or {})[0]


def _paren(t: tuple[str, int], level: int) -> str:
    return f"({t[0]})" if t[1] < level else t[0]


def _text(e: sp.Expr, names: dict[str, str]) -> tuple[str, int]:
    if e.is_Integer:
        v = int(e)
        return (str(v), _ATOM) if v >= 0 else (str(v), _UNARY)
    if e.is_Rational:
        return f"{e.p} / {e.q}", _MUL
    if e.is_Float:
        return repr(float(e)), _ATOM
    if e.is_Symbol:
        name = str(e)
        return names.get(name, name), _ATOM
    if isinstance(e, CeilDiv):
        return f"cdiv({_text(e.args[0], names)[0]}, {_text(e.args[1], names)[0]})", _ATOM
    if isinstance(e, FloorDiv):
        a, b = _text(e.args[0], names), _text(e.args[1], names)
        return f"{_paren(a, _MUL)} / {_paren(b, _UNARY)}", _MUL
    if isinstance(e, sp.Mod):
        a, b = _text(e.args[0], names), _text(e.args[1], names)
        return f"{_paren(a, _UNARY)} % {_paren(b, _UNARY)}", _MUL
    if isinstance(e, Log2):
        return f"log2({_text(e.args[0], names)[0]})", _ATOM
    if isinstance(e, (sp.Min, sp.Max)):
        fn = "min" if isinstance(e, sp.Min) else "max"
        return f"{fn}({', '.join(_text(a, names)[0] for a in e.args)})", _ATOM
    if e.is_Add:
        terms = e.as_ordered_terms()
        out = ""
        for i, t in enumerate(terms):
            coeff, rest = t.as_coeff_Mul()
            negative = coeff.is_number and coeff < 0
            body = _text(-t if negative else t, names)
            piece = _paren(body, _ADD + (1 if negative and i == 0 else 0))
            if i == 0:
                out = ("-" + _paren(body, _MUL) if negative else piece)
            else:
                out += (" - " if negative else " + ") + (_paren(body, _MUL) if negative else piece)
        return out, _ADD
    if e.is_Mul:
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Rational and not coeff.is_Integer:
            num = _text(coeff.p * rest, names)
            return f"{_paren(num, _MUL)} / {coeff.q}", _MUL
        if coeff == -1:
            return "-" + _paren(_text(rest, names), _UNARY), _UNARY
        factors = [f for f in e.as_ordered_factors()]
        parts = [_paren(_text(f, names), _MUL + 1 if not f.is_Atom else _MUL) for f in factors]
        return " * ".join(parts), _MUL
    if e.is_Pow:
        base, exp = e.args
        if exp.is_Integer and 0 < int(exp) <= 4:
            b = _paren(_text(base, names), _ATOM)
            return " * ".join([b] * int(exp)), _MUL
        if exp.is_Integer and int(exp) < 0:
            return f"1 / {_paren(_text(base ** -exp, names), _ATOM)}", _MUL
        if base == 2 and not exp.is_number:  # `1 << lg`: a power of two of a size
            return f"(1 << {_paren(_text(exp, names), _ADD)})", _ATOM
    raise ValueError(f"cannot write {e} in the spec language")
