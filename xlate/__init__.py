"""xlate: port GPU kernels between CUDA, HIP, Triton and AscendC, and prove each port by fuzzing."""

__version__ = "0.1.0"
