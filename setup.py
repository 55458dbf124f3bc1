"""The compiled core of the engine (engine/_core.c), built where a C compiler is present.

Everything else about the package is in pyproject.toml. ``optional=True``: when the
extension cannot be built (no compiler, no Python headers) setuptools says so and the
install goes on; engine.compiled then plays with the pure-Python engine (docs/engine.md,
"Compiled core"). Set ARENA_BUILD_CORE=0 to skip it on purpose.
"""

import os

from setuptools import Extension, setup

ext_modules = []
if os.environ.get("ARENA_BUILD_CORE", "1") != "0":
    ext_modules.append(
        Extension("engine._core", ["engine/_core.c"], optional=True, extra_compile_args=["-O2"])
    )

setup(ext_modules=ext_modules)
