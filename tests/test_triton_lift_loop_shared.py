"""Shared arrays and run-time loops (loops.py, comm.py): a table filled before a loop and only passed to a device
function inside it stays visible there; a shared array the loop itself updates across its iterations is carried
from one iteration to the next as block tensors, where every cross-thread exchange is ordered by barriers; a racy
variant of each is still refused.

Each kernel is written here; its port runs on the Triton interpreter against a NumPy model of the CUDA program
on sizes that are not multiples of the block, outputs poisoned and buffers between guard bands."""

from __future__ import annotations

import numpy as np
from xlate.backends.base import ScalarArg

from tests.test_triton_lift import port
from tests.test_triton_realworld_patterns import buf, guards_intact, poisoned, ported, rng, run


def _refused_as_race(src: str) -> None:
    t = port(src)
    assert t.kernels == [] and t.blocking, t.text
    assert all(d.code == "XL2009" for d in t.blocking), [d.format() for d in t.blocking]


# -- a table passed to a device function that only reads it --------------------------------------------------

TABLE_LOOKUP = """
// xlate: table: in[16], x: in[n], y: out[n], n: size(1..3000), grid: cdiv(n, 64), block: 64
__device__ float nearest_entry(float* tab, float v) {
    int k = (int)(v * 4.0f);
    k = k < 0 ? 0 : (k > 15 ? 15 : k);
    return tab[k];
}

__global__ void remap(const float* table, const float* x, float* y, int n) {
    __shared__ float tab[16];
    for (int j = threadIdx.x; j < 16; j += blockDim.x) tab[j] = table[j];
    __syncthreads();
    for (int i = blockIdx.x * 64 + threadIdx.x; i < n; i += gridDim.x * 64) {
        y[i] = nearest_entry(tab, x[i]) + 1.0f;
    }
}
"""


def test_table_passed_to_a_reading_device_function_inside_a_loop(tmp_path):
    t = ported(TABLE_LOOKUP, "remap")
    n = 333
    table = rng(1).standard_normal(16).astype(np.float32)
    x = rng(2).uniform(-1.0, 5.0, n).astype(np.float32)
    out = run(t.text, "remap", [buf("table", table), buf("x", x), buf("y", poisoned(n, np.float32)),
                                ScalarArg("n", n, "int32")], tmp_path)
    k = np.clip((x * np.float32(4.0)).astype(np.int64), 0, 15)
    np.testing.assert_allclose(out["y"], table[k] + np.float32(1.0), rtol=1e-6)
    guards_intact(out, "y")


def test_table_a_device_function_writes_inside_the_loop_is_refused():
    # the callee writes the table it is given: each thread's element changes in every iteration while other
    # threads read it without a barrier (a race), so the loop's reads cannot see the table as filled before it
    src = TABLE_LOOKUP.replace("    return tab[k];", "    tab[threadIdx.x % 16] = v;\n    return tab[k];")
    t = port(src)
    assert t.kernels == [] and t.blocking, t.text


# -- another thread's value computed from a loop-carried register ---------------------------------------------

ROTATE_SUMS = """
// xlate: x: in[m * 64], y: out[64], m: size(1..40), grid: 1, block: 50
__global__ void rotate_sums(const float* x, float* y, int m) {
    __shared__ float s[64];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < m; k++) acc += x[k * 64 + t] * (float)(k + 1);
    s[t] = acc;
    __syncthreads();
    y[t] = s[(t + 3) % 50] - s[t];
}
"""


def test_value_of_a_loop_carried_register_read_by_another_thread(tmp_path):
    # acc is a run-time loop's carried value: it cannot be recomputed for the writer, so the port takes it from
    # the block it already holds (tl.gather at the writer's lane); the 50 threads leave 14 padding lanes
    t = ported(ROTATE_SUMS, "rotate_sums")
    m = 7
    x = rng(3).standard_normal(m * 64).astype(np.float32)
    out = run(t.text, "rotate_sums", [buf("x", x), buf("y", poisoned(64, np.float32)), ScalarArg("m", m, "int32")],
              tmp_path)
    acc = (x.reshape(m, 64).astype(np.float64) * np.arange(1, m + 1)[:, None]).sum(0)[:50]
    want = acc[(np.arange(50) + 3) % 50] - acc
    np.testing.assert_allclose(out["y"][:50], want, rtol=1e-5, atol=1e-5)
    assert np.isnan(out["y"][50:]).all()  # no thread past the block writes
    guards_intact(out, "y")


# -- shared arrays carried across a run-time loop ------------------------------------------------------------

DIFFUSE = """
// xlate: x: in[n], y: out[n], n: size(1..3000), steps: scalar(0..6), grid: cdiv(n, 64), block: 64
__global__ void diffuse(const float* x, float* y, int n, int steps) {
    __shared__ float cell[64];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    cell[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = 0; s < steps; s++) {
        float left = t > 0 ? cell[t - 1] : cell[t];
        float right = t < 63 ? cell[t + 1] : cell[t];
        float mid = cell[t];
        __syncthreads();
        cell[t] = 0.25f * left + 0.5f * mid + 0.25f * right;
        __syncthreads();
    }
    if (i < n) y[i] = cell[t];
}
"""


def _diffuse(x: np.ndarray, steps: int) -> np.ndarray:
    n = len(x)
    nb = -(-n // 64)
    cell = np.zeros(nb * 64, dtype=np.float32)
    cell[:n] = x
    cell = cell.reshape(nb, 64)
    for _ in range(steps):
        left = np.concatenate([cell[:, :1], cell[:, :-1]], axis=1)
        right = np.concatenate([cell[:, 1:], cell[:, -1:]], axis=1)
        cell = np.float32(0.25) * left + np.float32(0.5) * cell + np.float32(0.25) * right
    return cell.reshape(-1)[:n]


def test_tile_updated_in_place_across_iterations_of_a_run_time_loop(tmp_path):
    t = ported(DIFFUSE, "diffuse")
    n = 203
    x = rng(4).standard_normal(n).astype(np.float32)
    for steps in (0, 1, 5):
        out = run(t.text, "diffuse", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                      ScalarArg("steps", steps, "int32")], tmp_path)
        np.testing.assert_allclose(out["y"], _diffuse(x, steps), rtol=1e-5, atol=1e-6)
        guards_intact(out, "y")


def test_tile_updated_without_a_barrier_between_reads_and_writes_is_refused():
    # the neighbours' reads and the in-place update share one barrier interval: a thread may read its neighbour's
    # element after the neighbour overwrote it
    src = DIFFUSE.replace("        float mid = cell[t];\n        __syncthreads();\n", "        float mid = cell[t];\n")
    _refused_as_race(src)


def test_tile_read_in_the_next_iteration_without_a_barrier_is_refused():
    # no barrier between an iteration's update and the next iteration's neighbour reads
    src = DIFFUSE.replace("        cell[t] = 0.25f * left + 0.5f * mid + 0.25f * right;\n        __syncthreads();\n",
                          "        cell[t] = 0.25f * left + 0.5f * mid + 0.25f * right;\n")
    _refused_as_race(src)


PAIR_AVERAGE = """
// xlate: x: in[n], avg: out[cdiv(n, 96)], n: size(1..3000), levels: scalar(0..6), grid: cdiv(n, 96), block: 48
__global__ void pair_average(const float* x, float* avg, int n, int levels) {
    __shared__ float v[96];
    int t = threadIdx.x;
    int base = blockIdx.x * 96;
    v[t] = base + t < n ? x[base + t] : 0.0f;
    v[t + 48] = base + t + 48 < n ? x[base + t + 48] : 0.0f;
    __syncthreads();
    int active = 48;
    for (int l = 0; l < levels; l++) {
        float a = 0.0f, b = 0.0f;
        if (t < active) {
            a = v[2 * t];
            b = v[2 * t + 1];
        }
        __syncthreads();
        if (t < active) v[t] = 0.5f * (a + b);
        active = active / 2;
        __syncthreads();
    }
    if (t == 0) avg[blockIdx.x] = v[0] + v[1] + v[95];
}
"""


def _pair_average(x: np.ndarray, levels: int) -> np.ndarray:
    nb = -(-len(x) // 96)
    v = np.zeros(nb * 96, dtype=np.float32)
    v[: len(x)] = x
    v = v.reshape(nb, 96)
    active = 48
    for _ in range(levels):
        pairs = np.float32(0.5) * (v[:, 0 : 2 * active : 2] + v[:, 1 : 2 * active : 2])
        v[:, :active] = pairs
        active //= 2
    return v[:, 0] + v[:, 1] + v[:, 95]


def test_array_of_two_block_tensors_halved_each_iteration(tmp_path):
    # 96 elements on a block of 48 threads (64 lanes): two carried tensors; a run-time count of halvings whose
    # active threads shrink with a loop-carried bound
    t = ported(PAIR_AVERAGE, "pair_average")
    n = 250
    x = rng(5).standard_normal(n).astype(np.float32)
    nb = -(-n // 96)
    for levels in (0, 2, 6):
        out = run(t.text, "pair_average", [buf("x", x), buf("avg", poisoned(nb, np.float32)),
                                           ScalarArg("n", n, "int32"), ScalarArg("levels", levels, "int32")], tmp_path)
        np.testing.assert_allclose(out["avg"], _pair_average(x, levels), rtol=1e-5, atol=1e-6)
        guards_intact(out, "avg")


LAGGED = """
// xlate: seed: in[64], out: out[rounds * 32], rounds: size(1..20), grid: 1, block: 32
__global__ void lagged(const unsigned int* seed, unsigned int* out, int rounds) {
    __shared__ unsigned int h[64];
    unsigned int* hi = &h[32];
    int t = threadIdx.x;
    h[t] = seed[t];
    hi[t] = seed[t + 32];
    __syncthreads();
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 32; k += 8) {
            if (t < 8) hi[k + t] = hi[k + t - 9] + (h[k + t] ^ 0x9e37u);
            __syncthreads();
        }
        out[r * 32 + t] = h[t] = hi[t];
        __syncthreads();
    }
}
"""


def _lagged(seed: np.ndarray, rounds: int) -> np.ndarray:
    h = seed.astype(np.uint64)
    out = []
    for _ in range(rounds):
        for k in range(0, 32, 8):
            for t in range(8):  # the 8 threads of a step read elements no thread of the step writes
                h[32 + k + t] = (h[32 + k + t - 9] + (h[k + t] ^ 0x9E37)) % (1 << 32)
        h[:32] = h[32:]
        out.append(h[:32].copy())
    return np.concatenate(out).astype(np.uint32)


def test_recurrence_through_a_pointer_into_the_array_across_iterations(tmp_path):
    # each round extends a lagged recurrence in 8-thread steps (unrolled), then shifts the high half down: the
    # stored values combine other threads' elements of earlier steps and rounds
    t = ported(LAGGED, "lagged")
    rounds = 5
    seed = rng(6).integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    out = run(t.text, "lagged", [buf("seed", seed), buf("out", poisoned(rounds * 32, np.uint32)),
                                 ScalarArg("rounds", rounds, "int32")], tmp_path)
    np.testing.assert_array_equal(out["out"], _lagged(seed, rounds))
    guards_intact(out, "out")


def test_recurrence_whose_step_reads_what_the_same_step_writes_is_refused():
    # a lag of 5 within steps of 8 threads: threads 5..7 read elements threads 0..2 write in the same interval
    _refused_as_race(LAGGED.replace("hi[k + t - 9]", "hi[k + t - 5]"))


WRITER_SCALED = """
// xlate: x: in[n], y: out[n], n: size(1..4096), m: size(1..160), grid: cdiv(n, 64), block: 48
__global__ void writer_scaled(const float* x, float* y, int n, int m) {
    __shared__ float s[160];
    for (int k = threadIdx.x; k < m; k += blockDim.x) s[k] = x[k] * (float)(threadIdx.x + 1);
    __syncthreads();
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n && threadIdx.x < m) y[i] = s[threadIdx.x] + s[(threadIdx.x * 3) % m];
}
"""


def test_block_stride_fill_scaled_by_the_writers_thread_index(tmp_path):
    # not a staging copy (the value names its writer's thread index): carried through the fill loop instead, in
    # three tensors of 64 lanes for 160 elements; the 48 threads write element k in pass k / 48
    t = ported(WRITER_SCALED, "writer_scaled")
    n, m = 150, 150
    x = rng(7).standard_normal(n).astype(np.float32)
    out = run(t.text, "writer_scaled", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                        ScalarArg("m", m, "int32")], tmp_path)
    k = np.arange(m)
    s = x[:m].astype(np.float64) * (k % 48 + 1)
    i = np.arange(n)
    tid = i % 64
    want = np.full(n, np.nan)
    ok = tid < 48
    want[ok] = s[tid[ok]] + s[(tid[ok] * 3) % m]
    np.testing.assert_allclose(out["y"], want, rtol=1e-5, atol=1e-5)
    guards_intact(out, "y")


OWN_SLOTS = """
// xlate: x: in[n], total: out[cdiv(n, 512)], n: size(1..5000), grid: cdiv(n, 512), block: 96
__global__ void own_slots(const float* x, float* total, int n) {
    __shared__ float part[96];
    int t = threadIdx.x;
    int start = blockIdx.x * 512;
    int stop = min(start + 512, n);
    part[t] = 0.0f;
    for (int i = start + t; i < stop; i += 96) part[t] += x[i] * x[i];
    __syncthreads();
    if (t == 0) {
        for (int k = 1; k < 96; k++) part[0] += part[k];
        total[blockIdx.x] = part[0] > 10.0f ? part[0] : -part[0];
    }
}
"""


def test_own_slot_accumulation_then_one_thread_sums_them(tmp_path):
    # no barrier inside either loop: each thread adds to its own slot, then thread 0 alone runs 95 additions (a
    # run-time loop) and reads its own result before any barrier
    t = ported(OWN_SLOTS, "own_slots")
    n = 1300
    x = rng(8).standard_normal(n).astype(np.float32)
    nb = -(-n // 512)
    out = run(t.text, "own_slots", [buf("x", x), buf("total", poisoned(nb, np.float32)), ScalarArg("n", n, "int32")],
              tmp_path)
    xp = np.zeros(nb * 512)
    xp[:n] = x.astype(np.float64) ** 2
    sums = xp.reshape(nb, 512).sum(1)
    np.testing.assert_allclose(out["total"], np.where(sums > 10.0, sums, -sums), rtol=1e-4)
    guards_intact(out, "total")


def test_other_threads_slots_summed_without_a_barrier_are_refused():
    # every thread sums the slots right after its own accumulation: the other threads' slots may not be final
    _refused_as_race(OWN_SLOTS.replace("    __syncthreads();\n    if (t == 0) {", "    if (t == 0) {"))


STORE_THROUGH_LOCAL_POINTER = """
// xlate: w: in[32], x: inout[rows * 32], rows: size(1..20), grid: 1, block: 32
__global__ void weight_rows(const float* w, float* x, int rows) {
    __shared__ float wt[32];
    int t = threadIdx.x;
    wt[t] = w[31 - t];
    __syncthreads();
    for (int r = 0; r < rows; r++) {
        float* row = &x[r * 32];
        row[t] = row[t] * wt[t] + wt[(t + 1) % 32];
    }
}
"""


def test_table_read_in_a_loop_that_stores_through_a_pointer_it_declares(tmp_path):
    # the store through `row` could name any array to a syntactic look; the loop's dry run writes no shared array,
    # so the table written before the loop stays visible inside it
    t = ported(STORE_THROUGH_LOCAL_POINTER, "weight_rows")
    rows = 5
    w = rng(9).standard_normal(32).astype(np.float32)
    x = rng(10).standard_normal(rows * 32).astype(np.float32)
    out = run(t.text, "weight_rows", [buf("w", w), buf("x", x), ScalarArg("rows", rows, "int32")], tmp_path)
    wt = w[::-1]
    want = x.reshape(rows, 32) * wt + wt[(np.arange(32) + 1) % 32]
    np.testing.assert_allclose(out["x"], want.reshape(-1), rtol=1e-6)
    guards_intact(out, "x")


SHIFT_IN = """
// xlate: x: in[n], y: out[n], n: size(1..3000), steps: scalar(0..6), grid: cdiv(n, 64), block: 64
__global__ void shift_in(const float* x, float* y, int n, int steps) {
    __shared__ float ex[65];
    int t = threadIdx.x;
    int i = blockIdx.x * 64 + t;
    float v = i < n ? x[i] : 0.0f;
    if (t == 0) ex[64] = -1.0f;
    for (int s = 0; s < steps; s++) {
        ex[t] = v;
        __syncthreads();
        v = 0.5f * (v + ex[t + 1]);
        __syncthreads();
    }
    if (i < n) y[i] = v;
}
"""


def test_register_exchange_with_an_element_written_once_before_the_loop(tmp_path):
    # thread 0 writes the 65th element before the loop with no barrier after it: the loop's first barrier orders
    # it before thread 63 reads it; 65 elements take two tensors of 64 lanes
    t = ported(SHIFT_IN, "shift_in")
    n = 150
    x = rng(11).standard_normal(n).astype(np.float32)
    nb = -(-n // 64)
    for steps in (0, 1, 4):
        out = run(t.text, "shift_in", [buf("x", x), buf("y", poisoned(n, np.float32)), ScalarArg("n", n, "int32"),
                                       ScalarArg("steps", steps, "int32")], tmp_path)
        v = np.zeros(nb * 64, dtype=np.float32)
        v[:n] = x
        v = v.reshape(nb, 64)
        for _ in range(steps):
            ext = np.concatenate([v, np.full((nb, 1), -1.0, np.float32)], axis=1)
            v = np.float32(0.5) * (v + ext[:, 1:])
        np.testing.assert_allclose(out["y"], v.reshape(-1)[:n], rtol=1e-6)
        guards_intact(out, "y")


HALVING_EXTERN = """
// xlate: x: in[n], detail: out[n], top: out[cdiv(n, 128)], n: size(1..3000), levels: scalar(0..7),
// xlate: grid: cdiv(n, 128), block: 64, shmem: 512
__global__ void halving(const float* x, float* detail, float* top, int n, int levels) {
    extern __shared__ float half_buf[];
    int t = threadIdx.x;
    int base = blockIdx.x * 128;
    half_buf[t] = base + t < n ? x[base + t] : 0.0f;
    half_buf[64 + t] = base + 64 + t < n ? x[base + 64 + t] : 0.0f;
    __syncthreads();
    int active = 64;
    int out = base;
    for (int l = 0; l < levels; l++) {
        float a = 0.0f, b = 0.0f;
        if (t < active) {
            a = half_buf[2 * t];
            b = half_buf[2 * t + 1];
        }
        __syncthreads();
        if (t < active) {
            half_buf[t] = a + b;
            if (out + t < n) detail[out + t] = a - b;
        }
        out += active;
        active >>= 1;
        __syncthreads();
    }
    if (t == 0) top[blockIdx.x] = half_buf[0];
}
"""


def test_extern_array_sized_by_a_constant_shmem_halved_each_level(tmp_path):
    # a dynamic shared array: its 128 elements (512 bytes in the spec) are two tensors of the 64 lanes
    t = ported(HALVING_EXTERN, "halving")
    n = 300
    x = rng(12).standard_normal(n).astype(np.float32)
    nb = -(-n // 128)
    for levels in (0, 3, 7):
        out = run(t.text, "halving", [buf("x", x), buf("detail", poisoned(n, np.float32)),
                                      buf("top", poisoned(nb, np.float32)), ScalarArg("n", n, "int32"),
                                      ScalarArg("levels", levels, "int32")], tmp_path)
        v = np.zeros((nb, 128), dtype=np.float32)
        v.reshape(-1)[:n] = x
        detail = np.full(n, np.nan, dtype=np.float32)
        active, off = 64, 0
        for _ in range(levels):
            a, b = v[:, 0 : 2 * active : 2].copy(), v[:, 1 : 2 * active : 2].copy()
            v[:, :active] = a + b
            for blk in range(nb):
                for k in range(active):
                    if blk * 128 + off + k < n:
                        detail[blk * 128 + off + k] = a[blk, k] - b[blk, k]
            off += active
            active >>= 1
        np.testing.assert_allclose(out["detail"], detail, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(out["top"], v[:, 0], rtol=1e-5, atol=1e-6)
        guards_intact(out, "detail")
        guards_intact(out, "top")


def test_element_another_thread_wrote_one_iteration_earlier_is_refused():
    _refused_as_race("""
// xlate: in: in[n], out: out[n], n: size(1..1000), m: scalar(0..8), grid: cdiv(n, 128), block: 128
__global__ void k(const float* in, float* out, int n, int m) {
      __shared__ float s[256];
      int t = threadIdx.x;
      int i = blockIdx.x * 128 + t;
      s[t] = i < n ? in[i] : 0.0f;
      s[t + 128] = 0.0f;
      __syncthreads();
      float acc = 0.0f;
      for (int j = 0; j < m; j++) {
        acc += s[t + j];
        s[t + j] = acc;
      }
      __syncthreads();
      if (i < n) out[i] = s[t];
    }
    """)
