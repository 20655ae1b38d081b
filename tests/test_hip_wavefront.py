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


# -- masks that are not the full warp (intrinsics.yaml `partial`, XL1123) ------------------------------------
# CUDA: lanes outside the mask contribute nothing, and every lane of the mask reaches the call (the sm_6x rule,
# which the lockstep wavefront keeps). On the AMD side the lanes of the mask are the active ones of the call.
def ballot_with_exec(p, active, wave):
    """__ballot over the active lanes only (inactive lanes read 0, amd_device_functions.h)."""
    return sum(1 << i for i in range(wave) if p[i] and active[i])


def half_masks(draw_mask, wave):
    return [draw_mask[lane // 32] for lane in range(wave)]


def bits_of(mask):
    return [i for i in range(32) if (mask >> i) & 1]


def amd_match_any(values, mask, wave):
    """compat.yaml's xlate_match_any_sync (AMD branch), lane by lane: live = mask & activemask; while todo:
    lead = __ffs(todo) - 1; eq = ballot(live, lead's bits == mine) & todo; mine -> eq; todo &= ~eq."""
    out = [None] * wave
    for h in range(wave // 32):
        m = mask[h]
        lanes = [h * 32 + i for i in bits_of(m)]  # the calling lanes: the mask's (all of them reach it)
        active = [lane in lanes for lane in range(wave)]
        live = m & ((ballot_with_exec([True] * wave, active, wave) >> (h * 32)) & U32)
        todo, same = live, dict.fromkeys(lanes, 0)
        while todo:
            lead = h * 32 + (todo & -todo).bit_length() - 1
            b = ballot_with_exec([values[j] == values[lead] for j in range(wave)], active, wave)
            eq = ((b >> (h * 32)) & U32) & live & todo
            for lane in lanes:
                if values[lane] == values[lead]:
                    same[lane] = eq
            todo &= ~eq
        out[h * 32 : h * 32 + 32] = [same.get(h * 32 + i) for i in range(32)]
    return out


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.integers(0, 3), min_size=64, max_size=64),
       masks=st.lists(st.integers(1, U32), min_size=2, max_size=2), wave=waves)
def test_match_any_helper_is_cudas_on_any_mask(values, masks, wave):
    got = amd_match_any(values[:wave], masks, wave)
    for lane in range(wave):
        h, i = divmod(lane, 32)
        if (masks[h] >> i) & 1:
            expected = sum(1 << j for j in bits_of(masks[h]) if values[h * 32 + j] == values[lane])
            assert got[lane] == expected


@settings(max_examples=300, deadline=None)
@given(p=st.lists(st.booleans(), min_size=64, max_size=64), masks=st.lists(st.integers(1, U32), min_size=2, max_size=2),
       wave=waves)
def test_vote_helpers_honour_a_partial_mask(p, masks, wave):
    """xlate_ballot_sync = half & mask; any = ballot != 0; all = ballot == mask & activemask; as CUDA's
    __ballot_sync / __any_sync / __all_sync over the mask's lanes (all of which reach the call)."""
    p = p[:wave]
    mask = half_masks(masks, wave)
    active = [(mask[lane] >> (lane & 31)) & 1 == 1 for lane in range(wave)]
    b = ballot_with_exec(p, active, wave)
    act = ballot_with_exec([True] * wave, active, wave)
    for lane in range(wave):
        if not active[lane]:
            continue
        half = ((b >> (lane & 32)) & U32) & mask[lane]
        live = mask[lane] & ((act >> (lane & 32)) & U32)
        members = [(lane & 32) + j for j in bits_of(mask[lane])]
        assert half == sum(1 << (j & 31) for j in members if p[j])  # CUDA's ballot: 0 outside the mask
        assert (half != 0) == any(p[j] for j in members)
        assert (half == live) == all(p[j] for j in members)


@settings(max_examples=200, deadline=None)
@given(v=lanes64, masks=st.lists(st.integers(1, U32), min_size=2, max_size=2), wave=waves)
def test_reduce_helpers_over_a_partial_mask(v, masks, wave):
    """The partial-mask branch: r = shfl(v, first lane of the mask), then op with each further lane of it."""
    v = v[:wave]
    for name, op in {"add": lambda a, b: a + b, "min": min, "max": max, "xor": lambda a, b: a ^ b}.items():
        for h in range(wave // 32):
            lanes = bits_of(masks[h])
            r = hip_shfl(v, [lanes[0]] * wave, 32, wave)[h * 32]
            for j in lanes[1:]:
                r = op(r, hip_shfl(v, [j] * wave, 32, wave)[h * 32])
            assert r == _fold([v[h * 32 + j] for j in lanes], op), name


def test_helpers_in_compat_yaml_are_the_modelled_ones():
    """The models above follow the helper text; a change to compat.yaml must change them too."""
    helpers = compat.compat()["helpers"]
    flat = lambda s: " ".join(s.split())  # noqa: E731
    assert "return (unsigned int)(__ballot(pred) >> (__lane_id() & 32u)) & mask;" in flat(helpers["ballot"]["text"])
    assert "return (unsigned int)(__ballot(1) >> (__lane_id() & 32u));" in flat(helpers["activemask"]["text"])
    assert "return xlate_ballot_sync(mask, pred) != 0u;" in flat(helpers["any"]["text"])
    assert "return xlate_ballot_sync(mask, pred) == (mask & xlate_activemask());" in flat(helpers["all"]["text"])
    for op in ("add", "min", "max", "and", "or", "xor"):
        text = flat(helpers[f"reduce_{op}"]["text"])
        assert "for (int o = 16; o > 0; o >>= 1)" in text and "xlate_shfl_xor_sync(mask, v, o)" in text
        assert "xlate_shfl_sync(mask, v, __ffs(mask) - 1)" in text and "m &= m - 1u" in text
    shfl = flat(helpers["shfl_sync"]["text"])
    assert "return __shfl(v, lane & (width - 1), width);" in shfl and "return __shfl_xor(v, lane_mask, width);" in shfl
    match = flat(helpers["match_any"]["text"])
    for step in ("const unsigned int live = mask & xlate_activemask();", "xlate_shfl_sync(live, bits, __ffs(todo) - 1)",
                 "xlate_ballot_sync(live, lead == bits) & todo", "if (lead == bits) same = eq;", "todo &= ~eq;"):
        assert step in match, step
    assert re.search(r"#define XLATE_WARP_WIDTH 32\b", helpers["warp_width"]["text"])
    assert re.search(r"#define XLATE_WARP_SIZE 32\b", helpers["warp_size"]["text"])
