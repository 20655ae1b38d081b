"""Spec inference: values the host ties to the sizes (issue #15, the "tied" class of source faults). A value the
program derives from its sizes before the launch (`int steps = log2(n / 2)`) is passed to the kernel as that
expression (`steps: const(log2(n / 2))`), never drawn apart from them: drawn freely, a correct kernel strides past
its shared arrays. Each test is a small host+kernel program written for it; the spec is asserted exactly, its
expressions are evaluated as the gate does against the program's own C arithmetic, and the gate's case strategy
is drawn from on the CPU."""

from __future__ import annotations

import math

import sympy as sp

from tests.spec_inference import resolve, usable
from xlate.parse import parse_string
from xlate.specs import expr
from xlate.specs.infer.ceval import Evaluator, parse_expr
from xlate.specs.infer.program import program_for
from xlate.specs.infer.sym import to_text
from xlate.specs.infer.values import Num


def item(res, name: str) -> str:
    return next(p for p in res.annotation().split(", ") if p.startswith(f"{name}: "))


# -- log2 of a size ------------------------------------------------------------------------------------------

LOG2_PROGRAM = """
__global__ void halve(const float* in, float* out, int len, int rounds) {
  extern __shared__ float buf[];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * len + t];
  __syncthreads();
  int gap = 1;
  for (int r = 0; r < rounds; r++) {
    float v = (t + gap < len) ? buf[t + gap] : 0.0f;
    __syncthreads();
    buf[t] += v;
    gap *= 2;
    __syncthreads();
  }
  out[blockIdx.x * len + t] = buf[2 * gap - 1 - t % gap];
}
int main(int argc, char** argv) {
  int len = atoi(argv[1]);
  int batches = 300;
  if (len > 64) return 1;
  float *d_in, *d_out;
  cudaMalloc((void**)&d_in, batches * len * sizeof(float));
  cudaMalloc((void**)&d_out, batches * len * sizeof(float));
  int rounds = log2(len / 2);
  halve<<<batches, len, len * sizeof(float)>>>(d_in, d_out, len, rounds);
}
"""


def test_a_count_of_halvings_the_host_computes_with_log2_is_tied_to_the_size(tmp_path):
    """`int rounds = log2(len / 2)`: the kernel reads `buf[2 * gap - 1 - ...]` with gap = 2^rounds, inside the
    `len` floats of shared memory only while rounds <= log2(len / 2). Drawn as a free small scalar (`scalar(0..16)`)
    it reads far past them; tied, the spec evaluates it as C truncates the double log2 gives."""
    res = resolve(tmp_path, LOG2_PROGRAM, "halve")
    assert res.annotation() == ("in: in[len * batches], out: out[len * batches], len: size(1..1024), "
                                "rounds: const(log2(len / 2)), batches: size(1..300), grid: batches, block: len, "
                                "shmem: 4 * len")
    usable(res)
    text = item(res, "rounds").split("const(", 1)[1][:-1]
    for n in (2, 3, 4, 5, 7, 8, 9, 31, 33, 63, 64, 1000, 4095):
        assert expr.evaluate(text, {"len": n}) == int(math.log2(n // 2))  # C: (int)log2((double)(n / 2))


def test_log2_of_a_size_in_float_arithmetic_stays_unknown(tmp_path):
    """Only the truncation to an integer makes log2 a whole number: `0.5f * log2(n)` kept as a float is not
    the floor of anything, and the parameter stays a value of its own."""
    res = resolve(tmp_path, """
    __global__ void scale(float* x, int n, float s) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= s;
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      float s = 0.5f * log2(n);
      scale<<<(n + 255) / 256, 256>>>(d, n, s);
    }
    """, "scale")
    assert "log2" not in res.annotation()
    assert item(res, "s") == "s: scalar"
    usable(res)


# -- a share of a size per thread of a block the program fixes --------------------------------------------------

PER_THREAD_PROGRAM = """
__global__ void rowsum(const float* m, float* out, int n, int per) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  float s = 0.0f;
  for (int k = 0; k < per; k++) s += m[row * n + threadIdx.x * per + k];
  atomicAdd(&out[row], s);
}
void run(const float* m, float* out, int n, int tx, int ty) {
  int per = n / tx;
  dim3 grid(1, n / ty);
  dim3 block(tx, ty);
  rowsum<<<grid, block>>>(m, out, n, per);
}
int main(int argc, char** argv) {
  int n = 1000;
  float *m, *out;
  cudaMalloc((void**)&m, n * n * sizeof(float));
  cudaMalloc((void**)&out, n * sizeof(float));
  run(m, out, n, 40, 5);
}
"""


def test_a_share_per_thread_through_the_programs_block_is_tied_to_the_size(tmp_path):
    """`per = n / tx` with `tx` the block's x the program fixes (40): each of the 40 threads of a row reads `per`
    elements of its `n`, which stays inside the row only while per <= n / 40. Drawn as a free scalar beside n it
    reads past the matrix; tied, with the block's own constant, it is `const(n / 40)`."""
    res = resolve(tmp_path, PER_THREAD_PROGRAM, "rowsum")
    assert item(res, "per") == "per: const(n / 40)"
    assert res.annotation() == ("m: in[max(n * n, 5 * n * (n / 5) - n + 40 * per)], out: inout[n], "
                                "n: size(1..1000), per: const(n / 40), "
                                "grid: (1, n / 5), block: (40, 5), where: n % 5 == 0")
    usable(res)
    text = item(res, "per").split("const(", 1)[1][:-1]
    for n in (5, 35, 40, 995, 1000):
        per = expr.evaluate(text, {"n": n})
        assert 39 * per + per <= n  # the last thread's last read stays in its row
        assert per == n // 40


def test_a_share_per_thread_of_a_block_read_at_run_time_is_not_tied(tmp_path):
    """The same program with the block's x read from the command line: the spec's block is not the value the
    host divided by, so `n / tx` cannot be written over the spec's names and `per` stays a value of its own."""
    res = resolve(tmp_path, PER_THREAD_PROGRAM.replace("run(m, out, n, 40, 5);", "run(m, out, n, atoi(argv[1]), 5);"),
                  "rowsum")
    assert "per: const" not in res.annotation()


# -- padding up to a multiple, and a count derived through the program's constants --------------------------------

PAD_PROGRAM = """
#define CHUNK 256
__global__ void chunk_max(const int* in, int* out, int chunks, int width) {
  __shared__ int s[CHUNK];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * CHUNK + t];
  __syncthreads();
  if (t == 0) {
    int m = s[0];
    for (int k = 1; k < width; k++) m = max(m, s[k]);
    out[blockIdx.x] = m;
  }
}
int main(int argc, char** argv) {
  unsigned int bytes = atoi(argv[1]);
  unsigned int pad = bytes % (CHUNK * 4) == 0 ? 0 : CHUNK * 4 - bytes % (CHUNK * 4);
  unsigned int count = (bytes + pad) / sizeof(int);
  unsigned int chunks = count * sizeof(int) / (CHUNK * 4);
  int *in, *out;
  cudaMalloc((void**)&in, bytes + pad);
  cudaMalloc((void**)&out, chunks * sizeof(int));
  chunk_max<<<chunks, CHUNK>>>(in, out, chunks, 200);
}
"""


def test_a_padding_to_a_multiple_and_the_count_of_chunks_are_tied_to_the_chunks(tmp_path):
    """`pad = bytes % 1024 == 0 ? 0 : 1024 - bytes % 1024` rounds the input up to whole chunks of CHUNK ints, and
    `chunks` counts them: every block reads its whole chunk. With the padding unknown (a size of its own) the
    input's length was `(bytes + pad) / 4`, drawn apart from `chunks`, and a block read past it; read as
    `1024 * cdiv(bytes, 1024) - bytes`, the chunk count is that length's, so the input is `256 * chunks`."""
    res = resolve(tmp_path, PAD_PROGRAM, "chunk_max")
    assert res.annotation() == ("in: in[256 * chunks], out: out[chunks], chunks: size(1..4096), width: const(200), "
                                "grid: chunks, block: 256")
    usable(res)


def test_the_padding_idiom_in_its_other_spellings(tmp_path):
    """`x % b ? b - x % b : 0` and the rounded size `x % b == 0 ? x : x + b - x % b` are the same padding; a
    length computed from them is `cdiv(x, b) * b`, checked against C's arithmetic for sizes around the multiple."""
    path = tmp_path / "k.cu"
    path.write_text("__global__ void k(float* x) { x[0] = 0; }\n")
    unit = parse_string(path.read_text(), str(path), "cuda")
    ev = Evaluator(program_for(unit, [unit]))
    x = sp.Symbol("x", integer=True, positive=True)
    for code, c in (("x % 96 ? 96 - x % 96 : 0", lambda n: (96 - n % 96) % 96),
                    ("(x % 96 == 0) ? x : x + 96 - x % 96", lambda n: -(-n // 96) * 96),
                    ("x % 96 != 0 ? x + (96 - x % 96) : x", lambda n: -(-n // 96) * 96)):
        _, node = parse_expr(code)
        v = ev.ev(node, {"x": Num(x)})
        assert v is not None, code
        text = to_text(v.e, {"x": "x"})
        for n in (1, 95, 96, 97, 191, 192, 1000):
            assert expr.evaluate(text, {"x": n}) == c(n), (code, text, n)


def test_a_tie_beside_a_literal_argument_holds(tmp_path):
    """`tail<<<..>>>(x, y, n, n - skip, 3)`: the literal 3 is the spec's constant (`passes: const(3)`), never
    drawn, so the count the host computes stays tied to `n` (only a 0, which may be a placeholder a size replaces,
    or a launcher's literal parameter drawn as a size, leaves a tie read under it unsafe). Refused, `m` was a size
    of its own and `n` a small scalar: `x[n - m + i]` read before the buffer."""
    res = resolve(tmp_path, """
    __global__ void tail(const float* x, float* y, int n, int m, int passes) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < m)
        for (int p = 0; p < passes; p++) y[i] += x[n - m + i];
    }
    int main(int argc, char** argv) {
      int n = atoi(argv[1]);
      int skip = atoi(argv[2]);
      float *x, *y;
      cudaMalloc((void**)&x, n * sizeof(float));
      cudaMalloc((void**)&y, n * sizeof(float));
      tail<<<(n - skip + 255) / 256, 256>>>(x, y, n, n - skip, 3);
    }
    """, "tail")
    assert res.annotation() == ("x: in[n], y: inout[max(m, n)], n: size(1..4096), m: const(n - skip), "
                                "passes: const(3), skip: size(1..4096), grid: cdiv(n - skip, 256), block: 256, "
                                "where: cdiv(n - skip, 256) >= 1")
    usable(res)


# -- the host's early returns and the branches around the launch -------------------------------------------------

SHUFFLE_PROGRAM = """
template <int kTile>
__global__ void shuffle(const float* x, float* y, int groups, int per) {
  __shared__ float tile[kTile];
  int c = threadIdx.x;
  int C = groups * per;
  if (c < C) tile[c] = x[blockIdx.x * C + c];
  __syncthreads();
  if (c < C) y[blockIdx.x * C + (c % per) * groups + c / per] = tile[c];
}
bool run(const float* x, float* y, int rows, int C, int G) {
  if (C % G != 0 || rows < 1) return false;
  int K = C / G;
  if (C <= 64) {
    shuffle<64><<<rows, 64>>>(x, y, G, K);
  } else if (C <= 256) {
    shuffle<256><<<rows, 256>>>(x, y, G, K);
  }
  return true;
}
int main(int argc, char** argv) {
  int G = atoi(argv[1]);
  int rows = 100;
  for (int C = 16; C <= 256; C = C * 4) {
    float *x, *y;
    cudaMalloc((void**)&x, rows * C * sizeof(float));
    cudaMalloc((void**)&y, rows * C * sizeof(float));
    run(x, y, rows, C, G);
  }
}
"""


def test_an_early_return_unless_a_size_divides_and_the_branch_that_picks_the_tile(tmp_path):
    """`if (C % G != 0) return false;` before the launch: the kernel gets `per = C / G` on the promise that
    `groups * per` is C (otherwise two channels land on one output: a race). And the launch followed,
    `shuffle<64>` under `if (C <= 64)`, runs only with the Cs the branch admits (16 and 64 of 16, 64, 256): with
    C = 256 its 64-float tile overflows."""
    res = resolve(tmp_path, SHUFFLE_PROGRAM, "shuffle")
    assert res.annotation() == (
        "x: in[max(C * rows, groups * per * rows)], y: out[max(C * rows, groups * per * rows)], "
        "groups: scalar(1..16), per: const(C / groups), rows: size(1..100), C: choice(16|64), kTile: 64, "
        "grid: rows, block: 64, where: C % groups == 0")
    usable(res)
    seen = 0
    for c in (16, 64):
        for g in range(1, 17):
            env = {"C": c, "groups": g}
            if not expr.evaluate("C % groups == 0", env):
                continue
            per = expr.evaluate("C / groups", env)
            assert g * per == c <= 64  # every channel read once, written once, inside the tile
            seen += 1
    assert seen == 10


def test_an_early_return_on_something_else_adds_nothing(tmp_path):
    """Only remainders are read from an early return: `if (rows < 1) return` says nothing the spec can draw."""
    res = resolve(tmp_path, SHUFFLE_PROGRAM.replace("if (C % G != 0 || rows < 1) return false;",
                                                    "if (rows < 1) return false;"), "shuffle")
    assert "where" not in res.annotation()


TRANSPOSE_PROGRAM = """
__global__ void transpose16(const float* in, float* out, int n) {
  __shared__ float t[16][17];
  int x = blockIdx.x * 16 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
  t[threadIdx.y][threadIdx.x] = in[y * n + x];
  __syncthreads();
  out[(blockIdx.x * 16 + threadIdx.y) * n + blockIdx.y * 16 + threadIdx.x] = t[threadIdx.x][threadIdx.y];
}
int main(int argc, char** argv) {
  int n = 512;
  if (argc > 1) {
    n = atoi(argv[1]);
    if (n % 16 != 0) {
      printf("n must be a multiple of 16\\n");
      exit(1);
    }
  }
  float *in, *out;
  cudaMalloc((void**)&in, n * n * sizeof(float));
  cudaMalloc((void**)&out, n * n * sizeof(float));
  transpose16<<<dim3((n + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(in, out, n);
}
"""


def test_an_exit_unless_a_size_divides_where_the_size_is_read(tmp_path):
    """`n = atoi(argv[1]); if (n % 16 != 0) exit(1);` inside the branch that reads n: the n the launch gets is
    that one, checked. The unguarded 16 x 16 tiles stay inside their rows only for multiples of 16 (n = 17: the
    tile of the last column writes into the next row, which another block writes too)."""
    res = resolve(tmp_path, TRANSPOSE_PROGRAM, "transpose16")
    assert res.annotation() == ("in: in[n * n], out: out[n * n], n: size(1..512), grid: (cdiv(n, 16), cdiv(n, 16)), "
                                "block: (16, 16), where: n % 16 == 0")
    usable(res)
    for n in (16, 32, 512):
        last = (16 * expr.evaluate("cdiv(n, 16)", {"n": n}) - 1) * n + 16 * expr.evaluate("cdiv(n, 16)", {"n": n}) - 1
        assert last < n * n  # the last block's last write stays inside out


def test_a_check_in_a_branch_on_a_value_set_elsewhere_adds_nothing(tmp_path):
    """The same check under `if (argc > 2)`, with n read before it, outside that branch: the launch may get an
    unchecked n, so nothing is said."""
    program = TRANSPOSE_PROGRAM.replace("""  if (argc > 1) {
    n = atoi(argv[1]);
    if (n % 16 != 0) {""", """  n = atoi(argv[1]);
  if (argc > 2) {
    if (n % 16 != 0) {""")
    res = resolve(tmp_path, program, "transpose16")
    assert "where" not in res.annotation()


def test_a_float_argument_divided_by_a_size_is_no_const(tmp_path):
    """`norm<<<..>>>(x, n, 1.0f / n)`: in a spec `/` divides integers (`const(1.0 * (1 / n))` reads 0 for every
    n > 1), so a float the host divides by a size stays a scalar around the program's value; a product
    (`2.0f * n`) is written as it is."""
    program = """
    __global__ void norm(float* x, int n, float s) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= s;
    }
    int main(int argc, char** argv) {
      int n = 1000;
      float* d;
      cudaMalloc((void**)&d, n * sizeof(float));
      norm<<<(n + 255) / 256, 256>>>(d, n, ARG);
    }
    """
    res = resolve(tmp_path, program.replace("ARG", "1.0f / n"), "norm")
    assert item(res, "s") == "s: scalar(0.0005..0.002)"
    usable(res)
    res = resolve(tmp_path, program.replace("ARG", "2.0f * n"), "norm")
    assert item(res, "s") == "s: const(2.0 * n)"
    assert expr.evaluate("2.0 * n", {"n": 7}) == 14.0
