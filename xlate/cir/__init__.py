"""The C front end's device-code layer, shared by the translators that restructure CUDA kernels (Triton,
AscendC): preprocessing of one function (cpre.py: macro expansion with a map back to the source), a small typed
IR of device code (ir.py) built from the front end's tree (build.py), and C types from the one table
(ctype.py, xlate/data/ctypes.yaml).

It sits below the translators and the gate and above xlate.parse (the front end proper) and xlate.model.
"""
