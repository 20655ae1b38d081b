"""Merging one kernel's LLM port into another translation of the same file (the rule output, or other kernels'
LLM ports).

Triton: the port's module is appended (a module may hold several launchers); a rule definition of the same
launcher is dropped, and the port's other top-level names that clash with the base are renamed.
HIP/CUDA/AscendC: the port's kernel definition replaces the base's definition of that kernel (or goes before the
first host function); its includes are added once. A helper, macro or constant of the port that clashes with
one of the base's is dropped when identical, replaces the base's when only the replaced kernel used it (e.g. a
PTX helper the rules could not translate), and is renamed otherwise. Same for Triton modules.

The merged text is not what was verified: callers verify the kernel again in the merged file.
Limits: renaming is token-based (names inside strings are left alone); C renaming does not follow macros that
paste tokens together.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from xlate.translate.llm.context import Item, c_items


def _py_defs(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = node
    return out


def _drop_lines(text: str, spans: list[tuple[int, int]]) -> str:
    lines = text.splitlines(keepends=True)
    for first, last in sorted(spans, reverse=True):
        del lines[first - 1 : last]
    return "".join(lines)


def _rename_py(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    prev = None
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NAME and tok.string in names and not (prev is not None and prev.string == "."):
            edits.append((tok.start[0], tok.start[1], tok.end[1], names[tok.string]))
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            prev = tok
    for row, c0, c1, new in sorted(edits, reverse=True):
        ln = lines[row - 1]
        lines[row - 1] = ln[:c0] + new + ln[c1:]
    return "".join(lines)


def _used_elsewhere(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", text) is not None


def merge_triton(base: str, port: str, kernel: str, note: str) -> str:
    if not base.strip():
        return port
    base_defs = _py_defs(ast.parse(base))
    if kernel in base_defs:
        base = _drop_node(base, base_defs[kernel])
        base_defs = _py_defs(ast.parse(base))
    port_tree = ast.parse(port)
    clashes: dict[str, str] = {}
    for n in _py_defs(port_tree):
        if n not in base_defs or n == kernel:
            continue
        without = _drop_node(base, base_defs[n])
        if _used_elsewhere(n, without):
            clashes[n] = f"{n}__llm"  # the rest of the base still uses its own version
        else:
            base = without  # only the replaced launcher used it: the port's version takes its place
            base_defs = _py_defs(ast.parse(base))
    future = [(n.lineno, n.end_lineno or n.lineno) for n in port_tree.body
              if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    port = _rename_py(_drop_lines(port, future), clashes)
    return base.rstrip() + f"\n\n\n# {note}\n" + port.lstrip()


def _drop_node(text: str, node: ast.stmt) -> str:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return _drop_lines(text, [(first, node.end_lineno or node.lineno)])


def _rename_c(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"(?<![\w.])(?<!->)(?<!::)(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], text)


def merge_c(base: str, port: str, kernel: str, language: str, note: str) -> str:
    if not base.strip():
        return port
    b_items, p_items = c_items(base, language), c_items(port, language)
    base_includes = {n for it in b_items if it.kind == "include" for n in it.names}
    base_by_name = {n: it for it in b_items for n in it.names if it.kind != "include"}
    own = next((it for it in b_items if it.kind == "function" and kernel in it.names), None)
    clashes: dict[str, str] = {}
    drop: set[int] = set()
    removed: list[Item] = []  # base items only the replaced kernel used, superseded by the port's
    for it in p_items:
        if it.kind in ("include", "comment", "other"):
            continue
        for n in it.names:
            other = base_by_name.get(n)
            if other is None or other is own or n == kernel or other in removed:
                continue
            rest = "\n".join(b.text for b in b_items if b.kind != "comment" and b is not own and b is not other
                             and b not in removed)
            if other.text.strip() == it.text.strip():
                drop.add(id(it))
            elif _used_elsewhere(n, rest):
                clashes[n] = f"{n}__llm"
            else:
                removed.append(other)
    body = "\n\n".join(it.text for it in p_items
                       if it.kind not in ("include", "comment") and id(it) not in drop).strip()
    body = _rename_c(body, clashes)
    block = f"// {note}\n{body}\n"
    new_includes = [it.text.strip() for it in p_items if it.kind == "include" and not set(it.names) & base_includes]
    raw = base.encode("utf-8")
    edits: list[tuple[int, int, bytes]] = []  # in the base's byte offsets, applied from the end
    if own is not None:
        edits.append((own.start, own.end, block.rstrip("\n").encode()))
    else:
        host = next((it for it in b_items if it.kind == "function" and not _is_device(it.text)), None)
        at = host.start if host is not None else len(raw)
        edits.append((at, at, (b"\n" if at == len(raw) else b"") + block.encode() + b"\n"))
    for it in removed:
        end = it.end
        while raw[end : end + 1] == b"\n":  # and the blank lines after it
            end += 1
        edits.append((it.start, end, b""))
    if new_includes:
        last_inc = [it for it in b_items if it.kind == "include"]
        at = last_inc[-1].end if last_inc else 0
        lead = b"" if at == 0 or raw[at - 1 : at] == b"\n" else b"\n"
        edits.append((at, at, lead + "\n".join(new_includes).encode() + b"\n"))
    for start, end, new in sorted(edits, key=lambda e: e[0], reverse=True):
        raw = raw[:start] + new + raw[end:]
    return raw.decode("utf-8")


def _is_device(text: str) -> bool:
    head = text.split("{", 1)[0]
    return bool(re.search(r"\b(__global__|__device__|__aicore__)\b", head))


def merge(target: str, base: str, port: str, kernel: str, language: str, note: str) -> str:
    if target == "triton":
        return merge_triton(base, port, kernel, note)
    return merge_c(base, port, kernel, language, note)
