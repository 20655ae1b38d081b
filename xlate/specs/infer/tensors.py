"""Torch tensors in the host code of a PyTorch C++ extension, for the host interpreter (xlate/specs/infer/host.py).

A tensor (`at::Tensor`, `torch::Tensor`, `const at::Tensor&`, an optional one) is a value with a symbolic shape:
each dimension the code uses is a size of its own (a `param` root, bounded by the tensor's rank), its storage holds
the product of the dimensions, and its data pointer (`x.data_ptr<T>()`) points into that storage, so a kernel's
buffer argument gets its length as `cudaMalloc` sizes give theirs. Tensors made from another (`empty_like(x)`,
`zeros({n, d}, x.options())`) share or derive the shape; `TORCH_CHECK(x.size(1) == d)` ties the two values; a
dispatch macro's lambda runs with `scalar_t` bound to a type the gate can draw. The rank is the highest dimension
the code names (`x.size(2)`, `x.dim() == 3`, `x.packed_accessor32<T, 3, ...>()`); where it names none, the tensor
is one dimension of `numel` elements. Strides are those of a contiguous tensor; the origin says whether the code
checks that, makes it so, or neither. The API names and what they give are data (`torch` in
xlate/data/spec_inference.yaml)."""

from __future__ import annotations

import functools
import re
from typing import Any

import sympy as sp
import tree_sitter as ts

from xlate.resources import data
from xlate.specs.infer.ceval import _first_named
from xlate.specs.infer.program import text
from xlate.specs.infer.values import Alloc, Arr, Dim3, Num, Obj, Ptr, Tensor, Value
from xlate.specs.model import Origin, normalise_ctype


@functools.cache
def torch_api() -> dict[str, Any]:
    return data("spec_inference.yaml")["torch"]


def tensor_type(ptype: str, program_classes: dict[str, Any] | None = None) -> bool:
    """Whether a declared type is a torch tensor (through `const`, `&` and the optional wrappers)."""
    api = torch_api()
    t = " ".join(normalise_ctype(ptype).replace("&", " ").replace("const ", " ").split())
    for _ in range(2):
        m = re.fullmatch(r"([\w:]+)\s*<\s*(.+)\s*>", t)
        if m and m.group(1) in api["optional"]:
            t = m.group(2).strip()
    if t == "Tensor" and program_classes and "Tensor" in program_classes:
        return False  # the program's own class of that name
    return t in api["tensor_types"]


def _method_names(*keys: str) -> str:
    api = torch_api()
    return "|".join(re.escape(m) for k in keys for m in api[k])


def scan_rank(name: str, code: str) -> int | None:
    """The rank of tensor `name` that `code` shows: the highest dimension it names, or a rank it checks."""
    n = re.escape(name)
    via = rf"\b{n}\s*(?:(?:\.|->)\s*value\s*\(\s*\))?\s*(?:\.|->)\s*"
    exact = re.search(rf"{via}(?:{_method_names('rank')})\s*\(\s*\)\s*==\s*(\d+)", code)
    if exact:
        return int(exact.group(1))
    acc = re.search(rf"{via}(?:{_method_names('accessors')})\s*<[^,<>]+,\s*(\d+)", code)
    if acc:
        return int(acc.group(1))
    pos, neg = 0, 0  # the dimensions named from the front, and from the back
    for m in re.finditer(rf"{via}({_method_names('size', 'stride')})\s*\(\s*(-?\d+)\s*\)", code):
        i = int(m.group(2))
        # a stride read is of a dimension with more after it (the last one's is 1): a guess that over-sizes a
        # 1-D tensor's storage, never under-sizes it
        later = 1 if m.group(1) in torch_api()["stride"] else 0
        pos, neg = (max(pos, i + 1 + later), neg) if i >= 0 else (pos, max(neg, -i))
    for m in re.finditer(rf"{via}(?:{_method_names('sizes', 'strides')})\s*\(\s*\)\s*\[\s*(\d+)\s*\]", code):
        pos = max(pos, int(m.group(1)) + 1)
    rank = max(pos, neg + 1 if neg else 0)  # `x.size(-1)`: code for any leading dimensions (`[..., 3]`), one at least
    if re.search(rf"{via}(?:{_method_names('numel')})\s*\(\s*\)\s*/", code):
        rank = max(rank, pos + 1, 2)  # `x.numel() / n`: more dimensions than the ones named (`[N, ...]`)
    return rank or None


def _product(dims: list[sp.Expr]) -> sp.Expr:
    out: sp.Expr = sp.Integer(1)
    for d in dims:
        out = out * d
    return out


class TensorModel:
    """Methods of the host interpreter for torch tensors (mixed into HostInterpreter)."""

    ties: dict[sp.Symbol, sp.Expr]
    tensor_dims: set[sp.Symbol]
    tensors: list[Tensor]

    # -- making tensors -----------------------------------------------------------------------------------------
    def tensor_param(self, pname: str, where: str, fd: Any) -> Tensor:
        """A tensor the host function receives: its rank from what its body names, each dimension a size."""
        body = fd.node.child_by_field_name("body") if fd is not None else None
        rank = scan_rank(pname, text(body)) if body is not None else None
        how = f"parameter of {fd.name}" if fd is not None else "a tensor"
        return self._new_tensor(pname, rank, where, how)

    def _new_tensor(self, name: str, rank: int | None, where: str, how: str) -> Tensor:
        api = torch_api()
        hi = int(api["dim_hi"].get(rank or 1, api["dim_hi_more"]))
        dims: list[sp.Expr] = []
        for i in range(rank or 1):
            label = f"{name}_numel" if rank is None else f"{name}_size{i}"
            detail = (f"the number of elements of tensor {name} ({how})" if rank is None else
                      f"dimension {i} of tensor {name} ({how})")
            s = self.fresh(label, "param", where, detail=detail)  # type: ignore[attr-defined]
            self.roots[s].hi = hi  # type: ignore[attr-defined]
            self.tensor_dims.add(s)
            dims.append(s)
        t = Tensor(name, dims, Alloc(None, None, Origin("host", where, f"tensor {name}")), shaped=how,
                   ranked=rank is not None)
        self.tensors.append(t)
        return t

    def _shaped(self, name: str, dims_value: Value, where: str, how: str) -> Tensor:
        """A new tensor of the sizes a list gives (`{n, 3}`, `x.sizes()`), or one of unknown shape."""
        dims: list[sp.Expr] | None = None
        if isinstance(dims_value, Arr) and dims_value.items and all(
                isinstance(v, Num) and not v.flt for v in dims_value.items):
            dims = [v.e for v in dims_value.items]  # type: ignore[union-attr]
        elif isinstance(dims_value, Num) and not dims_value.flt:
            dims = [dims_value.e]
        if dims is None:
            return self._new_tensor(name, None, where, how)
        t = Tensor(name, dims, Alloc(None, None, Origin("host", where, f"tensor {name}")), shaped=how)
        self.tensors.append(t)
        return t

    def tensor_factory(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        """`torch::empty_like(x)`, `at::zeros({n, d}, x.options())`: a new tensor and its shape."""
        api = torch_api()
        parts = name.split("<")[0].split("::")
        base, ns = parts[-1], parts[:-1]
        where = self.where(node)  # type: ignore[attr-defined]
        label = _target_name(node)
        if base in api["like"] and (not ns or ns[-1] in api["namespaces"]) and args:
            src = self.ev(args[0], env)  # type: ignore[attr-defined]
            for a in args[1:]:
                self.ev(a, env)  # type: ignore[attr-defined]
            if isinstance(src, Tensor):
                return True, self._kept(Tensor(label, list(src.dims), Alloc(None, None, Origin(
                    "host", where, f"tensor {label}")), contiguous="made", shaped=f"{base}({src.name})",
                    ranked=src.ranked))
            return True, self._new_tensor(label, None, where, f"{base} of a tensor not followed")
        if base in api["shaped"] and ns and ns[-1] in api["namespaces"] and args:
            t = self._shaped(label, self.ev(args[0], env), where, text(node)[:80])  # type: ignore[attr-defined]
            t.contiguous = "made"
            return True, t
        return False, None

    def tensor_info(self, name: str, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        """`getTensorInfo<T, I>(x)`: a library struct holding a tensor's data pointer, sizes, strides (contiguous)
        and rank (xlate/data/library_types.yaml, pointer_records): an object of those members, the arrays'
        elements stored as a program's `info.sizes[0] = n` would store them."""
        call = name.split("<")[0].strip()
        found = next(((k, e) for k, e in (data("library_types.yaml").get("pointer_records") or {}).items()
                      if e.get("from_tensor") and (call in e["from_tensor"]["calls"]
                                                   or call.split("::")[-1] in e["from_tensor"]["calls"])), None)
        if found is None or not args:
            return False, None
        struct, entry = found
        t = self.ev(args[0], env)  # type: ignore[attr-defined]
        if not isinstance(t, Tensor):
            return False, None
        fn = node.child_by_field_name("function")
        while fn is not None and fn.type == "qualified_identifier":  # at::cuda::detail::getTensorInfo<T, I>
            fn = fn.child_by_field_name("name")
        targs = fn.child_by_field_name("arguments") if fn is not None and fn.type == "template_function" else None
        types = [normalise_ctype(self.frame.types.get(text(a), text(a))) for a in (targs.named_children if targs  # type: ignore[attr-defined]
                                                                                     is not None else [])]
        if len(types) < 2:
            return False, None
        elem, index = (self.program.resolve_type(x) for x in types[:2])  # type: ignore[attr-defined]
        if t.elem_size is None:
            t.elem_size = self.sizeof(elem)  # type: ignore[attr-defined]
            t.alloc.elem = elem
        self._storage(t)
        where = self.where(node)  # type: ignore[attr-defined]
        members = entry["from_tensor"]["fields"]
        obj = Obj(struct.split("::")[-1], {members["data"]: Ptr(t.alloc, sp.Integer(0), elem),
                   members["rank"]: Num(sp.Integer(len(t.dims)))})
        strides = [self._tied(_product(t.dims[i + 1:])) for i in range(len(t.dims))]
        for member, values in ((members["sizes"], [self._tied(d) for d in t.dims]), (members["strides"], strides)):
            ptr = Ptr(Alloc(None, index, Origin("host", where, f"{member} of tensor {t.name}")), elem=index)
            for i, v in enumerate(values):
                self._elements[(id(ptr.alloc), self._element_key(ptr, i))] = Num(sp.sympify(v))  # type: ignore[attr-defined]
            obj.env[member] = ptr
        self._note_strides(t)
        return True, obj

    # -- methods ------------------------------------------------------------------------------------------------
    def tensor_method(self, node: ts.Node, args: list[ts.Node], env: dict[str, Any]) -> tuple[bool, Value]:
        """`x.size(1)`, `x.data_ptr<float>()`, `x.contiguous()`... on a tensor; (False, None) on anything else."""
        fn = node.child_by_field_name("function")
        if fn is None or fn.type != "field_expression":
            return False, None
        field = fn.child_by_field_name("field")
        method = text(field.child_by_field_name("name") if field is not None and field.type == "template_method"
                      else field)
        api = torch_api()
        if method not in _all_methods():
            return False, None
        recv = fn.child_by_field_name("argument")
        if not _cheap(recv):
            return False, None
        t = self.ev(recv, env)  # type: ignore[attr-defined]
        if not isinstance(t, Tensor):
            return False, None
        vals = [self.ev(a, env) for a in args]  # type: ignore[attr-defined]
        idx = self.concrete(vals[0].e) if vals and isinstance(vals[0], Num) else None  # type: ignore[attr-defined]
        where = self.where(node)  # type: ignore[attr-defined]
        if method in api["data_pointer"]:
            targs = field.child_by_field_name("arguments") if field is not None and field.type == "template_method" else None
            first = _first_named(targs) if targs is not None else None
            elem = normalise_ctype(self.frame.types.get(text(first), text(first))) if first is not None else None  # type: ignore[attr-defined]
            if elem:
                elem = self.program.resolve_type(elem)  # type: ignore[attr-defined]
                if t.elem_size is None:
                    t.elem_size = self.sizeof(elem)  # type: ignore[attr-defined]
                    t.alloc.elem = elem
            self._storage(t)
            return True, Ptr(t.alloc, sp.Integer(0), elem)
        if method in api["size"]:
            return True, (Num(self._dim(t, idx)) if idx is not None else None)
        if method in api["sizes"]:
            return True, Arr([Num(self._tied(d)) for d in t.dims], 8)
        if method in api["stride"]:
            if idx is None:
                return True, None
            self._dim(t, idx)
            i = idx if idx >= 0 else len(t.dims) + idx
            self._note_strides(t)
            return True, Num(self._tied(_product(t.dims[i + 1:])))
        if method in api["strides"]:
            self._note_strides(t)
            return True, Arr([Num(self._tied(_product(t.dims[i + 1:]))) for i in range(len(t.dims))], 8)
        if method in api["numel"]:
            return True, Num(self._tied(_product(t.dims)))
        if method in api["rank"]:
            return True, Num(sp.Integer(len(t.dims)))
        if method in api["contiguous_check"]:
            t.contiguous = t.contiguous or "checked"
            self._storage(t)
            return True, Num(sp.Integer(1))
        if method in api["contiguous_make"]:
            t.contiguous = t.contiguous or "made"
            self._storage(t)
            return True, t
        if method in api["present"]:
            return True, Num(sp.Integer(1))
        if method in api["same_tensor"]:
            return True, t
        if method in api["copy"]:
            return True, self._kept(Tensor(t.name, list(t.dims), Alloc(None, None, Origin(
                "host", where, f"tensor {t.name}")), contiguous="made", shaped=f"a copy of {t.name}", ranked=t.ranked))
        if method in api["flatten"] and not vals:
            return True, Tensor(t.name, [_product(t.dims)], t.alloc, t.elem_size, t.contiguous, t.shaped)
        if method in api["reshape"] or method in api["new_shaped"]:
            shape = vals[0] if len(vals) == 1 else Arr(vals) if vals else None
            if isinstance(shape, Arr) and method in api["reshape"]:
                shape = Arr([self._minus_one(v, shape, t) for v in shape.items])
            new = self._shaped(t.name, shape, where, text(node)[:80])
            if method in api["reshape"]:
                new.alloc, new.elem_size, new.contiguous = t.alloc, t.elem_size, t.contiguous
            else:
                new.contiguous = "made"
            return True, new
        return True, None  # options(), scalar_type(), an accessor: nothing the spec needs

    def _kept(self, t: Tensor) -> Tensor:
        self.tensors.append(t)
        return t

    def _minus_one(self, v: Value, shape: Arr, t: Tensor) -> Value:
        """`view({-1, 3})`: the dimension the others leave of the tensor's elements."""
        if not isinstance(v, Num) or self.concrete(v.e) != -1:  # type: ignore[attr-defined]
            return v
        others = [x.e for x in shape.items if isinstance(x, Num) and self.concrete(x.e) != -1]  # type: ignore[attr-defined]
        if len(others) != len(shape.items) - 1:
            return None
        return Num(sp.cancel(_product(t.dims) / _product(others)))

    def _dim(self, t: Tensor, i: int) -> sp.Expr:
        """Dimension `i` (from the end where negative); one the rank did not foresee is a size of its own."""
        while i >= len(t.dims) or -i > len(t.dims):
            s = self.fresh(f"{t.name}_size{len(t.dims)}", "param", t.alloc.origin.where if t.alloc.origin else "",  # type: ignore[attr-defined]
                           detail=f"a further dimension of tensor {t.name}")
            self.roots[s].hi = int(torch_api()["dim_hi_more"])  # type: ignore[attr-defined]
            self.tensor_dims.add(s)
            if i >= 0:
                t.dims.append(s)
            else:
                t.dims.insert(0, s)
            self._storage(t)
        return self._tied(t.dims[i])

    def _note_strides(self, t: Tensor) -> None:
        t.shaped = t.shaped if "strides" in t.shaped else f"{t.shaped}; strides read"
        self._storage(t)

    def _storage(self, t: Tensor) -> None:
        """The storage's bytes (once the element type is known) and the origin that explains them."""
        if t.elem_size is not None:
            t.alloc.bytes = _product(t.dims) * t.elem_size
        shape = " x ".join(str(d) for d in t.dims)
        how = {"checked": "contiguous: the code checks it", "made": "contiguous: the code makes it so"}.get(
            t.contiguous, "assumed contiguous: the code neither checks nor makes it so")
        old = t.alloc.origin
        t.alloc.origin = Origin("host", old.where if old else "", f"tensor {t.name} [{shape}] ({t.shaped}); {how}")

    # -- checks, dispatch, ties ---------------------------------------------------------------------------------
    def torch_check(self, name: str, args: list[ts.Node], env: dict[str, Any]) -> bool:
        """`TORCH_CHECK(x.size(0) == n && y.sizes() == x.sizes(), ...)`: the equalities tie their two sides."""
        api = torch_api()
        base = name.split("::")[-1]
        if base in api["check_eq"] and len(args) >= 2:
            self._tie_nodes(args[0], args[1], env)
            return True
        if base not in api["checks"] or not args:
            return False
        self._tie_condition(args[0], env)
        self.ev(args[0], env)  # type: ignore[attr-defined]  # `x.is_contiguous()` marks x
        return True

    def _tie_condition(self, cond: ts.Node | None, env: dict[str, Any]) -> None:
        while cond is not None and cond.type in ("parenthesized_expression", "condition_clause"):
            cond = _first_named(cond)
        if cond is None or cond.type != "binary_expression":
            return
        op = text(cond.child_by_field_name("operator"))
        if op == "&&":
            self._tie_condition(cond.child_by_field_name("left"), env)
            self._tie_condition(cond.child_by_field_name("right"), env)
        elif op == "==":
            self._tie_nodes(cond.child_by_field_name("left"), cond.child_by_field_name("right"), env)
        elif op in ("<", "<=", ">", ">="):
            self._bound(op, cond.child_by_field_name("left"), cond.child_by_field_name("right"), env)

    def _bound(self, op: str, left: ts.Node | None, right: ts.Node | None, env: dict[str, Any]) -> None:
        """`TORCH_CHECK(k <= 100)`: a size the host function receives is drawn up to the bound it checks."""
        a, b = self.ev(left, env), self.ev(right, env)  # type: ignore[attr-defined]
        if op in (">", ">="):
            a, b, op = b, a, "<" if op == ">" else "<="
        if not (isinstance(a, Num) and isinstance(b, Num)) or a.flt or b.flt:
            return
        x, c = self._tied(a.e), self.concrete(b.e)  # type: ignore[attr-defined]
        root = self.roots.get(x) if isinstance(x, sp.Symbol) else None  # type: ignore[attr-defined]
        if root is None or root.kind != "param" or c is None or root.value is not None:
            return
        hi = c - 1 if op == "<" else c
        if hi >= 1 and (root.hi is None or hi < root.hi):
            root.hi = hi
            root.detail = f"{root.detail}; the code checks it is at most {hi}"

    def _tie_nodes(self, left: ts.Node | None, right: ts.Node | None, env: dict[str, Any]) -> None:
        a, b = self.ev(left, env), self.ev(right, env)  # type: ignore[attr-defined]
        if isinstance(a, Arr) and isinstance(b, Arr) and len(a.items) == len(b.items):
            for x, y in zip(a.items, b.items):
                if isinstance(x, Num) and isinstance(y, Num):
                    self.tie(x.e, y.e)
        elif isinstance(a, Num) and isinstance(b, Num) and not a.flt and not b.flt:
            self.tie(a.e, b.e)

    def tie(self, a: sp.Expr, b: sp.Expr) -> None:
        """Two values the program checks equal: a tensor's dimension becomes the other value from then on."""
        a, b = self._tied(sp.sympify(a)), self._tied(sp.sympify(b))
        if a == b:
            return
        if isinstance(a, sp.Symbol) and a in self.tensor_dims and a not in b.free_symbols:
            s, e = a, b
        elif isinstance(b, sp.Symbol) and b in self.tensor_dims and b not in a.free_symbols:
            s, e = b, a
        else:
            return
        self.ties = {k: v.xreplace({s: e}) for k, v in self.ties.items()}
        self.ties[s] = e

    def combine(self, op: str, a: Value, b: Value) -> Value:
        if op == "/" and isinstance(a, Num) and isinstance(b, Num) and not a.flt and not b.flt and (
                a.e.free_symbols & self.tensor_dims):
            self._shape_by_division(a.e, b.e)
            a, b = Num(self._tied(a.e)), Num(self._tied(b.e))
        return super().combine(op, a, b)  # type: ignore[misc]

    def _shape_by_division(self, num: sp.Expr, den: sp.Expr) -> None:
        """`x.numel() / (N * 3)` with N one of x's dimensions: the code counts items of 3 numbers, so x's last
        dimension is 3 (`[..., N, 3]`); a tensor of unknown rank divided by 4 holds a multiple of 4 elements. The
        count is then exact, and the buffer's length stays tied to it."""
        num, den = self._tied(num), self._tied(den)
        rest = sp.fraction(sp.cancel(num / den))[1]
        if not rest.is_Integer or int(rest) <= 1:
            return
        k = int(rest)
        for t in reversed(self.tensors):
            dims = [self._tied(d) for d in t.dims]
            if sp.expand(_product(dims) - num) != 0:
                continue
            last = dims[-1]
            if isinstance(last, sp.Symbol) and last in self.tensor_dims and last not in den.free_symbols:
                if t.ranked:
                    self.tie(last, sp.Integer(k))
                else:
                    s = self.fresh(f"{t.name}_items", "param", t.alloc.origin.where if t.alloc.origin else "",  # type: ignore[attr-defined]
                                   detail=f"the elements of tensor {t.name} over {k}: the code divides its numel by {k}")
                    self.roots[s].hi = int(torch_api()["dim_hi"][1]) // k or 1  # type: ignore[attr-defined]
                    self.tensor_dims.add(s)
                    self.tie(last, k * s)
            return

    def conditional(self, node: ts.Node, env: dict[str, Any]) -> Value:
        """`opt.has_value() ? opt->data_ptr<T>() : nullptr`, `a.has_value() ? nullptr : b.data_ptr<T>()`: which
        optional tensor is given is the spec's guess, not the program's fact, so the side with a buffer is taken
        (the kernel gets a buffer where the host may pass one)."""
        v = super().conditional(node, env)  # type: ignore[misc]
        cond = node.child_by_field_name("condition")
        if isinstance(v, Ptr) or cond is None or not re.search(
                rf"(?:\.|->)\s*(?:{_method_names('present')})\s*\(", text(cond)):
            return v
        yes, no = node.child_by_field_name("consequence"), node.child_by_field_name("alternative")
        for side, other in ((yes, no), (no, yes)):
            if side is not None and other is not None and text(other).strip() in ("nullptr", "NULL", "0"):
                p = self.ev(side, env)  # type: ignore[attr-defined]
                if isinstance(p, Ptr):
                    return p
        return v

    def _tied(self, e: sp.Expr) -> sp.Expr:
        return sp.sympify(e).xreplace(self.ties) if self.ties else e

    def dispatch_types(self, name: str) -> dict[str, str]:
        """The type names a dispatch macro's lambda sees (`scalar_t` for AT_DISPATCH_FLOATING_TYPES)."""
        for pattern, types in torch_api()["dispatch"]:
            if re.fullmatch(pattern, name.split("::")[-1]):
                return dict(types)
        return {}

    def tied_value(self, v: Value, memo: dict[int, Alloc]) -> Value:
        """`v` with the ties the checks made (the launch's view of a value computed before a check)."""
        if not self.ties:
            return v
        if isinstance(v, Num):
            return Num(self._tied(v.e), v.flt)
        if isinstance(v, Dim3):
            return Dim3(tuple(self._tied(d) for d in v.dims))  # type: ignore[arg-type]
        if isinstance(v, Ptr):
            a = v.alloc
            if id(a) not in memo:
                memo[id(a)] = a if a.bytes is None or not (a.bytes.free_symbols & set(self.ties)) else Alloc(
                    self._tied(a.bytes), a.elem, _with_ties(a.origin), a.copies, a.fill)
            return Ptr(memo[id(a)], self._tied(v.offset), v.elem)
        return v


def _with_ties(origin: Origin | None) -> Origin | None:
    if origin is None:
        return None
    return Origin(origin.kind, origin.where, f"{origin.detail}; dimensions tied by the code before the launch (its checks, its divisions)")


def _target_name(node: ts.Node) -> str:
    """The variable a new tensor is stored in (`auto out = torch::empty_like(x)`: out), else `tensor`."""
    up = node.parent
    while up is not None and up.type in ("parenthesized_expression", "cast_expression"):
        up = up.parent
    if up is not None and up.type == "init_declarator":
        d = up.child_by_field_name("declarator")
        while d is not None and d.type in ("reference_declarator", "pointer_declarator"):
            d = _first_named(d)
        if d is not None and d.type == "identifier":
            return text(d)
    if up is not None and up.type == "assignment_expression":
        left = up.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return text(left)
    return "tensor"


@functools.cache
def _all_methods() -> frozenset[str]:
    api = torch_api()
    keys = ("data_pointer", "size", "sizes", "stride", "strides", "numel", "rank", "contiguous_check",
            "contiguous_make", "present", "same_tensor", "copy", "reshape", "flatten", "new_shaped", "accessors")
    return frozenset(m for k in keys for m in api[k]) | {"options", "scalar_type", "dtype", "device", "is_cuda"}


def _cheap(node: ts.Node | None) -> bool:
    """A receiver that may be evaluated twice without running host code twice (a name, a member, a tensor
    method's result)."""
    if node is None:
        return False
    if node.type in ("identifier", "field_expression", "qualified_identifier", "this"):
        return True
    if node.type in ("parenthesized_expression", "pointer_expression"):
        return _cheap(_first_named(node) if node.type == "parenthesized_expression" else node.child_by_field_name("argument"))
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "field_expression":
            f = fn.child_by_field_name("field")
            name = text(f.child_by_field_name("name") if f is not None and f.type == "template_method" else f)
            return name in _all_methods() and _cheap(fn.child_by_field_name("argument"))
    return False

