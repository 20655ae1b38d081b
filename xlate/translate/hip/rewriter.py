"""Renaming over the syntax tree: whole identifiers, type names, namespaces, #include paths and macro bodies.

Candidates come from one scan of the text for identifier-shaped words that some table knows (or that look
like a vendor API name); each is checked against the tree-sitter node at its offset, so words inside
comments, string and character literals, member names (`prop.major`, `s.cudaMalloc()`), names qualified by
a user namespace, and identifiers that merely contain a known name (`mycudaMalloc`) are never touched.
Macro bodies, which tree-sitter keeps as raw text, are parsed on their own when they are C++ by themselves
and tokenized otherwise (job.parse_macro_body, ctokens).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import tree_sitter as ts

from xlate.translate.hip.ctokens import identifiers as macro_identifiers
from xlate.translate.hip.diagnostics import rules_file
from xlate.translate.hip.job import Job, Region, parse_branch, parse_macro_body
from xlate.translate.hip.project import included_names
from xlate.translate.hip.tables import Mapping, MappingTables, version_status

UNQUALIFIED_OK = {"std", ""}  # `std::x` and `::x` are still the global names


@functools.cache
def vendor_patterns(side: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(rx), fam) for rx, fam in rules_file("names.yaml")[side])


def vendor_family(side: str, name: str) -> str | None:
    if not _vendor_any(side).match(name):
        return None
    for rx, fam in vendor_patterns(side):
        if rx.search(name):
            return fam
    return None


@functools.cache
def _vendor_any(side: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{rx.pattern})" for rx, _ in vendor_patterns(side)))


@functools.cache
def vendor_prefixes(side: str) -> frozenset[str]:
    """Literal 3-letter starts of the names.yaml patterns (`^(cublas|CUBLAS_)` -> cub, CUB)."""
    out = set()
    for rx, _ in vendor_patterns(side):
        body = rx.pattern.lstrip("^").strip("()")
        for alt in body.split("|"):
            lit = re.match(r"[A-Za-z_]+", alt.strip("()"))
            if lit:
                out.add(lit.group(0)[:3])
    return frozenset(out)


def candidate_regex(words: set[str], side: str) -> re.Pattern[bytes]:
    """Words that could be a table name or a vendor name, found by the regex engine rather than a Python loop:
    the 3-letter starts of every known name (shorter names whole), as a trie so the engine prunes early."""
    starts = {w[:3] for w in words if len(w) >= 3} | vendor_prefixes(side)
    short = {w for w in words if len(w) < 3}
    alts = [_trie(starts) + r"\w*", *sorted(re.escape(w) + r"(?![A-Za-z0-9_])" for w in short)]
    return re.compile(("(?<![A-Za-z0-9_])(?:" + "|".join(alts) + ")").encode())


def _trie(words: set[str]) -> str:
    """A regex matching exactly `words` (non-empty strings), factored by common prefixes."""
    if not words:
        return "(?!)"
    groups: dict[str, set[str]] = {}
    end = False
    for w in words:
        if w:
            groups.setdefault(w[0], set()).add(w[1:])
        else:
            end = True
    parts = [re.escape(c) + (_trie(rest) if rest != {""} else "") for c, rest in sorted(groups.items())]
    if len(parts) == 1 and not end:
        return parts[0]
    return "(?:" + "|".join(parts) + ")" + ("?" if end else "")


@dataclass
class Unknown:
    family: str
    offset: int
    count: int = 0


@dataclass
class Renamer:
    job: Job
    builtin_ids: dict[str, Mapping]  # structural-level identifier rules (compat identifiers, reverse spellings)
    helper_of: dict[str, tuple[str | None, str | None]]  # name -> (compat helper, diagnostic code)
    unknown: dict[str, Unknown] = field(default_factory=dict)
    source_side: str = "cuda"

    def __post_init__(self) -> None:
        tables: MappingTables = self.job.tables
        key = ("renamer", self.source_side, tuple(sorted(self.builtin_ids)))
        cached = tables.cache.get(key)
        if cached is None:  # per table set, not per file: the tables hold thousands of names
            id_names = tables.names("identifier") | set(self.builtin_ids)
            ns_names = tables.names("namespace")
            both = ns_names | {m.target for m in (tables.lookup("namespace", n) for n in ns_names) if m and m.target}
            cached = tables.cache[key] = (id_names, ns_names, {n.encode() for n in id_names | ns_names},
                                          candidate_regex(id_names | ns_names, self.source_side), both | UNQUALIFIED_OK)
        self.id_names, self.ns_names, self.interesting, self.candidates, self.known_scopes = cached

    # -- the file --------------------------------------------------------------------------------------------
    def run(self, macro_regions: dict[int, Region | None],
            masked: dict[tuple[int, int], Region | None] | None = None) -> None:
        masked = masked or {}
        job = self.job
        main = job.main
        root = main.root
        top = root.children  # candidates come in offset order: walk the top level once, not per lookup
        i = 0
        for m in self.candidates.finditer(job.data):
            word = m.group()
            if word not in self.interesting and not vendor_family(self.source_side, word.decode()):
                continue
            s, e = m.start(), m.end()
            if job.skipped(s, e) or job.edits.is_claimed(s, e):
                continue
            while i < len(top) and top[i].end_byte <= s:
                i += 1
            holder = top[i] if i < len(top) and top[i].start_byte <= s else root
            node = holder.descendant_for_byte_range(s, e)
            if node is None:
                continue
            if node.type == "preproc_arg":
                if node.start_byte not in macro_regions:
                    macro_regions[node.start_byte] = None  # a macro body not parsed yet: tokenized below
                continue
            if node.start_byte != s or node.end_byte != e:
                continue
            self.node(main, node, word.decode(), s, e)
        for start, region in sorted(macro_regions.items()):
            if region is not None:
                self.region_words(region)
            else:
                self.macro_tokens(start)
        # Code the tree does not cover: inactive branches of a conditional that split a statement (parsed on
        # their own where they are C++ by themselves), and what the grammar could not read (token by token).
        for (lo, hi), region in masked.items():
            if region is not None:
                self.region_words(region)
            else:
                self.token_words(lo, hi)
        for lo, hi in job.gaps:
            self.token_words(lo, hi)

    def region_words(self, region: Region) -> None:
        for m in self.candidates.finditer(region.data, region.lo, region.hi):
            word = m.group()
            if word not in self.interesting and not vendor_family(self.source_side, word.decode()):
                continue
            node = region.root.descendant_for_byte_range(m.start(), m.end())
            if node is None or node.start_byte != m.start() or node.end_byte != m.end():
                continue
            s, e = m.start() + region.shift, m.end() + region.shift
            if self.job.edits.is_claimed(s, e) or self.job.skipped(s, e):
                continue
            self.node(region, node, word.decode(), s, e)

    def macro_tokens(self, start: int) -> None:
        """A macro body that is not C++ on its own: rename whole identifier tokens."""
        node = self.job.main.root.descendant_for_byte_range(start, start + 1)
        while node is not None and node.type != "preproc_arg":
            node = node.parent
        if node is not None:
            self.token_words(node.start_byte, node.end_byte)

    def token_words(self, lo: int, hi: int) -> None:
        """Rename the whole identifier tokens of file bytes [lo, hi) that no tree covers."""
        job = self.job
        for use in macro_identifiers(job.data[lo:hi]):
            name = use.token.text
            s, e = lo + use.token.start, lo + use.token.end
            if use.member or job.edits.is_claimed(s, e) or job.skipped(s, e):
                continue
            if use.qualifies:
                self.namespace(job.main, s, e, name)
                continue
            if use.scope is not None and use.scope not in self.known_scopes:
                continue
            if use.pasted:
                if name in self.id_names:
                    job.diag("XL1006", job.main, s, once=name, name=name)
                continue
            self.identifier(job.main, None, name, s, e)

    # -- one token -------------------------------------------------------------------------------------------
    def node(self, region: Region, node: ts.Node, name: str, s: int, e: int) -> None:
        t = node.type
        if t in ("identifier", "type_identifier"):
            parent = node.parent
            if parent is not None and parent.type == "qualified_identifier" and parent.child_by_field_name("name") == node:
                scope = parent.child_by_field_name("scope")
                if scope is not None and region.text(scope) not in self.known_scopes:
                    return  # mylib::cudaMalloc is the project's own
            if parent is not None and parent.type == "using_declaration" and any(c.type == "namespace" for c in parent.children):
                self.namespace(region, s, e, name)
                return
            if parent is not None and parent.type == "function_declarator" and self._in_user_namespace(region, node):
                return  # namespace mylib { void cudaMalloc(...); }: the project's own function
            self.identifier(region, node, name, s, e)
        elif t == "namespace_identifier":
            self.namespace(region, s, e, name)

    def _in_user_namespace(self, region: Region, node: ts.Node) -> bool:
        cur = node.parent
        while cur is not None:
            if cur.type == "namespace_definition":
                ns = cur.child_by_field_name("name")
                if ns is None or region.text(ns) not in self.known_scopes:
                    return True
            cur = cur.parent
        return False

    def identifier(self, region: Region, node: ts.Node | None, name: str, s: int, e: int) -> None:
        job = self.job
        m = job.tables.override("identifier", name) or self.builtin_ids.get(name) or job.tables.lookup("identifier", name)
        if m is not None and m.target != name and job.users_own(region if node is not None else job.main,
                                                                 node if node is not None else s, name):
            return  # the file's own declaration (an identity entry changes nothing: no need to ask)
        if m is None:
            fam = vendor_family(self.source_side, name)
            if fam is not None:
                u = self.unknown.setdefault(name, Unknown(fam, s))
                u.count += 1
            return
        job.edits.claim(s, e)
        where = node if node is not None else s
        if m.target is None:
            job.stats.count("unsupported", m.family, name)
            if m.origin.startswith("user:"):
                job.diag("XL1005", region, where, rule=m.rule, once=name, name=name, origin=m.origin,
                         note=_note(m.note))
            else:
                job.diag("XL1002" if job.direction == "cuda->hip" else "XL1402", region, where, rule=m.rule,
                         once=name, name=name, family=m.family, note=_note(m.note))
            return
        if not self.rocm_allows(region, where, m):
            return
        job.stats.count("converted", m.family, name)
        if m.target != name:
            job.edits.replace(s, e, m.target, m.rule)
        helper, code = self.helper_of.get(name, (None, None))
        if helper and m.priority != "takeover":
            job.helpers.add(helper)
        if code and m.priority != "takeover":
            job.diag(code, region, where, rule=m.rule, once=name, name=name, target=m.target,
                     preserved=job.rules["_preserved"])
        if m.note and m.target != name:  # identity entries' notes say why nothing changes
            job.diag("XL1004", region, where, rule=m.rule, once=name, name=name, target=m.target, note=m.note)

    def namespace(self, region: Region, s: int, e: int, name: str) -> None:
        job = self.job
        m = job.tables.lookup("namespace", name)
        if m is None or not job.edits.claim(s, e):
            return
        if m.target is None:
            job.stats.count("unsupported", m.family, name)
            job.diag("XL1002" if job.direction == "cuda->hip" else "XL1402", region, s, rule=m.rule, once=name,
                     name=name, family=m.family, note=_note(m.note))
            return
        job.stats.count("converted", m.family, name)
        if m.target != name:
            job.edits.replace(s, e, m.target, m.rule)

    def rocm_allows(self, region: Region, where: ts.Node | int, m: Mapping) -> bool:
        """The user's ROCm has m.target: False (name left as it is, XL1008/XL1010) when it was added later or is
        removed by then; a deprecated one is emitted with XL1011."""
        job = self.job
        if job.direction != "cuda->hip" or m.origin.startswith("user:"):
            return True
        status = version_status(m, job.rocm)
        if status == "ok":
            return True
        if status == "deprecated":
            job.diag("XL1011", region, where, rule=m.rule, once=m.name, name=m.name, target=m.target,
                     rocm=m.deprecated, have=job.rocm)
            return True
        job.stats.count("unsupported", m.family, m.name)
        if status == "newer":
            job.diag("XL1008", region, where, rule=m.rule, once=m.name, name=m.name, target=m.target, rocm=m.rocm,
                     have=job.rocm)
        else:
            job.diag("XL1010", region, where, rule=m.rule, once=m.name, name=m.name, target=m.target,
                     rocm=m.removed, have=job.rocm)
        return False

    # -- includes --------------------------------------------------------------------------------------------
    def includes(self) -> list[tuple[ts.Node, str, str | None]]:
        """Rename #include paths; returns (include node, original path, new path or None)."""
        job = self.job
        out = []
        for m in job.query("macros", job.main):
            if "include" not in m:
                continue
            inc, path = m["include"][0], m["path"][0]
            if job.skipped(inc.start_byte, inc.end_byte):
                continue
            if path.type not in ("system_lib_string", "string_literal"):
                continue  # `#include SOME_MACRO`: the identifier pass renames the macro name
            text = job.main.text(path)
            name = text[1:-1]
            s, e = path.start_byte + 1, path.end_byte - 1
            mapping = job.tables.lookup("header", name)
            if mapping is None:
                fam = vendor_family(self.source_side, name.split("/")[-1])
                if fam is not None:
                    job.stats.count("unknown", "headers", name)
                out.append((inc, name, None))
                continue
            if mapping.target is None:
                job.stats.count("unsupported", mapping.family, name)
                job.diag("XL1003" if job.direction == "cuda->hip" else "XL1402", job.main, path, rule=mapping.rule,
                         name=name, family=mapping.family, note=_note(mapping.note))
                out.append((inc, name, None))
                continue
            if not self.rocm_allows(job.main, path, mapping):
                out.append((inc, name, None))
                continue
            job.stats.count("converted", mapping.family, name)
            if mapping.target == "":  # HIPIFY drops it (device_launch_parameters.h): the whole #include line goes
                job.edits.delete(inc.start_byte, inc.end_byte, mapping.rule)
                job.skip.append((inc.start_byte, inc.end_byte))
            else:
                job.edits.replace(s, e, mapping.target, mapping.rule)
            out.append((inc, name, mapping.target))
        return out

    # -- after the scan: names nobody knows ------------------------------------------------------------------
    def report_unknown(self) -> None:
        if not self.unknown:
            return
        defined = defined_names(self.job) | self.job.project_names
        if self.job.direction == "cuda->hip" and any(n not in defined for n in self.unknown):
            defined |= included_names(self.job.path, self.job.data)  # `port` on one file: its own headers
        code = "XL1001" if self.job.direction == "cuda->hip" else "XL1401"
        for name, u in sorted(self.unknown.items(), key=lambda kv: kv[1].offset):
            if name in defined:
                continue
            for _ in range(u.count):
                self.job.stats.count("unknown", u.family, name)
            self.job.diag(code, self.job.main, u.offset, name=name, family=u.family, count=u.count)


def _note(note: str | None) -> str:
    return f": {note}" if note else ""


def defined_names(job: Job) -> set[str]:
    """Names the file defines itself (never reported as unknown vendor names)."""
    names = {job.main.text(n) for m in job.query("definitions", job.main) for n in m.get("n", [])}
    return names | {m.name for m in job.unit.macros}


def masked_regions(job: Job) -> dict[tuple[int, int], Region | None]:
    """The inactive branches the front end masked, each parsed on its own where it is C++ by itself."""
    return {(lo, hi): parse_branch(job.data, lo, hi) for lo, hi in job.masked}


def macro_regions(job: Job, interesting: re.Pattern[bytes]) -> dict[int, Region | None]:
    """Parse the macro bodies that mention something a pass cares about (start byte -> Region, or None when
    the body is not C++ on its own and is tokenized instead)."""
    out: dict[int, Region | None] = {}
    for m in job.query("macros", job.main):
        if "value" not in m:
            continue
        value = m["value"][0]
        if job.skipped(value.start_byte, value.end_byte):
            continue
        body = job.data[value.start_byte : value.end_byte]
        if not interesting.search(body):
            continue
        out[value.start_byte] = parse_macro_body(job.data, value.start_byte, value.end_byte, job.main.text(m["name"][0]))
    return out
