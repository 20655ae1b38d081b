"""What the speed work may not change: the parsed-data cache gives what YAML gives, a combined query attributes
each pattern to the file it came from, the HIP translator's declaration lookup finds the nearest declaration
before a use (shadowing included), and a migrate task hands its parse to port_file unchanged."""

from __future__ import annotations

import textwrap

import tree_sitter as ts
import yaml

from xlate import resources
from xlate.parse import languages, parse_string
from xlate.translate.base import TranslateOptions
from xlate.translate.hip import CudaToHip, queries


def test_yaml_cache_returns_what_yaml_parses(tmp_path, monkeypatch):
    monkeypatch.setenv("XLATE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "t.yaml"
    src.write_text("a: [1, 2.5, x]\nb: {c: null, d: true}\nshared: &s {k: 3}\nref: *s\n")
    expected = yaml.safe_load(src.read_text())
    first = resources.load_yaml.__wrapped__(src)
    stored = list((tmp_path / "cache" / "yaml").glob("*.marshal"))
    assert first == expected and len(stored) == 1
    assert resources.load_yaml.__wrapped__(src) == expected  # now from the cache
    src.write_text("a: 2\n")  # new bytes: a new key, never the old parse
    assert resources.load_yaml.__wrapped__(src) == {"a": 2}
    stored[0].write_bytes(b"\x00garbage")
    src.write_text("a: [1, 2.5, x]\nb: {c: null, d: true}\nshared: &s {k: 3}\nref: *s\n")
    assert resources.load_yaml.__wrapped__(src) == expected  # a damaged entry is parsed again


def test_yaml_values_marshal_cannot_hold_are_parsed_every_time(tmp_path, monkeypatch):
    monkeypatch.setenv("XLATE_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "d.yaml"
    src.write_text("when: 2026-12-05\n")
    assert resources.load_yaml.__wrapped__(src) == yaml.safe_load(src.read_text())
    assert not list((tmp_path / "cache").rglob("*.marshal"))


def test_combined_query_owners_match_each_file_alone():
    for grammar in ("cuda", "cpp"):
        names = tuple(sorted(p.stem for p in (resources.grammars_dir() / grammar).glob("*.scm")))
        _, owners = languages._combined(grammar, names)
        expected = [n for n in names for _ in range(languages.query(grammar, n).pattern_count)]
        assert [name for _, name in owners] == expected
        assert [i for i, _ in owners] == [expected.index(n) for n in expected]
    for names in (queries.FORWARD, queries.REVERSE, ("declared", "definitions")):
        _, owner = queries.combined(names)
        language = languages.language("cuda")
        assert list(owner) == [n for n in names for _ in range(ts.Query(language, queries.QUERIES[n]).pattern_count)]


def test_pattern_owners_by_start_byte():
    parts = ["(identifier) @a", "(number_literal) @b\n(string_literal) @c", "(comment) @d"]
    q = ts.Query(languages.language("cuda"), "\n".join(parts))
    assert languages.pattern_owners(q, parts, ["one", "two", "three"]) == ["one", "two", "two", "three"]


SHADOWED = textwrap.dedent("""\
    #include <cuda_fp16.h>
    __global__ void k(float* out, const __half* in, int n) {
        __half v = in[threadIdx.x % n];
        float w = __shfl_down_sync(0xffffffff, (float)v, 1);
        {
            float v = w * 2.0f;
            out[threadIdx.x] = __shfl_down_sync(0xffffffff, v, 2);
        }
        __half u = v;
        out[threadIdx.x + n] = __half2float(__shfl_xor_sync(0xffffffff, u, 1));
        out[threadIdx.x + 2 * n] = __half2float(__shfl_xor_sync(0xffffffff, v, 4));
    }
""")


def test_shuffled_type_is_the_nearest_declaration_before_the_use():
    """The inner `float v` is the nearest declaration before the second shuffle (a float: nothing to say); the
    `__half u` and the last `v` (read after the block, by source order the float is still nearest: the lookup is
    positional, as it was before it was indexed) decide the rest."""
    unit = parse_string(SHADOWED, "k.cu")
    tr = CudaToHip().translate(unit, unit.text, TranslateOptions(arch="gfx90a"))
    flagged = sorted(d.line for d in tr.diagnostics if d.code == "XL1113")
    assert flagged == [10]
