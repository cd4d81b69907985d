"""One public signature per kernel family, shared by the family's implementations.

A family (ragged paged attention, the quantized matmul) has one contract on every platform: the same
arrays, the same static arguments, the same ``validate_inputs``. Its ``*_api`` decorator writes that
contract once, as a ``public`` function that validates and then calls the implementation;
``public_kernel`` finishes it: the implementation's name, a signature (what ``help`` shows) of the
shared parameters followed by the implementation's keyword-only tuning knobs, a docstring of the
implementation's followed by the family's shared arguments, and ``jax.jit`` with the shared static
arguments and every knob static.
"""

from __future__ import annotations

import functools
import inspect

import jax


def public_kernel(public, impl, *, static: tuple[str, ...], args_doc: str):
    """``public(<shared parameters>, **knobs)``, given ``impl``'s name, knobs and docstring, then jitted."""
    knobs = [p for p in inspect.signature(impl).parameters.values() if p.kind is p.KEYWORD_ONLY]
    shared = [p for p in inspect.signature(public).parameters.values() if p.kind is not p.VAR_KEYWORD]
    functools.update_wrapper(public, impl)
    public.__signature__ = inspect.Signature(shared + knobs, return_annotation=jax.Array)
    public.__doc__ = f"{impl.__doc__.rstrip()}\n{args_doc}"
    return jax.jit(public, static_argnames=(*static, *(p.name for p in knobs)))


class UnsupportedSetting(ValueError):
    """A setting a kernel refuses by design, before anything compiles (fp8 KV below sm_89; an 8-bit cache
    in the Mosaic GPU kernel): the dispatcher routes it to another kernel, or the engine refuses it at
    start. The lowering and compile checks record it as ``refused``, not as a failure. Any other
    ``ValueError`` from a kernel (a tile it cannot form) is a failure there."""
