"""``python -m threads_cases``: the same command line as the ``threads-cases`` script."""

from __future__ import annotations

from .cli import main

if __name__ == "__main__":
    main()
