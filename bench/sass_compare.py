"""A Triton port's machine code beside its CUDA source's, on the CPU (issue #16): where no GPU is lent, the sm_90
code both compile to shows what a slow port does differently. The source is compiled by nvcc (`-cubin
-arch=sm_90 -O3`), the port by Triton for the same target with its bundled ptxas; both disassembled with Triton's
bundled nvdisasm. Per kernel and side: instructions, global loads and stores, shared-memory loads and stores,
global atomics and reductions, barriers, warp shuffles, the most global loads of one basic block (the loads a
loop body keeps in flight), registers and static shared memory.

    python bench/sass_compare.py SOURCE.cu KERNEL [KERNEL ...] [--port PORT.py] [--json OUT] [-I DIR ...]
        [--warps N ...] [--sass DIR]

Without --port the port is written by `xlate port --no-verify` into a temporary folder. The port is built at
its default launch's num_warps; --warps N adds a row of it built at N warps (the packed configuration). Counts are of the
static code: a loop's body counts once, whatever its trip count. Nothing here is a timing; bench/time_inferred.py
on a GPU is."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from static_memops import (
    BLOCK_DIMS,
    BUILD,
    block_size,
    constexpr_defaults,
    kernels,
    spec_types,
    template_types,
)

OPS = {"LDG": r"LDG", "STG": r"STG", "LDS": r"LDS", "STS": r"STS", "ATOM": r"ATOMG?|REDG?|REDUX", "BAR": r"BAR",
       "SHFL": r"SHFL"}

PORT_SASS = BUILD + r'''
import os, subprocess, tempfile
bindir = os.path.join(os.path.dirname(triton.backends.nvidia.__file__), "bin")
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "k.cubin"), "wb").write(ck.asm["cubin"])
    sass = subprocess.run([os.path.join(bindir, "nvdisasm"), "-c", os.path.join(d, "k.cubin")], capture_output=True,
                          text=True, check=True).stdout
    res = subprocess.run([os.path.join(bindir, "cuobjdump"), "-res-usage", os.path.join(d, "k.cubin")],
                         capture_output=True, text=True).stdout
regs = re.search(r"REG:(\d+)", res)
print(json.dumps({"sass": sass, "registers": int(regs.group(1)) if regs else None,
                  "shared": int(ck.metadata.shared)}))
'''


def tools() -> dict[str, str]:
    import triton.backends.nvidia

    bindir = os.path.join(os.path.dirname(triton.backends.nvidia.__file__), "bin")
    return {t: os.path.join(bindir, t) for t in ("nvdisasm", "cuobjdump")}


def counts(sass: str) -> dict[str, int]:
    """Instruction counts of one function's disassembly."""
    insns = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", sass)
    out = {"insns": len(insns)}
    for op, rx in OPS.items():
        out[op] = sum(1 for i in insns if re.fullmatch(rf"(?:{rx})(?:\..*)?", i))
    blocks = re.split(r"^\s*\.L_x_\d+:", sass, flags=re.M)
    out["LDG/block"] = max((len(re.findall(r"\bLDG\b", b)) for b in blocks), default=0)
    return out


def source_sass(source: Path, includes: list[str]) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """Each kernel's disassembly (by mangled name) and its registers and static shared memory."""
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / "s.cubin"
        done = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-O3", "-I", str(source.parent),
                               *[f"-I{i}" for i in includes], "-o", str(cubin), str(source)],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError("nvcc: " + done.stderr.strip()[-500:])
        sass = subprocess.run([tools()["nvdisasm"], "-c", str(cubin)], capture_output=True, text=True,
                              check=True).stdout
        usage = subprocess.run([tools()["cuobjdump"], "-res-usage", str(cubin)], capture_output=True,
                               text=True).stdout
    resources: dict[str, dict[str, int]] = {}
    for name, regs, shared in re.findall(r"Function (\w+):\s*\n\s*REG:(\d+)\b.*?SHARED:(\d+)", usage):
        resources[name] = {"registers": int(regs), "shared": int(shared)}
    funcs: dict[str, str] = {}
    for part in re.split(r"^\s*\.text\.", sass, flags=re.M)[1:]:
        mangled = part.split(":", 1)[0].strip()
        funcs[mangled] = part
    return funcs, resources


def demangled_base(mangled: str) -> str:
    name = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    name = re.sub(r"\(.*$", "", name)  # parameters
    while "<" in name:  # template arguments, innermost first
        name = re.sub(r"<[^<>]*>", "", name)
    return name.split("::")[-1].split()[-1]


def port_sass(port: Path, kernel: str, warps: int | None = None, dump: Path | None = None) -> dict[str, Any]:
    """The port's kernel built for sm_90 at the num_warps of its default launch (a literal in the launch, else the
    first entry of its `_XL_CONFIGS` row), or at `warps`; its disassembly written to `dump` if given."""
    text = port.read_text(encoding="utf-8", errors="surrogateescape")
    types = spec_types(text)
    fn = next((f for f in kernels(text) if f.name == f"_{re.sub(r'[^0-9A-Za-z_]', '_', kernel)}_kernel"), None)
    if fn is None:
        return {"error": f"no jit kernel for {kernel} in the port"}
    params = [a.arg for a in fn.args.args]
    py_to_spec = {p: p.rstrip("_") if p.endswith("_") and p.rstrip("_") in types else p for p in params}
    dims: dict[str, Any] = {d: block_size(text, fn.name, d) for d in BLOCK_DIMS if d in params}
    dims.update(template_types(text, params, types, py_to_spec))
    defaults = constexpr_defaults(fn)
    unknown = [p for p in params if p not in dims and p not in defaults and py_to_spec[p] not in types]
    if unknown or None in dims.values():
        return {"error": "not built: no type for " + ", ".join(unknown) if unknown else "no block size"}
    dims.update(defaults)
    if warps is None:
        m = (re.search(rf"{re.escape(fn.name)}\[[^\]]*\]\([^\n]*\bnum_warps=(\d+)", text)
             or re.search(rf'^\s*"{re.escape(kernel)}": \[\{{"blocks": 1, "num_warps": (\d+)', text, re.M))
        warps = int(m.group(1)) if m else 4
    sig = {p: ("constexpr" if p in dims else types[py_to_spec[p]]) for p in params}
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "-c", PORT_SASS, str(port), fn.name, json.dumps(sig), json.dumps(dims), "1",
                           str(warps)], capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        return {"error": "build failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][-300:]}
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if dump is not None:
        dump.write_text(got["sass"], encoding="utf-8")
    return {**counts(got["sass"]), "registers": got["registers"], "shared": got["shared"], "warps": warps}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path)
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--port", type=Path, help="the Triton port (default: written now by xlate port --no-verify)")
    ap.add_argument("-I", dest="includes", action="append", default=[])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--warps", type=int, action="append", default=[],
                    help="also build the port at this num_warps (repeatable): rows 'port@N' beside its default")
    ap.add_argument("--sass", type=Path, metavar="DIR",
                    help="write each side's disassembly there (KERNEL.source.sass, KERNEL.port[@N].sass)")
    args = ap.parse_args()
    if args.sass:
        args.sass.mkdir(parents=True, exist_ok=True)

    def dump(kernel: str, side: str) -> Path | None:
        return args.sass / f"{re.sub(r'[^0-9A-Za-z_]', '_', kernel)}.{side}.sass" if args.sass else None

    try:
        funcs, resources = source_sass(args.source, args.includes)
        source_error = ""
    except RuntimeError as exc:  # the port's side is still worth seeing (a header the export lacks)
        funcs, resources, source_error = {}, {}, str(exc).splitlines()[-1][-200:]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for kernel in args.kernels:
            port = args.port
            if port is None:
                port = Path(d) / f"{kernel}.py"
                subprocess.run([sys.executable, "-m", "xlate.cli", "port", str(args.source), "--to", "triton",
                                "--kernel", kernel, "--no-verify", "-o", str(port)], capture_output=True, text=True)
            row: dict[str, Any] = {"source_file": str(args.source), "kernel": kernel}
            mine = [m for m in funcs if demangled_base(m) == kernel]
            if mine:
                m = mine[0]
                row["source"] = {**counts(funcs[m]), **resources.get(m, {})}
                if args.sass:
                    dump(kernel, "source").write_text(funcs[m], encoding="utf-8")
                if len(mine) > 1:
                    row["source_note"] = f"{len(mine)} instantiations; the first"
            else:
                row["source"] = {"error": source_error or "no such kernel in nvcc's cubin"}
            row["port"] = port_sass(port, kernel, dump=dump(kernel, "port")) if port.is_file() else {
                "error": "no port written"}
            for w in args.warps:
                row[f"port@{w}"] = (port_sass(port, kernel, w, dump(kernel, f"port@{w}")) if port.is_file()
                                    else {"error": "no port written"})
            rows.append(row)
    keys = ["insns", "LDG", "STG", "LDS", "STS", "ATOM", "BAR", "SHFL", "LDG/block", "registers", "shared", "warps"]
    print(f"{'kernel':32} {'side':7} " + " ".join(f"{k:>9}" for k in keys))
    for r in rows:
        for side in ("source", "port", *(f"port@{w}" for w in args.warps)):
            c = r[side]
            cells = " ".join(f"{c.get(k, '')!s:>9}" for k in keys) if "error" not in c else c["error"]
            print(f"{r['kernel'][:32]:32} {side:7} {cells}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main()
