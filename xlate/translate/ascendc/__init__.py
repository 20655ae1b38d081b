"""CUDA -> AscendC: template-driven ports of elementwise maps and row reductions. (The static checker of any
AscendC source is the AscendC backend's: xlate.backends.ascendc_check.)"""

from __future__ import annotations

__all__ = ["CudaToAscendC"]


def __getattr__(name: str):  # lazy: importing the package does not load the translator
    if name == "CudaToAscendC":
        from xlate.translate.ascendc.translator import CudaToAscendC

        return CudaToAscendC
    raise AttributeError(name)
