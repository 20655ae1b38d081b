"""Build a KernelUnit from a Python module holding @triton.jit kernels and their launchers (or any language
read with the Python grammar whose kernels are jit-decorated functions launched as `kernel[grid](...)`)."""

from __future__ import annotations

import tree_sitter as ts

from xlate.model import KernelUnit, LaunchSite, PyFunction, TritonKernel, TritonParam
from xlate.parse import languages
from xlate.parse.nodes import Source, annotation_above, file_annotation

JIT_DECORATORS = ("triton.jit", "jit", "triton.autotune", "triton.heuristics", "autotune", "heuristics")


def _params(src: Source, params: ts.Node) -> list[TritonParam]:
    out = []
    for p in params.named_children:
        if p.type in ("keyword_separator", "list_splat_pattern", "dictionary_splat_pattern"):
            break  # keyword-only launch options (a port's `*, grid`): not arguments of the kernel
        name, annotation, default = "", None, None
        if p.type == "identifier":
            name = src.text(p)
        elif p.type in ("typed_parameter", "typed_default_parameter", "default_parameter"):
            name_node = p.child_by_field_name("name") or next((c for c in p.named_children if c.type == "identifier"), None)
            name = src.text(name_node)
            type_node = p.child_by_field_name("type")
            annotation = src.text(type_node) if type_node is not None else None
            value = p.child_by_field_name("value")
            default = src.text(value) if value is not None else None
        else:
            continue
        constexpr = bool(annotation and annotation.replace(" ", "").endswith("constexpr"))
        out.append(TritonParam(name, annotation, constexpr, default))
    return out


def build_triton_unit(src: Source, root: ts.Node, language: str = "triton") -> KernelUnit:
    unit = KernelUnit(path=src.path, language=language, size_bytes=len(src.data))
    jit_names: set[str] = set()
    for m in languages.matches("python", "triton", root):
        if "decorated" in m:
            node = m["decorated"][0]
            decorators = [src.text(d).lstrip("@").strip() for d in node.named_children if d.type == "decorator"]
            if not any(d.split("(")[0].strip() in JIT_DECORATORS for d in decorators):
                continue
            name = src.text(m["name"][0])
            annotation, _, _ = annotation_above(src, node, "# xlate:")
            unit.triton_kernels.append(TritonKernel(name, decorators, _params(src, m["params"][0]), annotation, src.span(node)))
            jit_names.add(name)
    for m in languages.matches("python", "triton", root):
        if "function" in m:
            node = m["function"][0]
            annotation, _, _ = annotation_above(src, node, "# xlate:")
            params = [p.name for p in _params(src, m["params"][0])]
            unit.py_functions.append(PyFunction(src.text(m["name"][0]), params, [], annotation, src.span(node)))
    for m in languages.matches("python", "triton", root):
        if "launch" in m:
            call = m["launch"][0]
            name = src.text(m["kernel"][0])
            if name not in jit_names:
                continue
            sub = call.child_by_field_name("function")
            grid = src.text(sub.child_by_field_name("subscript")) if sub is not None else None
            args = [src.text(a) for a in m["args"][0].named_children if a.type != "comment"]
            owner = next((f for f in unit.py_functions if f.span.start_byte <= call.start_byte < f.span.end_byte), None)
            if owner is not None and name not in owner.launches:
                owner.launches.append(name)
            unit.launches.append(
                LaunchSite(name, "triton", [], grid, None, None, None, args, owner.name if owner else None, src.span(call))
            )
    launchers = [f for f in unit.py_functions if f.launches]
    if len(launchers) == 1 and launchers[0].annotation is None:
        # a one-launcher module may give its spec once, at the top of the file
        launchers[0].annotation, _ = file_annotation(src, root, "# xlate:")
    return unit
