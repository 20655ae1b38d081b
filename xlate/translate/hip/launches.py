"""CUDA -> HIP kernel launches: `k<<<g, b, shm, s>>>(args)` -> `hipLaunchKernelGGL(k, dim3(g), dim3(b), shm, s, args)`
(HIPIFY's default, `--launch-syntax ggl`) or kept as written (`--launch-syntax chevron`; hipcc accepts <<<>>>).

The rewrite is a few small edits around the launch's own tokens, so renames inside the arguments stay separate
edits. A kernel name with a template argument list holding a top-level comma is wrapped in HIP_KERNEL_NAME(),
which hipLaunchKernelGGL (a macro) needs; grid and block arguments that are already `dim3(...)` are not wrapped
again; a missing shared-memory size or stream becomes 0. Device-side launches are left to unsupported.py
(XL1204). HIP -> CUDA turns hipLaunchKernelGGL back into <<<>>> (intrinsics._rlaunch).
"""

from __future__ import annotations

import tree_sitter as ts

from xlate.translate.hip.job import Job, Region

RULE = "launch:hipLaunchKernelGGL"


def forward(job: Job, region: Region) -> None:
    if job.launch_syntax != "ggl" or region.macro is not None:
        return
    for m in job.query("constructs", region):
        if "launch" not in m:
            continue
        call = m["launch"][0]
        if job.function_of(region, call) is not None or job.skipped(region.start(call), region.end(call)):
            continue  # a device-side launch (XL1204), or inside a range another rewrite replaces
        _rewrite(job, region, call, m["kfn"][0])


def _top_level_comma(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 1:
            return True
    return False


def _rewrite(job: Job, region: Region, call: ts.Node, kfn: ts.Node) -> None:
    config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
    arglist = call.child_by_field_name("arguments")
    if config is None or arglist is None:
        return
    cfg = [c for c in config.named_children if c.type != "comment"]
    if not 2 <= len(cfg) <= 4:
        return
    if not job.edits.claim(region.start(config), region.end(config)):
        return
    args = [c for c in arglist.named_children if c.type != "comment"]
    kname = region.text(kfn)
    wrap = "<" in kname and _top_level_comma(kname[kname.index("<"):])
    start = region.start(call)
    job.edits.insert(start, "hipLaunchKernelGGL(" + ("HIP_KERNEL_NAME(" if wrap else ""), RULE)
    pieces = []  # (text before this config argument, its node, text after)
    for node in cfg[:2]:
        is_dim3 = node.type == "call_expression" and region.text(node.child_by_field_name("function")) == "dim3"
        pieces.append((", " if is_dim3 else ", dim3(", node, "" if is_dim3 else ")"))
    # kernel name .. first config argument
    job.edits.replace(region.end(kfn), region.start(cfg[0]), (")" if wrap else "") + pieces[0][0], RULE)
    job.edits.replace(region.end(cfg[0]), region.start(cfg[1]), pieces[0][2] + pieces[1][0], RULE)
    tail = pieces[1][2]
    last = cfg[1]
    for node in cfg[2:]:
        job.edits.replace(region.end(last), region.start(node), tail + ", ", RULE)
        tail, last = "", node
    tail += ", 0" * (4 - len(cfg))
    if args:
        job.edits.replace(region.end(last), region.start(args[0]), tail + ", ", RULE)
    else:
        job.edits.replace(region.end(last), region.end(arglist), tail + ")", RULE)
    job.stats.count("converted", "launch", "<<<>>>")
