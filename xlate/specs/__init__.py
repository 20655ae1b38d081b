"""Kernel specs: what to feed a kernel and how to launch it, and their inference from the program.

A layer of its own below the translators and the verification gate: both read specs, neither owns them.
"""

from xlate.specs.build import Resolution, build_spec, resolve_spec
from xlate.specs.language import split_top
from xlate.specs.model import NUMERIC_DTYPES, KernelSpec, Origin, ParamSpec, ctypes_table, normalise_ctype
from xlate.specs.sidecar import sidecar, sidecar_overrides, sidecar_reference

__all__ = ["NUMERIC_DTYPES", "KernelSpec", "Origin", "ParamSpec", "Resolution", "build_spec", "ctypes_table",
           "normalise_ctype", "resolve_spec", "sidecar", "sidecar_overrides", "sidecar_reference", "split_top"]
