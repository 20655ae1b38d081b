"""xlate: port GPU kernels between CUDA, HIP, Triton and AscendC, and prove each port by fuzzing."""

import os as _os

__version__ = "0.1.0"

# Installed, setuptools maps the top-level backends/, grammars/ and templates/ folders to xlate.backends,
# xlate.grammars and xlate.templates (pyproject package-dir). Run from a source checkout without installing, the
# same names resolve through the checkout's root.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_root, "backends", "__init__.py")) and _os.path.isfile(_os.path.join(_root, "pyproject.toml")):
    __path__.append(_root)  # type: ignore[name-defined]
