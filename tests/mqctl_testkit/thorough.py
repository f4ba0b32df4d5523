"""How many random cases a randomised test tries: as written in the full run, a fifth of them in
the fast run.

The fast run (``pytest -m "not slow ..."``) loads Hypothesis's ``fast`` profile (tests/conftest.py):
20 examples per property where Hypothesis's default is 100. A count written in a test (a
property's own ``max_examples``, or a loop of seeded random inputs) goes through :func:`cases`,
so it keeps the same share. Called while a test module is imported, after the profile is loaded.
"""

from __future__ import annotations

from hypothesis import settings

FULL_RUN_EXAMPLES = 100  # Hypothesis's default max_examples: the share of a run is its own / this
FEWEST = 10


def cases(n: int) -> int:
    """``n`` in the full run; its share in the fast run, never below a handful."""
    share = settings.default.max_examples / FULL_RUN_EXAMPLES
    return n if share >= 1 else max(FEWEST, round(n * share))
