"""Print the project's runtime dependencies (pyproject.toml, [project] dependencies), one per line.

Used where the project itself is not installed, to feed `pip -r`: the platform
image's dependency stage (deploy/Dockerfile) and the offline wheel build
(deploy/build-image.sh). Usage: python3 requirements.py [PYPROJECT]
"""

import sys
import tomllib

with open(sys.argv[1] if len(sys.argv) > 1 else "pyproject.toml", "rb") as handle:
    print(*tomllib.load(handle)["project"]["dependencies"], sep="\n")
