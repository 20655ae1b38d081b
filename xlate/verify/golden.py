"""Golden files (.xg): recorded cases of a kernel, replayable on a machine that cannot run the source.

A .xg file is a zip archive holding `manifest.json` (format, version, kernel, signature hash, spec, the device
and toolchains that produced it, and per case its parameters and, per array, member name, dtype and shape) and
the arrays as raw little-endian bytes. Nothing is ever unpickled; oversized or malformed archives are refused:
safe to load from strangers. (Version 1 stored .npy members; NumPy versions disagree on their header padding,
so version 2 stores raw bytes and the manifest carries dtype and shape.)
"""

from __future__ import annotations

import hashlib
import io
import json
import time
import zipfile
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xlate.errors import InputError
from xlate.fsutil import atomic_write_bytes
from xlate.model import Function
from xlate.verify.cases import Case, np_dtype

FORMAT = "xlate-golden"
VERSION = 2
MAX_UNCOMPRESSED = 1 << 30  # refuse archives that would expand beyond 1 GiB
MAX_MEMBERS = 100_000


def signature_hash(fn: Function | None, kernel: str, param_names: list[str]) -> str:
    """Kernel name and parameter names in order: what a port must keep to replay the source's cases."""
    text = json.dumps({"kernel": kernel, "params": param_names})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class GoldenCase:
    case: Case
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]
    written: dict[str, np.ndarray]
    oracle: dict[str, np.ndarray] | None = None


@dataclass
class Golden:
    kernel: str
    signature: str
    spec: dict[str, Any]
    producer: dict[str, Any]
    cases: list[GoldenCase] = field(default_factory=list)
    oracle: str | None = None


def _raw(a: np.ndarray) -> tuple[bytes, dict[str, Any]]:
    dtype = a.dtype.name if a.dtype.fields is None else f"V{a.dtype.itemsize}"  # records: their bytes (engine views them)
    flat = np.ascontiguousarray(a)
    if flat.dtype.byteorder == ">":
        flat = flat.byteswap().view(flat.dtype.newbyteorder("<"))
    return flat.tobytes(), {"dtype": dtype, "shape": list(a.shape)}


def write_golden(path: str, golden: Golden) -> None:
    out = io.BytesIO()
    manifest: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "kernel": golden.kernel, "signature": golden.signature,
        "spec": golden.spec, "producer": golden.producer, "oracle": golden.oracle,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cases": [],
    }
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for i, gc in enumerate(golden.cases):
            entry: dict[str, Any] = {"case": gc.case.to_dict(), "inputs": {}, "outputs": {}, "written": {}, "oracle": None}
            groups = [("inputs", gc.inputs), ("outputs", gc.outputs), ("written", gc.written)]
            if gc.oracle is not None:
                entry["oracle"] = {}
                groups.append(("oracle", gc.oracle))
            for group, arrays in groups:
                for name, a in arrays.items():
                    member = f"c{i}/{group}/{name}.bin"
                    data, meta = _raw(a)
                    zf.writestr(member, data)
                    entry[group][name] = {"file": member, **meta}
            manifest["cases"].append(entry)
        zf.writestr("manifest.json", json.dumps(manifest, indent=1))
    atomic_write_bytes(path, out.getvalue())


def read_golden(path: str) -> Golden:
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise InputError(f"{path}: error: no such golden file") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{path}: error: not an xlate golden file ({exc})") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_UNCOMPRESSED:
            raise InputError(f"{path}: error: golden file too large or too many members; refusing to load")
        try:
            manifest = json.loads(zf.read("manifest.json"))
        except (KeyError, ValueError) as exc:
            raise InputError(f"{path}: error: golden file has no valid manifest ({exc})") from None
        if manifest.get("format") != FORMAT or not isinstance(manifest.get("version"), int):
            raise InputError(f"{path}: error: not an xlate golden file (format {manifest.get('format')!r})")
        if manifest["version"] > VERSION:
            raise InputError(f"{path}: error: golden format version {manifest['version']} is newer than this xlate reads ({VERSION})")
        names = {i.filename for i in infos}

        def load(ref: dict[str, Any]) -> np.ndarray:
            member = ref.get("file", "")
            if member not in names:
                raise InputError(f"{path}: error: golden file misses member {member!r}")
            raw = zf.read(member)
            if manifest["version"] == 1:  # .npy members; tolerate NUL header padding some NumPy versions write
                end = raw.index(b"\n") + 1 if b"\n" in raw[:4096] else 0
                raw = raw[:10] + raw[10:end].replace(b"\x00", b" ") + raw[end:]
                a = np.load(io.BytesIO(raw), allow_pickle=False)
                dtype = ref.get("dtype", a.dtype.name)
                return a.view(np_dtype(dtype)) if dtype == "bfloat16" else a.astype(np_dtype(dtype), copy=False)
            dtype = np_dtype(ref["dtype"])
            shape = tuple(int(x) for x in ref["shape"])
            count = int(np.prod(shape)) if shape else 1
            if dtype.kind == "O" or len(raw) != count * dtype.itemsize:
                raise InputError(f"{path}: error: member {member!r} does not hold {shape} x {ref['dtype']}")
            return np.frombuffer(raw, dtype=dtype.newbyteorder("<") if dtype.itemsize > 1 else dtype).astype(dtype).reshape(shape)

        cases = []
        for entry in manifest.get("cases", []):
            cases.append(GoldenCase(
                Case.from_dict(entry["case"]),
                {k: load(v) for k, v in entry["inputs"].items()},
                {k: load(v) for k, v in entry["outputs"].items()},
                {k: load(v).astype(bool) for k, v in entry["written"].items()},
                {k: load(v) for k, v in entry["oracle"].items()} if entry.get("oracle") else None,
            ))
        return Golden(manifest["kernel"], manifest["signature"], manifest["spec"], manifest.get("producer", {}), cases,
                      manifest.get("oracle"))
