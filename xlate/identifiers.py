"""How a C++ name is spelt as a Python identifier: one rule shared by the Triton emitter, which names a launcher
`k___half_` for the specialisation `k<__half>`, and the gate, which looks that launcher up by the C++ name. Kept
outside both so the gate does not import a translator."""

from __future__ import annotations

# names a generated module defines or imports, and Python keywords: a C++ name that spells one gets a trailing `_`
PY_RESERVED = frozenset({
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "tl", "triton", "torch", "range", "min",
    "max", "abs", "float", "int", "bool", "print", "len", "math", "libdevice", "os", "BX", "BY", "T", "match", "case",
    "type", "id", "sum", "list", "dict", "str",
    # the argument binder Triton's JIT generates for each kernel takes `**options` and reads these names from its
    # globals: a parameter spelt like one breaks the launch (`duplicate argument 'options'`) or the binding
    "options", "backend", "specialize_impl", "JITCallable", "params", "specialization", "grid", "warmup",
    "num_warps", "num_stages", "num_ctas",
})


def python_identifier(name: str) -> str:
    """`name` with every character other than a letter, digit or `_` made `_`; a leading digit gets `v_`, and a
    reserved name or one in the generator's private `_xl` namespace a trailing `_`."""
    n = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not n or n[0].isdigit():
        n = "v_" + n
    return n + "_" if n in PY_RESERVED or n.startswith("_xl") else n
