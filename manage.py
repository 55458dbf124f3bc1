#!/usr/bin/env python
"""Django's command-line utility for Uno Arena."""

import os
import sys
from pathlib import Path

# platform/ holds the Django project; it is a plain folder, never a package.
sys.path.insert(0, str(Path(__file__).resolve().parent / "platform"))


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
