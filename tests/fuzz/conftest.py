"""Fuzz targets: properties searched by hypothesis rather than checked on a few examples.

Each target runs `SOURCED_FUZZ_EXAMPLES` examples (default 25, small enough that the whole folder stays under a
minute on a loaded two-core CI machine); raise it for a longer search, e.g. `SOURCED_FUZZ_EXAMPLES=2000`.
No example database is written (CI starts clean each time); a failure prints the example and the seed.
"""

import os

from hypothesis import HealthCheck, settings

EXAMPLES = int(os.environ.get("SOURCED_FUZZ_EXAMPLES", "25"))

settings.register_profile(
    "sourced-fuzz",
    max_examples=EXAMPLES,
    deadline=None,  # a loaded CI machine makes per-example timing meaningless; the folder's total is bounded
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture],  # fixtures here are read-only between examples
)
settings.load_profile("sourced-fuzz")


def scaled(share: float) -> int:
    """A target that costs far more per example than the rest runs a share of the budget, at least 3."""
    return max(3, int(EXAMPLES * share))
