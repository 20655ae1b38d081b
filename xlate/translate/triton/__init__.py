"""CUDA -> Triton rule translation: SIMT lifting of CUDA kernels into Triton programs (see translator.py)."""
