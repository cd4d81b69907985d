"""Command-line tools on top of the runtime and the kernels: they use both layers and neither uses them.

    python -m tools.lowering_check   every kernel and the engine step lowered for cuda, TPU v5e and v6e
    python -m tools.compile_check    the same cases compiled by the device compilers, with no device

The import contracts (pyproject.toml) place this package beside the gateway, above ``runtime``.
"""
