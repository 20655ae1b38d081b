"""Python reference oracles (`--reference mod.py:fn`): NumPy/PyTorch functions computing in float64.

Convention: the function takes keyword arguments named like the kernel's parameters (each in/inout buffer as
an array shaped by its dims, float64 or int64; sizes and scalars as numbers; `T` optionally, the dtype of the
template parameter) and either returns the final outputs (a dict {name: array} of out/inout buffers, or one
array), or writes them CUDA-style into the output arrays it is given (`def reference(x, out, n): out[:n] = ...`,
returning None): an `out` buffer it names arrives as a zeroed array, an `inout` one with its input values.
The user's own code: it runs in this process, unlike kernels and model output. When it raises, the error names
the reference and the case (exit 2): a reference that fails never becomes a verdict on the kernel.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from xlate.errors import InputError
from xlate.specs import KernelSpec
from xlate.verify.cases import Case, buffer_shape, computed_fields, ctype_dtype, is_float, np_dtype


class ReferenceFailed(InputError):
    """The reference oracle raised or returned something unusable: the user's code, not the kernel, is at fault."""


class ReferenceOracle:
    def __init__(self, ref: str):
        path, sep, name = ref.rpartition(":")
        if not sep or not path:
            raise InputError(f"xlate: error: --reference takes FILE.py:FUNCTION, not '{ref}'")
        if not os.path.exists(path):
            raise InputError(f"{path}: error: no such file (for --reference)")
        spec = importlib.util.spec_from_file_location(f"xlate_reference_{abs(hash(os.path.abspath(path)))}", path)
        if spec is None or spec.loader is None:
            raise InputError(f"{path}: error: cannot load as a Python module")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise InputError(f"{path}: error: importing the reference failed: {type(exc).__name__}: {exc}") from None
        fn = getattr(module, name, None)
        if not callable(fn):
            raise InputError(f"{path}: error: no function '{name}' in the reference module")
        self.fn: Callable[..., Any] = fn
        self.label = f"reference:{os.path.basename(path)}:{name}"
        self.path = path
        self.takes_T = "T" in inspect.signature(fn).parameters or any(
            p.kind == p.VAR_KEYWORD for p in inspect.signature(fn).parameters.values()
        )

    def outputs(self, spec: KernelSpec, case: Case, env: dict[str, Any], inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        kwargs: dict[str, Any] = {}
        sig = inspect.signature(self.fn)
        named = set(sig.parameters)
        given: dict[str, np.ndarray] = {}  # output arrays handed to a destination-passing reference
        records: dict[str, dict[str, Any]] = {}  # by-value records holding pointers: their fields' arrays too
        for p in [*spec.params, *spec.member_buffers]:
            target, name = (records.setdefault(p.member, {}), p.name[len(p.member) + 1 :]) if p.member else (
                kwargs, p.name)  # a record's pointer field: an entry of the record's dict, by its path
            if p.is_buffer:
                shape = buffer_shape(p, env, case, spec)
                dtype = ctype_dtype(p.ctype, case, spec)
                wide_type = np.float64 if is_float(dtype) else np.int64 if dtype.fields is None else dtype  # records: as they are
                if p.role == "out":
                    if p.name in named or p.member is not None:
                        given[p.name] = np.zeros(shape, dtype=wide_type)
                        target[name] = given[p.name]
                    continue
                a = inputs[p.name]
                wide = a.astype(np.float64) if is_float(a.dtype) else a.astype(np.int64) if a.dtype.kind in "iub" else a
                target[name] = wide.reshape(shape)
                if p.role == "inout":
                    given[p.name] = target[name]
            else:
                target[name] = env[p.name] if p.name in env else case.scalars.get(p.name)
        for rec, fields in records.items():  # `info["data"]`, `info["sizes"]` beside the drawn number fields
            kwargs[rec] = {**computed_fields(spec.param(rec), case, env, spec), **(kwargs.get(rec) or {}), **fields}
        if self.takes_T and case.dtypes:
            kwargs["T"] = np_dtype(next(iter(case.dtypes.values())))
        if not any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            kwargs = {k: v for k, v in kwargs.items() if k in sig.parameters}
        missing = [n for n, q in sig.parameters.items() if q.default is q.empty and q.kind in (q.POSITIONAL_OR_KEYWORD, q.KEYWORD_ONLY)
                   and n not in kwargs]
        if missing:
            raise ReferenceFailed(f"{self.path}: error: the reference {self.label.split(':', 1)[1]} takes "
                                  f"{', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not a parameter of "
                                  f"'{spec.kernel}' ({', '.join(p.name for p in spec.params)})")
        try:
            with np.errstate(all="ignore"):
                result = self.fn(**kwargs)
        except Exception as exc:  # the user's code: any failure is reported, never a traceback
            raise ReferenceFailed(f"{self.path}: error: the reference {self.label.split(':', 1)[1]} raised "
                                  f"{type(exc).__name__}: {exc} (case: {_case_text(case)})") from None
        outs = [p for p in spec.buffers if p.role != "in"]
        if result is None:
            if not given:
                raise ReferenceFailed(f"{self.path}: error: the reference {self.label.split(':', 1)[1]} returned None "
                                      f"and takes no output array: return the outputs, or take "
                                      f"{', '.join(p.name for p in outs) or 'the outputs'} as arguments and write them")
            result = dict(given)
        elif isinstance(result, dict):
            result = {**given, **result}
        if not isinstance(result, dict):
            if len(outs) != 1:
                raise ReferenceFailed(f"{self.path}: error: the reference returned one array but the kernel has "
                                      f"{len(outs)} outputs ({', '.join(p.name for p in outs)}): return a dict")
            result = {outs[0].name: result}
        out: dict[str, np.ndarray] = {}
        for p in outs:
            if p.name not in result:
                if p.role == "inout":
                    a = inputs[p.name]
                    out[p.name] = (a if a.dtype.fields is not None else a.astype(np.float64)).reshape(-1)
                    continue
                raise ReferenceFailed(f"{self.path}: error: the reference did not return output '{p.name}'")
            try:
                value = np.asarray(_to_numpy(result[p.name]))
            except Exception as exc:  # not an array: reported
                raise ReferenceFailed(f"{self.path}: error: reference output '{p.name}' is not an array: {exc}") from None
            dtype = ctype_dtype(p.ctype, case, spec)
            expected = int(np.prod(buffer_shape(p, env, case, spec)))
            if value.size != expected:
                raise ReferenceFailed(f"{self.path}: error: reference output '{p.name}' has {value.size} elements, "
                                      f"the spec says {expected} (case: {_case_text(case)})")
            try:
                out[p.name] = value.reshape(-1).astype(
                    dtype if dtype.fields is not None else np.float64 if is_float(dtype) else np.int64)
            except (TypeError, ValueError) as exc:
                raise ReferenceFailed(f"{self.path}: error: reference output '{p.name}' is not numeric: {exc}") from None
        return out


def _case_text(case: Case) -> str:
    parts = [f"{k}={v}" for k, v in {**case.sizes, **case.scalars}.items()]
    return ", ".join(parts) or "no sizes"


def _to_numpy(x: Any) -> Any:
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch tensor
        return x.detach().cpu().double().numpy() if x.is_floating_point() else x.detach().cpu().numpy()
    return x
