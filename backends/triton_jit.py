"""How the verification gate builds a Triton module's kernels: without Triton's value specialisation.

Triton compiles a kernel once per *class* of its arguments' values: an integer that is 1, or divisible by 16, and
a pointer aligned to 16 bytes get a build of their own, in which the value's property is a compile-time fact. The
gate draws sizes at random, so a port with five integer parameters can need a dozen builds of each kernel, each
seconds long on a real port; on the H200 the Triton step was the median kernel's largest cost, and it ran past the
time limit for some. Under the gate each kernel is therefore built once per dtype and constexpr set
(`do_not_specialize` on every other parameter). The program is the same: a specialisation only lets the compiler
assume what the launch values are, and Triton checks them at every launch. Timed runs (`bench`) keep Triton's
default, as a user's run of the port has it.
"""

from __future__ import annotations

from types import ModuleType

SPECIALISE_VARIABLE = "XLATE_TRITON_SPECIALISE"  # "0" in the gate's workers, "1" in timing workers


def unspecialised(module: ModuleType) -> list[str]:
    """Rebind every plain @triton.jit function of `module` to a copy that Triton does not specialise on argument
    values; returns the names rebound. Interpreter functions, autotuned and heuristics wrappers (whose kernel they
    hold themselves) are left as they are. Launchers look their kernels up in the module's globals when they
    launch, so they launch the copies."""
    import triton
    from triton.runtime.jit import JITFunction

    rebound: list[str] = []
    for name, value in list(vars(module).items()):
        if type(value) is not JITFunction:
            continue
        names = [p.name for p in value.params if not p.is_constexpr]
        copy = triton.jit(value.fn, do_not_specialize=names, debug=value.debug, noinline=value.noinline)
        if type(copy) is not JITFunction:  # the interpreter took over since the module was imported
            continue
        setattr(module, name, copy)
        rebound.append(name)
    return rebound
