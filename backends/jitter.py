"""Schedule jitter: make missing barriers show up as wrong or run-dependent results.

On a real GPU a kernel that forgets a `__syncthreads()` usually still computes the right answer, because the warps
of a block happen to run in lock step. The gate's repeat run therefore uses a jittered build: every warp sleeps a
pseudo-random time (0-2.8 us, hashed from %globaltimer, its warp and its block) at kernel entry and after every
`__syncthreads()`. A correct kernel is immune (its barriers order every shared access); a racy one now reads cells
other warps have not written yet, or overwrites cells they still read, and gives a different result.

The rewrite works on the CUDA/HIP source text through the parsed model (kernel bodies, `__syncthreads` call
sites), prepends the helper and a `#line 1` so compiler messages keep the user's line numbers. Not jittered:
cooperative-groups syncs (`block.sync()`), `__syncthreads_count/and/or`, and barriers hidden in macros (the
model sees the macro's name, not the call); those kernels still get the entry delay.
"""

from __future__ import annotations

from xlate.model import KernelUnit

ENTRY_CALL = "__xlate_jitter();"
BARRIER = "__syncthreads"
JITTERED_BARRIER = "__xlate_syncthreads"

# __nanosleep needs sm_70; older archs spin on clock64 for a comparable time.
PRELUDE = r"""
__device__ __forceinline__ void __xlate_jitter() {
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    unsigned h = (unsigned)(now >> 5) ^ ((t >> 5) * 0x9E3779B1u) ^ (b * 0x85EBCA77u);
    h ^= h >> 16; h *= 0x7FEB352Du; h ^= h >> 15; h *= 0x846CA68Bu; h ^= h >> 16;
    unsigned ns = (h & 7u) * 400u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    __nanosleep(ns);
#else
    long long until = clock64() + 2ll * ns;
    while (clock64() < until) { }
#endif
}
__device__ __forceinline__ void __xlate_syncthreads() { __syncthreads(); __xlate_jitter(); }
#line 1
"""


def parse_for_build(source: str, name: str, language: str, jitter: bool,
                    include_dirs: tuple[str, ...] = ()) -> tuple[KernelUnit, str]:
    """The model and text a backend builds from: `source` itself, or with `jitter` its instrumented copy (parsed
    again, so the device slice blanks host code at the shifted offsets). `include_dirs`: where the headers it
    includes are (a port compiled from memory, in its source's folder): their qualifier macros are read with it."""
    from xlate.parse import parse_string

    unit = parse_string(source, name, language, strict=False, include_dirs=include_dirs)  # type: ignore[arg-type]
    if jitter:
        source = instrument(unit, source)
        unit = parse_string(source, name, language, strict=False, include_dirs=include_dirs)  # type: ignore[arg-type]
    return unit, source


def instrument(unit: KernelUnit, text: str) -> str:
    """`text` (the source `unit` was parsed from) with a jitter call at every kernel's entry and after every
    `__syncthreads()`; the helper is prepended."""
    # surrogateescape both ways: a source read with a stray non-UTF-8 byte (a Latin-1 comment) keeps it
    data = text.encode("utf-8", "surrogateescape")
    edits: list[tuple[int, int, bytes]] = []  # (start, end, replacement) in bytes
    for fn in unit.functions:
        if fn.kind == "kernel" and fn.body_span is not None:
            at = fn.body_span.start_byte + 1  # just inside the opening brace
            edits.append((at, at, ENTRY_CALL.encode()))
        for use in fn.intrinsics:
            start = use.span.start_byte
            if use.name == BARRIER and data[start : start + len(BARRIER)] == BARRIER.encode():
                edits.append((start, start + len(BARRIER), JITTERED_BARRIER.encode()))
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new + data[end:]
    return PRELUDE.lstrip("\n") + data.decode("utf-8", "surrogateescape")
