"""EMULATION ONLY: a NumPy interpreter for the subset of AscendC that xlate's templates generate.

This is not AscendC and not an NPU. It executes the generated C++ text statement by statement on the CPU, one
core (GetBlockIdx) after another, with the Unified Buffer as a byte array and the vector instructions as NumPy
float32 operations following their documented formulas. It exists to test that the generated tiling, per-core
split, tails and instruction sequences compute what the CUDA source computes; it cannot show hardware precision
(Exp, Div, ReduceSum order), pipe races or compiler behaviour. Its results are labelled "emulation" and never
count as verification: `EmulationResult.label` says so, and nothing in xlate turns it into a verdict.

What it enforces like the hardware would: 32-byte DataCopy lengths and UB operand alignment, the UB size of the
SoC, global-memory bounds of every copy (SetGlobalBuffer sizes and the real buffers), queue discipline (AllocTensor
needs a free buffer, DeQue needs an EnQue), and level-0 repeat limits. UB buffers are poisoned with NaN when taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tree_sitter as ts
from xlate.backends.ascendc_check import prepare_source
from xlate.backends.ascendc_soc import SocInfo, soc_info

from tests.emulator.cscalar import CNum, EmulationError, binop, convert, ctype_of, literal
from xlate.parse.frontend import parse_c
from xlate.parse.nodes import Source, walk

LABEL = "emulation (NumPy, CPU) -- not an NPU run, never a verification"


# -- AscendC objects -----------------------------------------------------------------------------------------------


@dataclass
class GmPtr:
    array: np.ndarray  # float32 1-D: the device buffer
    offset: int = 0


@dataclass
class GlobalTensor:
    array: np.ndarray | None = None
    base: int = 0
    size: int = 0

    def view(self, offset: int) -> GlobalTensor:
        return GlobalTensor(self.array, self.base + offset, self.size - offset)


@dataclass
class LocalTensor:
    ub: np.ndarray  # the whole UB, uint8
    offset: int  # bytes
    length: int  # elements
    dtype: Any = np.float32
    owner: Any = None  # the TQue slot, for FreeTensor

    def data(self, count: int) -> np.ndarray:
        if count > self.length:
            raise EmulationError(f"{count} elements from a LocalTensor of {self.length}")
        n = count * np.dtype(self.dtype).itemsize
        return self.ub[self.offset:self.offset + n].view(self.dtype)

    def sub(self, k: int) -> LocalTensor:
        return LocalTensor(self.ub, self.offset + k * np.dtype(self.dtype).itemsize, self.length - k, self.dtype, None)


@dataclass
class Pipe:
    ub: np.ndarray
    used: int = 0

    def alloc(self, nbytes: int, soc: SocInfo) -> int:
        start = -(-self.used // soc.align_bytes) * soc.align_bytes
        if start + nbytes > soc.ub_bytes:
            raise EmulationError(f"UB overflow: {start + nbytes} bytes of TPipe buffers, {soc.ub_bytes} on {soc.name}")
        self.used = start + nbytes
        return start


@dataclass
class Queue:
    slots: list[int] = field(default_factory=list)  # byte offsets
    slot_bytes: int = 0
    free: list[int] = field(default_factory=list)
    fifo: list[LocalTensor] = field(default_factory=list)
    pipe: Pipe | None = None


@dataclass
class TBuf:
    offset: int = -1
    nbytes: int = 0
    pipe: Pipe | None = None


@dataclass
class Obj:
    cls: str
    fields: dict[str, Any]


@dataclass
class Params:
    values: list[Any]


class _Return(Exception):
    pass


POISON = np.float32(np.nan)


# -- the interpreter -----------------------------------------------------------------------------------------------


@dataclass
class EmulationResult:
    outputs: dict[str, np.ndarray]
    block_dim: int
    ub_peak: int
    label: str = LABEL


class Emulator:
    def __init__(self, text: str, soc: str | None = None):
        data, _ = prepare_source(text)
        parsed = parse_c(data, "<emulated>", "cpp")
        self.src = Source("<emulated>", parsed.view)
        self.root = parsed.root
        if self.root.has_error:
            raise EmulationError("the source does not parse")
        self.soc = soc_info(soc)
        self.functions: dict[str, ts.Node] = {}
        self.classes: dict[str, ts.Node] = {}
        self.consts: dict[str, ts.Node] = {}
        self._index(self.root, [])
        self.ub_peak = 0
        self.stack: list[tuple[dict[str, Any], Obj | None, list[str]]] = []
        self.block = (0, 1)
        self.pipe_ub = np.zeros(0, np.uint8)
        self.queues: list[Queue] = []

    def t(self, n: ts.Node | None) -> str:
        return self.src.text(n)

    def _index(self, node: ts.Node, scope: list[str]) -> None:
        for c in node.named_children:
            if c.type == "namespace_definition":
                self._index(c.child_by_field_name("body"), [*scope, self.t(c.child_by_field_name("name"))])
            elif c.type == "class_specifier" and c.child_by_field_name("body") is not None:
                self.classes["::".join([*scope, self.t(c.child_by_field_name("name"))])] = c
            elif c.type == "function_definition":
                self.functions[self._fname(c)] = c
            elif c.type == "declaration" and "constexpr" in self.t(c).split("=")[0]:
                for d in c.children_by_field_name("declarator"):
                    if d.type == "init_declarator":
                        self.consts["::".join([*scope, self.t(d.child_by_field_name("declarator"))])] = c
            elif c.type in ("preproc_ifdef", "preproc_if", "linkage_specification", "declaration_list"):
                self._index(c, scope)

    def _fname(self, fn: ts.Node) -> str:
        d = fn.child_by_field_name("declarator")
        while d is not None and d.type != "function_declarator":
            d = d.child_by_field_name("declarator")
        return self.t(d.child_by_field_name("declarator")) if d is not None else ""

    # -- running ---------------------------------------------------------------------------------------------------

    def run(self, kernel: str, args: dict[str, Any], block_dim: int | None = None) -> EmulationResult:
        """Run `kernel` on every core of a launch of `block_dim` cores (default: the file's host choice).

        `args`: NumPy arrays for pointer parameters (written in place, float32), numbers for the others."""
        fn = self.functions.get(kernel)
        if fn is None:
            raise EmulationError(f"no kernel '{kernel}' in the source")
        params = self._params(fn)
        values = []
        for name, ctype in params:
            if name not in args:
                raise EmulationError(f"missing argument '{name}'")
            a = args[name]
            if isinstance(a, np.ndarray):
                if a.dtype != np.float32:
                    raise EmulationError(f"'{name}' must be float32")
                values.append(GmPtr(a.reshape(-1)))
            else:
                values.append(convert(a if not isinstance(a, (np.floating, np.integer)) else a.item(), ctype or "i32"))
        if block_dim is None:
            block_dim = self._host_block_dim(kernel, args)
        for idx in range(block_dim):
            self.block = (idx, block_dim)
            self.pipe_ub = np.zeros(self.soc.ub_bytes, np.uint8)
            self.queues = []
            self._call_function(fn, values, None)
            for q in self.queues:  # a core ends with its queues drained and every buffer handed back
                if q.fifo:
                    raise EmulationError(f"core {idx} ended with {len(q.fifo)} tensor(s) enqueued and never dequeued")
                if sorted(q.free) != sorted(q.slots):
                    raise EmulationError(f"core {idx} ended with {len(q.slots) - len(q.free)} queue buffer(s) never freed")
        outputs = {n: args[n] for n, _ in params if isinstance(args[n], np.ndarray)}
        return EmulationResult(outputs, block_dim, self.ub_peak)

    def _host_block_dim(self, kernel: str, args: dict[str, Any]) -> int:
        fn = self.functions.get(f"{kernel}_block_dim")
        if fn is None:
            return 1
        values = [convert(args[n], c or "i32") for n, c in self._params(fn)]
        self.block = (0, 1)
        r = self._call_function(fn, values, None)
        return int(r.v)

    def _params(self, fn: ts.Node) -> list[tuple[str, str | None]]:
        d = fn.child_by_field_name("declarator")
        while d is not None and d.type != "function_declarator":
            d = d.child_by_field_name("declarator")
        out = []
        plist = d.child_by_field_name("parameters") if d is not None else None
        for p in (plist.named_children if plist else []):
            if p.type != "parameter_declaration":
                continue
            name = self._declname(p.child_by_field_name("declarator"))
            out.append((name, ctype_of(self.t(p.child_by_field_name("type")))))
        return out

    def _declname(self, n: ts.Node | None) -> str:
        while n is not None and n.type not in ("identifier", "field_identifier"):
            nxt = n.child_by_field_name("declarator")
            n = nxt if nxt is not None else (n.named_children[0] if n.named_children else None)
        return self.t(n) if n is not None else ""

    def _call_function(self, fn: ts.Node, values: list[Any], obj: Obj | None) -> Any:
        frame: dict[str, Any] = {}
        for (name, ctype), v in zip(self._params(fn), values):
            frame[name] = convert(v, ctype) if ctype and isinstance(v, CNum) else v
        scope = self._scope_of(fn)
        self.stack.append((frame, obj, scope))
        try:
            self._exec(fn.child_by_field_name("body"))
        except _Return as r:
            return r.args[0] if r.args else None
        finally:
            self.stack.pop()
        return None

    def _scope_of(self, node: ts.Node) -> list[str]:
        names = []
        p = node.parent
        while p is not None:
            if p.type in ("namespace_definition", "class_specifier"):
                names.append(self.t(p.child_by_field_name("name")))
            p = p.parent
        return list(reversed(names))

    # -- statements --------------------------------------------------------------------------------------------------

    def _exec(self, node: ts.Node) -> None:
        t = node.type
        if t == "compound_statement":
            frame = self.stack[-1][0]
            saved = set(frame)
            for c in node.named_children:
                self._exec(c)
            for k in set(frame) - saved:  # block scope
                del frame[k]
        elif t == "declaration":
            self._declare(node)
        elif t == "expression_statement":
            if node.named_children:
                self._eval(node.named_children[0])
        elif t == "if_statement":
            cond = node.child_by_field_name("condition")
            c = self._eval(cond.named_children[0] if cond.type == "condition_clause" else cond)
            if self._truth(c):
                self._exec(node.child_by_field_name("consequence"))
            elif node.child_by_field_name("alternative") is not None:
                alt = node.child_by_field_name("alternative")
                self._exec(alt.named_children[0] if alt.type == "else_clause" else alt)
        elif t == "for_statement":
            frame = self.stack[-1][0]
            saved = set(frame)
            init = node.child_by_field_name("initializer")
            if init is not None:
                self._exec(init) if init.type == "declaration" else self._eval(init)
            while True:
                cond = node.child_by_field_name("condition")
                if cond is not None and not self._truth(self._eval(cond)):
                    break
                self._exec(node.child_by_field_name("body"))
                upd = node.child_by_field_name("update")
                if upd is not None:
                    self._eval(upd)
            for k in set(frame) - saved:
                del frame[k]
        elif t == "return_statement":
            raise _Return(self._eval(node.named_children[0]) if node.named_children else None)
        elif t in ("comment", "empty_statement"):
            return
        else:
            raise EmulationError(f"statement not emulated: {t}")

    def _truth(self, v: Any) -> bool:
        return bool(v.v) if isinstance(v, CNum) else bool(v)

    def _declare(self, node: ts.Node) -> None:
        type_text = self.t(node.child_by_field_name("type"))
        frame = self.stack[-1][0]
        for d in node.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                name = self._declname(d.child_by_field_name("declarator"))
                value_node = d.child_by_field_name("value")
                if value_node is not None and value_node.type == "initializer_list":
                    frame[name] = Params([self._eval(v) for v in value_node.named_children])
                    continue
                v = self._eval(value_node)
                ct = ctype_of(type_text)
                frame[name] = convert(v, ct) if ct and isinstance(v, CNum) else v
            else:
                frame[self._declname(d)] = self._new(type_text)

    def _new(self, type_text: str) -> Any:
        base = re.sub(r"<.*", "", type_text).replace("AscendC::", "").strip()
        if base == "TPipe":
            return Pipe(self.pipe_ub)
        if base in ("TQue", "TQueBind"):
            q = Queue()
            self.queues.append(q)
            return q
        if base == "TBuf":
            return TBuf()
        if base == "GlobalTensor":
            return GlobalTensor()
        if base == "LocalTensor":
            return None
        scope = self.stack[-1][2] if self.stack else []
        for i in range(len(scope), -1, -1):
            name = "::".join([*scope[:i], type_text.strip()])
            if name in self.classes:
                return self._instantiate(name)
        if ctype_of(type_text):
            return None
        raise EmulationError(f"type not emulated: {type_text}")

    def _instantiate(self, name: str) -> Obj:
        cls = self.classes[name]
        obj = Obj(name, {})
        for member in walk(cls.child_by_field_name("body")):
            if member.type == "field_declaration" and member.parent == cls.child_by_field_name("body"):
                type_text = self.t(member.child_by_field_name("type"))
                for d in member.children_by_field_name("declarator"):
                    if d.type in ("field_identifier", "identifier"):
                        obj.fields[self.t(d)] = self._new(type_text)
        return obj

    # -- expressions -----------------------------------------------------------------------------------------------

    def _lookup(self, name: str) -> Any:
        frame, obj, scope = self.stack[-1]
        if name in frame:
            return frame[name]
        if obj is not None and name in obj.fields:
            return obj.fields[name]
        if name in ("true", "false"):
            return CNum(int(name == "true"), "i32")
        if name == "nullptr":
            return None
        for i in range(len(scope), -1, -1):
            key = "::".join([*scope[:i], name])
            if key in self.consts:
                decl = self.consts[key]
                for d in decl.children_by_field_name("declarator"):
                    if self.t(d.child_by_field_name("declarator")) == name.split("::")[-1]:
                        v = self._eval(d.child_by_field_name("value"))
                        ct = ctype_of(self.t(decl.child_by_field_name("type")))
                        return convert(v, ct) if ct else v
        raise EmulationError(f"unknown name '{name}'")

    def _assign_name(self, node: ts.Node, value: Any) -> None:
        frame, obj, _ = self.stack[-1]
        if node.type == "field_expression":
            target = self._eval(node.child_by_field_name("argument"))
            name = self.t(node.child_by_field_name("field"))
        else:
            target, name = None, self.t(node)
        if target is None:
            if name in frame:
                old = frame[name]
                frame[name] = convert(value, old.t) if isinstance(old, CNum) and isinstance(value, CNum) else value
                return
            target = obj
        if isinstance(target, Obj) and name in target.fields:
            old = target.fields[name]
            ct = self._member_type(target, name)
            target.fields[name] = convert(value, ct) if ct and isinstance(value, CNum) else value
            return
        raise EmulationError(f"assignment to unknown '{self.t(node)}'")

    def _member_type(self, obj: Obj, name: str) -> str | None:
        cls = self.classes[obj.cls]
        for member in cls.child_by_field_name("body").named_children:
            if member.type == "field_declaration":
                for d in member.children_by_field_name("declarator"):
                    if self.t(d) == name:
                        return ctype_of(self.t(member.child_by_field_name("type")))
        return None

    def _eval(self, node: ts.Node | None) -> Any:
        if node is None:
            raise EmulationError("missing expression")
        t = node.type
        if t == "number_literal":
            return literal(self.t(node))
        if t in ("true", "false"):
            return CNum(int(t == "true"), "i32")
        if t == "null" or self.t(node) == "nullptr":
            return None
        if t == "identifier":
            return self._lookup(self.t(node))
        if t == "qualified_identifier":
            text = self.t(node)
            if text.startswith("AscendC::"):
                return text  # enum values (TPosition, HardEvent): only passed along
            return self._lookup(text)
        if t == "this":
            return self.stack[-1][1]
        if t == "parenthesized_expression":
            return self._eval(node.named_children[0])
        if t == "field_expression":
            obj = self._eval(node.child_by_field_name("argument"))
            name = self.t(node.child_by_field_name("field"))
            if isinstance(obj, Obj) and name in obj.fields:
                return obj.fields[name]
            raise EmulationError(f"unknown member '{self.t(node)}'")
        if t == "binary_expression":
            op = self.t(node.child_by_field_name("operator"))
            a = self._eval(node.child_by_field_name("left"))
            if op in ("&&", "||"):
                if (op == "&&") != self._truth(a):
                    return CNum(int(op == "||"), "i32")
                return CNum(int(self._truth(self._eval(node.child_by_field_name("right")))), "i32")
            b = self._eval(node.child_by_field_name("right"))
            if isinstance(a, GmPtr) and op == "+" and isinstance(b, CNum):
                return GmPtr(a.array, a.offset + int(b.v))
            return binop(op, a, b)
        if t == "unary_expression":
            op = self.t(node.child_by_field_name("operator"))
            v = self._eval(node.child_by_field_name("argument"))
            if op == "-":
                return convert(CNum(-v.v, v.t), v.t) if not v.is_float else CNum(-v.v, v.t)
            if op == "!":
                return CNum(int(not self._truth(v)), "i32")
            if op == "+":
                return v
            raise EmulationError(f"operator {op} not emulated")
        if t == "update_expression":
            arg = node.child_by_field_name("argument")
            v = self._eval(arg)
            op = "+" if "++" in self.t(node) else "-"
            self._assign_name(arg, binop(op, v, CNum(1, "i32")))
            return v
        if t == "assignment_expression":
            left = node.child_by_field_name("left")
            op = self.t(node.child_by_field_name("operator"))
            v = self._eval(node.child_by_field_name("right"))
            if op != "=":
                v = binop(op[:-1], self._eval(left), v)
            self._assign_name(left, v)
            return v
        if t == "conditional_expression":
            c = self._eval(node.child_by_field_name("condition"))
            return self._eval(node.child_by_field_name("consequence" if self._truth(c) else "alternative"))
        if t == "cast_expression":
            v = self._eval(node.child_by_field_name("value"))
            type_text = self.t(node.child_by_field_name("type"))
            if isinstance(v, GmPtr):
                if not re.fullmatch(r"\s*float\s*\*\s*", type_text):
                    raise EmulationError(f"GM pointer cast to '{type_text}' not emulated (float only)")
                return v
            ct = ctype_of(type_text)
            return convert(v, ct) if ct else v
        if t == "sizeof_expression":
            ct = ctype_of(self.t(node.child_by_field_name("type")))
            if ct is None:
                raise EmulationError(f"sizeof not emulated: {self.t(node)}")
            return CNum(int(ct[1:]) // 8, "u64")
        if t == "subscript_expression":
            base = self._eval(node.child_by_field_name("argument"))
            idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
            inner = idx.named_children[0] if idx is not None and idx.type == "subscript_argument_list" else idx
            k = int(self._eval(inner).v)
            if isinstance(base, GlobalTensor):
                return base.view(k)
            if isinstance(base, LocalTensor):
                return base.sub(k)
            raise EmulationError(f"subscript of {type(base).__name__}")
        if t == "call_expression":
            return self._call(node)
        raise EmulationError(f"expression not emulated: {t} '{self.t(node)[:40]}'")

    def _call(self, node: ts.Node) -> Any:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        arg_nodes = [a for a in (args_node.named_children if args_node else []) if a.type != "comment"]
        if fn.type == "template_function" and self.t(fn.child_by_field_name("name")) == "static_cast":
            ct = ctype_of(self.t(fn.child_by_field_name("arguments"))[1:-1])
            v = self._eval(arg_nodes[0])
            return convert(v, ct) if ct else v
        if fn.type == "field_expression":
            obj = self._eval(fn.child_by_field_name("argument"))
            method = re.sub(r"<.*", "", self.t(fn.child_by_field_name("field")))
            args = [self._eval(a) for a in arg_nodes]
            return self._method(obj, method, args)
        name = re.sub(r"<.*", "", self.t(fn))
        args = [self._eval(a) for a in arg_nodes]
        short = name.split("::")[-1]
        if name.startswith("AscendC::") or short in API:
            return self._api(short, args, node)
        obj = self.stack[-1][1] if self.stack else None
        if obj is not None and "::" not in name:  # an unqualified call in a method: this->name(...)
            for m in self.classes[obj.cls].child_by_field_name("body").named_children:
                if m.type == "function_definition" and self._fname(m) == short:
                    return self._call_function(m, args, obj)
        if short in self.functions:
            return self._call_function(self.functions[short], args, None)
        raise EmulationError(f"call not emulated: {name}")

    def _method(self, obj: Any, method: str, args: list[Any]) -> Any:
        if isinstance(obj, Obj):
            cls = self.classes[obj.cls]
            for m in cls.child_by_field_name("body").named_children:
                if m.type == "function_definition" and self._fname(m) == method:
                    return self._call_function(m, args, obj)
            raise EmulationError(f"no method {obj.cls}::{method}")
        if isinstance(obj, Pipe):
            if method == "InitBuffer":
                if isinstance(args[0], Queue):
                    q, num, nbytes = args[0], int(args[1].v), int(args[2].v)
                    q.pipe, q.slot_bytes = obj, nbytes
                    q.slots = [obj.alloc(nbytes, self.soc) for _ in range(num)]
                    q.free = list(q.slots)
                else:
                    b, nbytes = args[0], int(args[1].v)
                    b.offset, b.nbytes, b.pipe = obj.alloc(nbytes, self.soc), nbytes, obj
                self.ub_peak = max(self.ub_peak, obj.used)
                return None
            if method == "FetchEventID":
                return CNum(0, "i32")
        if isinstance(obj, Queue):
            if method == "AllocTensor":
                if not obj.free:
                    raise EmulationError("AllocTensor on a queue with no free buffer (a FreeTensor is missing)")
                off = obj.free.pop(0)
                t = LocalTensor(self.pipe_ub, off, obj.slot_bytes // 4, np.float32, (obj, off))
                t.data(t.length)[:] = POISON
                return t
            if method == "EnQue":
                obj.fifo.append(args[0])
                return None
            if method == "DeQue":
                if not obj.fifo:
                    raise EmulationError("DeQue on an empty queue (an EnQue is missing)")
                return obj.fifo.pop(0)
            if method == "FreeTensor":
                t = args[0]
                if t is None or t.owner is None or t.owner[0] is not obj or t.owner[1] in obj.free:
                    raise EmulationError("FreeTensor of a tensor this queue did not allocate (or freed twice)")
                obj.free.append(t.owner[1])
                return None
        if isinstance(obj, TBuf) and method == "Get":
            if obj.pipe is None:
                raise EmulationError("TBuf::Get before InitBuffer")
            t = LocalTensor(self.pipe_ub, obj.offset, obj.nbytes // 4)
            return t
        if isinstance(obj, GlobalTensor) and method == "SetGlobalBuffer":
            ptr, size = args[0], int(args[1].v) if len(args) > 1 else None
            if not isinstance(ptr, GmPtr):
                raise EmulationError("SetGlobalBuffer without a GM pointer")
            obj.array, obj.base = ptr.array, ptr.offset
            obj.size = size if size is not None else len(ptr.array) - ptr.offset
            return None
        if isinstance(obj, LocalTensor) and method == "GetValue":
            return CNum(float(obj.sub(int(args[0].v)).data(1)[0]), "f32")
        raise EmulationError(f"method not emulated: {type(obj).__name__}.{method}")

    # -- AscendC API -------------------------------------------------------------------------------------------------

    def _api(self, name: str, args: list[Any], node: ts.Node) -> Any:
        if name == "GetBlockIdx":
            return CNum(self.block[0], "i64")
        if name == "GetBlockNum":
            return CNum(self.block[1], "i64")
        if name in ("SetFlag", "WaitFlag", "PipeBarrier"):
            return None  # one core at a time, in order: synchronisation has nothing to do here
        if name == "DataCopy":
            return self._copy(args[0], args[1], int(args[2].v), pad=None)
        if name == "DataCopyPad":
            if not self.soc.datacopy_pad:
                raise EmulationError(f"DataCopyPad does not exist on {self.soc.name}")
            p = args[2]
            if not isinstance(p, Params) or int(p.values[0].v) != 1:
                raise EmulationError("DataCopyPad emulated for blockCount == 1 only")
            nbytes = int(p.values[1].v)
            if nbytes % 4:
                raise EmulationError("DataCopyPad of a partial float")
            return self._copy(args[0], args[1], nbytes // 4, pad=True)
        fn = API.get(name)
        if fn is None:
            raise EmulationError(f"AscendC API not emulated: {name}")
        return fn(self, args)

    def _copy(self, dst: Any, src: Any, count: int, pad: bool | None) -> None:
        if pad is None and (count * 4) % self.soc.align_bytes:
            raise EmulationError(f"DataCopy of {count} floats: not whole {self.soc.align_bytes}-byte blocks")
        if isinstance(dst, LocalTensor) and isinstance(src, GlobalTensor):
            self._check_ub(dst)
            g = self._gm(src, count)
            dst.data(count)[:] = g
        elif isinstance(dst, GlobalTensor) and isinstance(src, LocalTensor):
            self._check_ub(src)
            self._gm(dst, count)[:] = src.data(count)
        else:
            raise EmulationError("DataCopy between these operands is not emulated")

    def _gm(self, g: GlobalTensor, count: int) -> np.ndarray:
        if g.array is None:
            raise EmulationError("GlobalTensor used before SetGlobalBuffer")
        if count > g.size or g.base < 0 or g.base + count > len(g.array):
            raise EmulationError(f"global-memory access [{g.base}, {g.base + count}) outside the buffer "
                                 f"(SetGlobalBuffer size {g.size}, allocation {len(g.array)})")
        return g.array[g.base:g.base + count]

    def _check_ub(self, t: LocalTensor) -> None:
        if t.offset % self.soc.align_bytes:
            raise EmulationError(f"UB operand at byte {t.offset}: not {self.soc.align_bytes}-byte aligned")


# Vector instructions (level 2: the first `count` elements), as the formulas of their API reference.
def _tensor_args(em: Emulator, args: list[Any], n_tensors: int) -> tuple[list[np.ndarray], list[Any], int]:
    count = int(args[-1].v)
    if len(args) > n_tensors + 2:
        raise EmulationError("level-0 (mask/repeat) forms are not emulated")
    ts_ = args[:n_tensors]
    for t in ts_:
        if not isinstance(t, LocalTensor):
            raise EmulationError("a vector operand is not a LocalTensor")
        em._check_ub(t)
    return [t.data(count) for t in ts_], args[n_tensors:-1], count


def _unary(f):
    def run(em: Emulator, args: list[Any]) -> None:
        (dst, src), _, _ = _tensor_args(em, args, 2)
        with np.errstate(all="ignore"):
            dst[:] = f(src.astype(np.float32)).astype(np.float32)
    return run


def _binary(f):
    def run(em: Emulator, args: list[Any]) -> None:
        (dst, a, b), _, _ = _tensor_args(em, args, 3)
        with np.errstate(all="ignore"):
            dst[:] = f(a.copy(), b.copy()).astype(np.float32)
    return run


def _scalar(f):
    def run(em: Emulator, args: list[Any]) -> None:
        (dst, src), (s,), _ = _tensor_args(em, args, 2)
        with np.errstate(all="ignore"):
            dst[:] = f(src.copy(), np.float32(s.v)).astype(np.float32)
    return run


def _duplicate(em: Emulator, args: list[Any]) -> None:
    (dst,), (s,), _ = _tensor_args(em, args, 1)
    dst[:] = np.float32(s.v)


def _reduce(kind: str):
    def run(em: Emulator, args: list[Any]) -> None:
        dst, src, work = args[0], args[1], args[2]
        count = int(args[3].v)
        for t in (dst, src, work):
            em._check_ub(t)
        per_repeat = em.soc.repeat_bytes // 4
        per_block = em.soc.align_bytes // 4
        repeats = -(-count // per_repeat)
        need = -(-repeats // per_block) * per_block  # one partial per repeat, in whole 32-byte blocks
        if work.length < need:
            raise EmulationError(f"{kind} work buffer of {work.length} elements, the reference needs {need}")
        x = src.data(count)
        dst.data(1)[0] = np.max(x) if kind == "ReduceMax" else np.sum(x, dtype=np.float32)
    return run


API = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _binary(np.divide),
    "Max": _binary(np.maximum), "Min": _binary(np.minimum),
    "Adds": _scalar(np.add), "Muls": _scalar(np.multiply),
    "Maxs": _scalar(lambda x, s: np.where(x > s, x, s)),  # dst = src > scalar ? src : scalar
    "Mins": _scalar(lambda x, s: np.where(x < s, x, s)),  # dst = src < scalar ? src : scalar
    "LeakyRelu": _scalar(lambda x, s: np.where(x < 0, s * x, x)),  # dst = src < 0 ? scalar * src : src
    "Exp": _unary(np.exp), "Ln": _unary(np.log), "Abs": _unary(np.abs), "Sqrt": _unary(np.sqrt),
    "Rsqrt": _unary(lambda x: 1 / np.sqrt(x)), "Reciprocal": _unary(lambda x: 1 / x),
    "Relu": _unary(lambda x: np.where(x < 0, np.float32(0), x)),  # dst = src < 0 ? 0 : src
    "Duplicate": _duplicate,
    "ReduceMax": _reduce("ReduceMax"), "ReduceSum": _reduce("ReduceSum"),
}


def emulate(text: str, kernel: str, args: dict[str, Any], soc: str | None = None, block_dim: int | None = None) -> EmulationResult:
    """EMULATION: run `kernel` of the AscendC source `text` on NumPy arrays (see the module docstring)."""
    return Emulator(text, soc).run(kernel, args, block_dim)
