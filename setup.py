"""The compiled core of the engine (engine/_core.c), built where a C compiler is present.

Everything else about the package is in pyproject.toml. ``optional=True``: when the
extension cannot be built (no compiler, no Python headers) setuptools says so and the
install goes on; engine.compiled then plays with the pure-Python engine (docs/engine.md,
"Compiled core"). Set ARENA_BUILD_CORE=0 to skip it on purpose.
"""

import hashlib
import os
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "engine/_core.c"
ext_modules = []
if os.environ.get("ARENA_BUILD_CORE", "1") != "0":
    # the source's hash goes into the module: engine.compiled refuses a stale build
    digest = hashlib.sha256(Path(__file__).with_name("engine").joinpath("_core.c").read_bytes()).hexdigest()
    ext_modules.append(
        Extension(
            "engine._core",
            [SOURCE],
            optional=True,
            extra_compile_args=["-O2"],
            define_macros=[("CORE_SOURCE_SHA256", f'"{digest}"')],
        )
    )

setup(ext_modules=ext_modules)
