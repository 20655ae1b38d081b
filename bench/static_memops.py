"""Static memory traffic of Triton ports, CPU only (issue #16): each port's one-block-per-program kernel is compiled
for an H200 (sm_90, Triton's bundled ptxas; no GPU needed) and its PTX global memory instructions are counted
(`ld.global`, `st.global`, `atom.global`/`red.global`) with its barriers (`bar.sync`: a block reduction, a
masked loop's test), its memory fences (`fence.*`/`membar.*`) and its acquire-release atomics, and in the machine
code (Triton's bundled nvdisasm) the memory barriers (`MEMBAR`, `CCTL`, `FENCE`) an atomic's order costs, and the `tl.load`/`tl.store` calls of the Python text beside them. A count is per program (one CUDA block) of the kernel's straight-line code: a load
in a loop counts once. Two runs of the same kernels before and after a lifter change show what it removed.

    python bench/static_memops.py PORT.py [PORT.py ...] [--aligned] [--json OUT]

Without --aligned, pointers have no known alignment and every load is per element (`ld.global.b32`); with it
they are 16-byte aligned as the JIT assumes for torch tensors, and a contiguous block load is counted as the
vector instructions it becomes (one `ld.global.v4.b32` for four floats). Rows measured so say `"aligned": true`.

Parameter types come from the port's `# xlate:` spec lines (`name: in[...] as int32`; no `as`: float32 for a
buffer, int32 for a scalar). A template type the launcher takes from a buffer's dtype is that buffer's type; a
kernel with another constexpr is reported, not built."""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

TRITON_TYPES = {"float32": "fp32", "float64": "fp64", "float16": "fp16", "bfloat16": "bf16", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                "uint64": "u64", "bool": "i1"}

# a subprocess script's first part (bench/sass_compare.py uses it too): argv PORT KERNEL SIGNATURE CONSTEXPRS ALIGNED
# NUM_WARPS -> `ck`, the kernel compiled for sm_90
BUILD = r'''
import importlib.util, json, re, sys
import triton
import triton.backends.nvidia
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

path, name, sig, dims, aligned = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5] == "1"
warps = int(sys.argv[6]) if len(sys.argv) > 6 else 4
# --aligned: pointers 16-byte aligned, as the JIT specialises a launch on torch tensors (vector loads need it)
attrs = {(i,): [["tt.divisibility", 16]] for i, v in enumerate(sig.values()) if aligned and v.startswith("*")}
spec = importlib.util.spec_from_file_location("port", path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
sig = {k: ("constexpr" if k in dims else v) for k, v in sig.items()}
dims = {k: (getattr(tl, v[len("dtype:"):]) if str(v).startswith("dtype:") else v) for k, v in dims.items()}
ck = triton.compile(ASTSource(fn=getattr(m, name), signature=sig, constexprs=dims, attrs=attrs),
                    target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
'''

COMPILE = BUILD + r'''
ptx = ck.asm["ptx"]
out = {}
for kind in ("ld.global", "st.global", "atom.global", "red.global"):
    out[kind] = len(re.findall(re.escape(kind) + r"[.\w]*\s", ptx))
out["bar.sync"] = len(re.findall(r"\bbar\.sync\b", ptx))
out["fence"] = len(re.findall(r"^\s*(?:@%p\d+\s+)?(?:fence|membar)\.", ptx, re.M))  # memory fences (an atomic's order)
out["atom.acq_rel"] = len(re.findall(r"\b(?:atom|red)\.[.\w]*acq_rel", ptx))
out["ptx_lines"] = ptx.count("\n")
# the machine code (Triton's bundled nvdisasm): an acquire-release atomic is one PTX instruction but memory
# barriers around it in SASS (MEMBAR, cache invalidations CCTL); a relaxed one is the atomic alone
import os, subprocess, tempfile
nvdisasm = os.path.join(os.path.dirname(triton.backends.nvidia.__file__), "bin", "nvdisasm")
if os.path.exists(nvdisasm) and ck.asm.get("cubin"):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(ck.asm["cubin"])
        f.flush()
        sass = subprocess.run([nvdisasm, f.name], capture_output=True, text=True).stdout
    for op, rx in (("MEMBAR", r"MEMBAR"), ("CCTL", r"CCTL"), ("FENCE", r"FENCE"), ("ATOM", r"ATOMG?"),
                   ("RED", r"REDG?"), ("BAR", r"BAR")):
        out["sass." + op] = len(re.findall(r"\b" + rx + r"\b", sass))
print(json.dumps(out))
'''


BLOCK_DIMS = ("BX", "BY")  # the block's lane extents: constexprs the launcher passes (BY: a 2-D block)


def spec_types(text: str) -> dict[str, str]:
    """Parameter -> Triton signature type, from the port's `# xlate:` lines."""
    from xlate.specs.language import parse_items

    lines = [ln[len("# xlate:"):].strip() for ln in text.splitlines() if ln.startswith("# xlate:")]
    out: dict[str, str] = {}
    items = parse_items(" ".join(lines)) if lines else {}
    for name, value in items.items():
        m = re.search(r"\bas\s+(\w+)", value)
        dtype = TRITON_TYPES.get(m.group(1), "") if m else ""
        buffer = re.match(r"\s*(in|out|inout)\s*\[", value) is not None
        out[name] = ("*" + (dtype or "fp32")) if buffer else (dtype or "i32")
    # a scalar the launcher hands over as a one-element tensor, of a named type (a float64 scalar: `x =
    # torch.full((1,), x, dtype=torch.float64, ...)`) or of a buffer's (a template scalar: `dtype=a.dtype`)
    boxed = r"^\s*(\w+) = torch\.full\(\(1,\), \1, dtype=(?:torch\.(\w+)|(\w+)\.dtype)"
    for name, dtype, buf in re.findall(boxed, text, re.M):
        ptr = "*" + TRITON_TYPES[dtype] if dtype in TRITON_TYPES else out.get(buf.rstrip("_"), "")
        if name in out and ptr.startswith("*"):
            out[name] = ptr
    return out


def template_types(text: str, params: list[str], types: dict[str, str], py_to_spec: dict[str, str]) -> dict[str, str]:
    """Template type constexprs the launcher takes from a buffer's dtype (`T_ = _TL_DTYPES[a.dtype]`): that
    buffer's spec type (float32 where the spec names none)."""
    names = {v: k for k, v in TRITON_TYPES.items()}
    out = {}
    for p in params:
        m = re.search(rf"^\s*{re.escape(p)} = _TL_DTYPES\[(\w+)\.dtype\]", text, re.M)
        buf = types.get(py_to_spec.get(m.group(1), m.group(1)), "") if m else ""
        if buf.startswith("*") and buf[1:] in names:
            out[p] = "dtype:" + names[buf[1:]]
    return out


def constexpr_defaults(fn: ast.FunctionDef) -> dict[str, Any]:
    """The kernel's constexpr parameters with a literal default (a launch configuration's knob, such as the
    pipelining stages of launch_configs.py): built at that default, as a launch that does not set them."""
    args = fn.args.args
    out: dict[str, Any] = {}
    for a, d in zip(args[len(args) - len(fn.args.defaults):], fn.args.defaults):
        if a.annotation is not None and "constexpr" in ast.unparse(a.annotation) and isinstance(d, ast.Constant):
            out[a.arg] = d.value
    return out


def kernels(text: str) -> list[ast.FunctionDef]:
    return [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name.endswith("_kernel")
            and n.name.startswith("_")]


def block_size(text: str, fn: str, dim: str = "BX") -> int | None:
    m = re.search(rf"{re.escape(fn)}\[[^\]]*\]\([^\n]*\b{dim}=(\d+)", text)
    return int(m.group(1)) if m else None


def measure(path: Path, aligned: bool = False) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    types = spec_types(text)
    rows = []
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for fn in kernels(text):
        src = ast.get_source_segment(text, fn) or ""
        row: dict[str, Any] = {"port": path.name, "kernel": fn.name, "tl.load": src.count("tl.load("),
                               "tl.store": src.count("tl.store("), "tl.atomic": src.count("tl.atomic_"),
                               "lines": src.count("\n") + 1}
        params = [a.arg for a in fn.args.args]
        py_to_spec = {p: p.rstrip("_") if p.endswith("_") and p.rstrip("_") in types else p for p in params}
        dims: dict[str, Any] = {d: block_size(text, fn.name, d) for d in BLOCK_DIMS if d in params}
        dims.update(template_types(text, params, types, py_to_spec))
        defaults = constexpr_defaults(fn)
        unknown = [p for p in params if p not in dims and p not in defaults and py_to_spec[p] not in types]
        if unknown or None in dims.values() or "BX" not in dims:
            missing = ", ".join(d for d in BLOCK_DIMS if dims.get(d, 0) is None) or "BX"
            row["ptx"] = f"not built: {'no type for ' + ', '.join(unknown) if unknown else 'no ' + missing + ' in the launcher'}"
            rows.append(row)
            continue
        dims.update(defaults)
        sig = {p: ("constexpr" if p in dims else types[py_to_spec[p]]) for p in params}
        done = subprocess.run([sys.executable, "-c", COMPILE, str(path), fn.name, json.dumps(sig), json.dumps(dims),
                               "1" if aligned else "0"],
                              capture_output=True, text=True, env=env, timeout=900)
        if done.returncode != 0:
            row["ptx"] = "build failed: " + done.stderr.strip().splitlines()[-1][-300:] if done.stderr.strip() else "?"
        else:
            row["ptx"] = json.loads(done.stdout.strip().splitlines()[-1])
            if aligned:
                row["aligned"] = True
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ports", nargs="+", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--aligned", action="store_true",
                    help="pointer parameters 16-byte aligned, as the JIT specialises a launch on torch tensors: "
                         "contiguous block loads then count as vector instructions (ld.global.v4)")
    args = ap.parse_args()
    rows = [r for p in args.ports for r in measure(p, args.aligned)]
    for r in rows:
        ptx = r["ptx"]
        counts = (" ".join(f"{k}={v}" for k, v in ptx.items()) if isinstance(ptx, dict) else ptx)
        print(f"{r['port']}:{r['kernel']}  text: tl.load={r['tl.load']} tl.store={r['tl.store']} "
              f"tl.atomic={r['tl.atomic']} lines={r['lines']}  ptx: {counts}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
