"""Abstract values of the spec-inference interpreters: symbolic numbers, pointers into allocations, dim3
triples, initialised arrays, and references to variables (`&d` handed to cudaMalloc)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from xlate.specs.model import Origin


@dataclass
class Num:
    e: sp.Expr
    flt: bool = False  # a floating-point value (C division is real division then)


@dataclass(frozen=True)
class Fill:
    """A constant the host writes over a whole allocation before launches read it: `cudaMemset(p, 0xff, bytes)`
    (`byte` set: the pattern, read later as the element type) or `thrust::fill(b, e, -1)` (`value` set)."""

    byte: int | None
    value: int | float | None
    scopes: tuple[tuple[int, bool], ...]  # the branches and loops (id, is a loop) the fill ran inside
    where: str


@dataclass
class Alloc:
    """One allocation (device, managed or host), shared by every pointer into it."""

    bytes: sp.Expr | None = None
    elem: str | None = None  # the element type the allocating code used
    origin: Origin | None = None
    copies: list[Alloc] = field(default_factory=list)  # host buffers copied into it (their sizes are evidence too)
    fill: Fill | None = None  # what the whole allocation holds now, when the host wrote one constant over it last
    null: bool = False  # no memory: a pointer declared null (`float* b = nullptr;`) that nothing has set since


@dataclass
class Ptr:
    alloc: Alloc
    offset: sp.Expr = sp.S.Zero  # bytes from the start of the allocation
    elem: str | None = None  # the pointer's static element type


@dataclass
class Dim3:
    dims: tuple[sp.Expr, sp.Expr, sp.Expr]


@dataclass
class Arr:
    items: list[Any]  # Num | None
    elem_size: int | None = None  # bytes per item, for sizeof(arr) / sizeof(arr[0])


@dataclass
class Ref:
    """`&name`: the address of a variable of some frame (so a callee can set it: cudaMalloc(&d, ...))."""

    env: dict[str, Any]
    name: str


@dataclass
class Obj:
    """An object of a class of the program: its data members (what its methods allocate and pass to kernels)."""

    cls: str
    env: dict[str, Any]


@dataclass
class Tensor:
    """A torch tensor of the host code (at::Tensor): its dimensions, outermost first, and the storage its data
    pointers point into (`alloc.bytes` is the product of the dimensions times the element size, once a data
    pointer gives the element type)."""

    name: str  # the variable as the program spells it where the tensor was made
    dims: list[sp.Expr]
    alloc: Alloc
    elem_size: sp.Expr | None = None
    contiguous: str = ""  # how the code makes sure it is contiguous ("checked", "made"); "" where it does not
    shaped: str = ""  # where its shape comes from (a parameter, `empty_like(x)`, `zeros({n, 3})`)
    ranked: bool = True  # False: the code names no dimension, and `dims` is its one dimension of numel elements


Value = Num | Ptr | Dim3 | Arr | Ref | Obj | Tensor | None
