"""The safety argument of the 32-lane warp model, checked on the CPU.

Two lane-level models, each transcribed from its source:
  * CUDA warps of 32 lanes (CUDA Programming Guide, warp shuffle functions: srcLane is taken modulo width,
    up/down/xor return the caller's own value outside its width-wide segment; ballot bit i = lane i);
  * AMD wavefronts of 64 (or 32) lanes running HIP 5.2's functions, index math copied from
    /usr/include/hip/amd_detail/amd_warp_functions.h (ds_bpermute reads lane index mod wavefront size) and
    __ballot from amd_device_functions.h.
Hypothesis then shows that what the port emits (`__shfl*(v, x, XLATE_WARP_WIDTH)`, the source-lane wrap,
the compat helpers' ballot half and xor reductions) computes, on every lane of a wavefront, exactly what
CUDA computes on the lane's 32-lane warp; and that the rewrites are needed (without them, counterexamples).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from xlate.translate.hip import compat

WIDTHS = [1, 2, 4, 8, 16, 32]
I32 = st.integers(-(2**31), 2**31 - 1)


# -- CUDA: one 32-lane warp ----------------------------------------------------------------------------------
def cuda_shfl(v, src, w):
    out = []
    for lane in range(32):
        base = lane & ~(w - 1)
        out.append(v[base + (src[lane] & (w - 1))])
    return out


def cuda_shfl_up(v, d, w):
    return [v[lane - d] if (lane & (w - 1)) >= d else v[lane] for lane in range(32)]


def cuda_shfl_down(v, d, w):
    return [v[lane + d] if (lane & (w - 1)) + d < w else v[lane] for lane in range(32)]


def cuda_shfl_xor(v, m, w):
    out = []
    for lane in range(32):
        idx = lane ^ m
        seg_end = (lane & ~(w - 1)) + w
        out.append(v[idx] if idx < seg_end and idx < 32 else v[lane])
    return out


def cuda_ballot(p):
    return sum(1 << i for i in range(32) if p[i])


# -- HIP 5.2 on a wavefront of `wave` lanes (amd_warp_functions.h) ---------------------------------------------
def bpermute(v, index, wave):
    return v[index % wave]  # ds_bpermute uses address bits [7:2]: lane index modulo the wavefront size


def hip_shfl(v, src, w, wave):
    return [bpermute(v, src[self] + (self & ~(w - 1)), wave) for self in range(wave)]


def hip_shfl_up(v, d, w, wave):
    out = []
    for self in range(wave):
        index = self - d
        index = self if index < (self & ~(w - 1)) else index
        out.append(bpermute(v, index, wave))
    return out


def hip_shfl_down(v, d, w, wave):
    out = []
    for self in range(wave):
        index = self + d
        index = self if (self & (w - 1)) + d >= w else index
        out.append(bpermute(v, index, wave))
    return out


def hip_shfl_xor(v, m, w, wave):
    out = []
    for self in range(wave):
        index = self ^ m
        index = self if index >= ((self + w) & ~(w - 1)) else index
        out.append(bpermute(v, index, wave))
    return out


def hip_ballot(p, wave):
    return sum(1 << i for i in range(wave) if p[i])


def xlate_ballot_sync(p, wave):
    """compat.yaml's helper: (unsigned int)(__ballot(pred) >> (__lane_id() & 32u)), per lane."""
    b = hip_ballot(p, wave)
    return [(b >> (lane & 32)) & 0xFFFFFFFF for lane in range(wave)]


def warps(values, wave):
    """The CUDA warps a wavefront holds (one for wave 32, two for wave 64)."""
    return [values[i : i + 32] for i in range(0, wave, 32)]


def per_warp(cuda_fn, wave, *lane_args):
    out = []
    for chunks in zip(*(warps(a, wave) if isinstance(a, list) else [a] * (wave // 32) for a in lane_args)):
        out.extend(cuda_fn(*chunks))
    return out


lanes64 = st.lists(I32, min_size=64, max_size=64)
waves = st.sampled_from([64, 32])


@settings(max_examples=300, deadline=None)
@given(v=lanes64, d=st.integers(0, 40), w=st.sampled_from(WIDTHS), wave=waves)
def test_shfl_up_down_with_width_match_cuda(v, d, w, wave):
    v = v[:wave]
    if d < 32:  # CUDA's delta is a lane count; values of 32 and more are not meaningful
        assert hip_shfl_down(v, d, w, wave) == per_warp(lambda a: cuda_shfl_down(a, d, w), wave, v)
        assert hip_shfl_up(v, d, w, wave) == per_warp(lambda a: cuda_shfl_up(a, d, w), wave, v)


@settings(max_examples=300, deadline=None)
@given(v=lanes64, m=st.integers(0, 31), w=st.sampled_from(WIDTHS), wave=waves)
def test_shfl_xor_with_width_matches_cuda(v, m, w, wave):
    v = v[:wave]
    assert hip_shfl_xor(v, m, w, wave) == per_warp(lambda a: cuda_shfl_xor(a, m, w), wave, v)


@settings(max_examples=300, deadline=None)
@given(v=lanes64, src=st.lists(st.integers(-100, 100), min_size=64, max_size=64), w=st.sampled_from(WIDTHS), wave=waves)
def test_shfl_with_wrapped_lane_matches_cuda(v, src, w, wave):
    """The port's `__shfl(v, (x) & (W - 1), W)`: CUDA's srcLane mod width, on every lane of the wavefront."""
    v, src = v[:wave], src[:wave]
    wrapped = [s & (w - 1) for s in src]
    expected = per_warp(lambda a, s: cuda_shfl(a, s, w), wave, v, src)
    assert hip_shfl(v, wrapped, w, wave) == expected


def test_wrap_and_width_are_needed_on_wave64():
    v = list(range(64))
    # Without the wrap: lane 31 asks for lane 32 (CUDA: lane 0 of its warp; HIP: lane 32, the other warp).
    src = [(lane + 1) for lane in range(64)]
    assert hip_shfl(v, src, 32, 64) != per_warp(lambda a, s: cuda_shfl(a, s, 32), 64, v, src)
    # Without width 32 (HIP's default is the wavefront): lane 31 reads lane 32 where CUDA keeps its own value.
    assert hip_shfl_down(v, 1, 64, 64) != per_warp(lambda a: cuda_shfl_down(a, 1, 32), 64, v)
    assert hip_shfl_up(v, 1, 64, 64)[32] == 31  # crosses into the other CUDA warp


@settings(max_examples=300, deadline=None)
@given(p=st.lists(st.booleans(), min_size=64, max_size=64), wave=waves)
def test_ballot_half_is_the_cuda_warp_ballot(p, wave):
    p = p[:wave]
    got = xlate_ballot_sync(p, wave)
    for lane in range(wave):
        warp = warps(p, wave)[lane // 32]
        assert got[lane] == cuda_ballot(warp)
        # the popcounts and ffs a CUDA kernel takes of it are then the CUDA ones
        assert bin(got[lane]).count("1") == sum(warp)
    # a port that kept HIP's 64-bit __ballot would count both warps: different whenever the halves differ
    if wave == 64 and p[:32] != p[32:]:
        assert any(hip_ballot(p, 64) != got[lane] for lane in range(64))


@settings(max_examples=200, deadline=None)
@given(p=st.lists(st.booleans(), min_size=64, max_size=64))
def test_any_all_uni_helpers_match_cuda(p):
    half = xlate_ballot_sync(p, 64)
    active = xlate_ballot_sync([True] * 64, 64)  # xlate_activemask with every lane active
    for lane in range(64):
        warp = p[(lane // 32) * 32 : (lane // 32) * 32 + 32]
        assert (half[lane] != 0) == any(warp)  # xlate_any_sync
        assert (half[lane] == active[lane]) == all(warp)  # xlate_all_sync
        assert (half[lane] == 0 or half[lane] == active[lane]) == (all(warp) or not any(warp))  # xlate_uni_sync


def _xor_reduce(v, op, wave):
    """compat.yaml's xlate_reduce_*_sync: for (o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor(v, o, 32))."""
    for o in (16, 8, 4, 2, 1):
        u = hip_shfl_xor(v, o, 32, wave)
        v = [op(a, b) for a, b in zip(v, u)]
    return v


U32 = 0xFFFFFFFF


@settings(max_examples=200, deadline=None)
@given(v=lanes64, wave=waves)
def test_reduce_helpers_match_cuda_warp_reductions(v, wave):
    v = v[:wave]
    wrap = lambda x: ((x + 2**31) % 2**32) - 2**31  # noqa: E731  int32 arithmetic wraps
    ops = {
        "add": (lambda a, b: wrap(a + b), lambda w: wrap(sum(w))),
        "min": (min, min), "max": (max, max),
        "and": (lambda a, b: a & b & U32, lambda w: _fold(w, lambda a, b: a & b) & U32),
        "or": (lambda a, b: (a | b) & U32, lambda w: _fold(w, lambda a, b: a | b) & U32),
        "xor": (lambda a, b: (a ^ b) & U32, lambda w: _fold(w, lambda a, b: a ^ b) & U32),
    }
    for name, (step, whole) in ops.items():
        got = _xor_reduce(list(v), step, wave)
        for lane in range(wave):
            assert got[lane] == whole(warps(v, wave)[lane // 32]), name


def _fold(values, op):
    acc = values[0]
    for x in values[1:]:
        acc = op(acc, x)
    return acc


@settings(max_examples=500, deadline=None)
@given(t=st.integers(0, 2**20))
def test_lane_math_agrees_with_the_wavefront_half(t):
    """CUDA lane/warp math stays meaningful: a 1-D block's thread t is wavefront lane t % 64, and its CUDA lane
    (t & 31, t % 32) and warp (t >> 5, t / 32) are its lane inside, and the index of, its 32-lane half."""
    hw_lane = t % 64
    assert t & 31 == t % 32 == hw_lane & 31
    assert (t >> 5) == t // 32 and (t >> 5) & 1 == (hw_lane & 32) >> 5


def test_helpers_in_compat_yaml_are_the_modelled_ones():
    """The models above follow the helper text; a change to compat.yaml must change them too."""
    helpers = compat.compat()["helpers"]
    flat = lambda s: " ".join(s.split())  # noqa: E731
    assert "return (unsigned int)(__ballot(pred) >> (__lane_id() & 32u));" in flat(helpers["ballot"]["text"])
    assert "return (unsigned int)(__ballot(1) >> (__lane_id() & 32u));" in flat(helpers["activemask"]["text"])
    assert "return xlate_ballot_sync(mask, pred) != 0u;" in flat(helpers["any"]["text"])
    assert "return xlate_ballot_sync(mask, pred) == xlate_activemask();" in flat(helpers["all"]["text"])
    for op in ("add", "min", "max", "and", "or", "xor"):
        text = flat(helpers[f"reduce_{op}"]["text"])
        assert "for (int o = 16; o > 0; o >>= 1)" in text and "__shfl_xor(v, o, XLATE_WARP_WIDTH)" in text
    assert re.search(r"#define XLATE_WARP_WIDTH 32\b", helpers["warp_width"]["text"])
    assert re.search(r"#define XLATE_WARP_SIZE 32\b", helpers["warp_size"]["text"])
