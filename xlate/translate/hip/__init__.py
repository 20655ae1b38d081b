"""CUDA <-> HIP: the deterministic rule translators, their tables, wavefront analysis and user rules."""

from xlate.translate.hip.translator import CudaToHip, HipToCuda, format_stats

__all__ = ["CudaToHip", "HipToCuda", "format_stats"]
