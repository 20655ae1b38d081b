"""Hash the rule ports of the files a verify_inferred journal touched, so a re-run can be limited to the kernels
whose port text changed since that journal's run (bench/verify_inferred_rerun.py --ports-before/--ports-after).

    python bench/port_hashes.py CORPUS --journal verify_inferred_h200_current.jsonl --tree XLATE_CHECKOUT
        [--target triton] --out HASHES.json

Each file is ported with the xlate of --tree (any checkout: run it once at the journal's commit and once at HEAD)
through the CLI, `port F --to TARGET --no-verify --force` (a file with a kernel the lifter refuses is written
too: without --force a third of the corpus files hashed as "none", hiding their changes), and the SHA-256 of the
written port is recorded per `program/file` ("none" when nothing was written, "timeout" past --timeout). Only files with a kernel whose port
for TARGET was translated in the journal are ported: the others have no port text to compare. Resumable: rows
already in --out are kept. With --kernels-only the hash is of the port's code alone: its syntax tree without
docstrings and comments, and without the launch runtime every port with several launch configurations carries
(templates/triton/launch_runtime.py: how a configuration is timed and cached, the same for every port): the gate
verifies each configuration by itself, whatever the runtime chooses, so a change to that shared text alone, or
to what a port says about itself, leaves every verdict standing.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SUFFIX = {"triton": "_triton.py", "hip": ".hip"}


def files_with_ports(journal: Path, target: str) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    translated = {"verified", "rejected", "unverified", "could not verify"}
    return sorted({(r["program"], r["file"]) for r in rows if r.get(target, {}).get("outcome") in translated})


RUNTIME_START = "# -- launch configurations (written by xlate) --"
RUNTIME_END = "\n_XL_CONFIGS = {"


def without_runtime(text: bytes) -> bytes:
    """A port's code without the launch runtime (from its banner to the `_XL_CONFIGS` table, which stays), its
    comments and its docstrings: what runs (the syntax tree), not what the port says about itself."""
    s = text.decode("utf-8", errors="surrogateescape")
    a = s.find(RUNTIME_START)
    b = s.find(RUNTIME_END, a)
    if a >= 0 and b >= 0:
        s = s[:a] + s[b:]
    try:
        tree = ast.parse(s)
    except SyntaxError:
        return s.encode("utf-8", errors="surrogateescape")
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode("utf-8", errors="surrogateescape")


def port_hash(tree: Path, src: Path, target: str, timeout: float, kernels_only: bool = False) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / f"port{SUFFIX[target]}"
        cmd = [sys.executable, "-c", "from xlate.cli import main; main()", "port", str(src.resolve()), "--to", target,
               "--no-verify", "--force", "-o", str(out)]  # written when another kernel of the file is not translated
        try:
            subprocess.run(cmd, env=env, cwd=tree, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return "timeout"
        if not out.exists():
            return "none"
        text = out.read_bytes()
        return hashlib.sha256(without_runtime(text) if kernels_only else text).hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--journal", required=True)
    ap.add_argument("--tree", required=True, help="an xlate checkout (its root goes on PYTHONPATH)")
    ap.add_argument("--target", default="triton", choices=sorted(SUFFIX))
    ap.add_argument("--timeout", type=float, default=200.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kernels-only", action="store_true",
                    help="leave the shared launch runtime out of the hash (the kernels and the table stay)")
    args = ap.parse_args()
    out = Path(args.out)
    hashes: dict[str, str] = json.loads(out.read_text()) if out.exists() else {}
    todo = [(p, f) for p, f in files_with_ports(Path(args.journal), args.target) if f"{p}/{f}" not in hashes]
    for program, file in todo:
        src = Path(args.corpus) / "src" / f"{program}-cuda" / file
        hashes[f"{program}/{file}"] = port_hash(Path(args.tree).resolve(), src, args.target, args.timeout,
                                                       args.kernels_only)
        out.write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n")
    print(f"{len(hashes)} files hashed ({len(todo)} this run) -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
