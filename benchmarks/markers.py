"""How long taking markers out of model output takes as a run of blanks grows (issue 55: it was quadratic).

    python -m benchmarks.markers

Prints, for each length, the seconds for blanks with no marker after them and for blanks before a marker; a
linear pass grows tenfold with the length, a quadratic one a hundredfold.
"""

import time

from core.application.language.markers import without_markers

LENGTHS = (10_000, 100_000, 1_000_000)


def seconds(text: str) -> float:
    start = time.perf_counter()
    without_markers(text)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'blanks':>10} {'no marker (s)':>14} {'marker (s)':>11}")
    for length in LENGTHS:
        blanks = " " * length
        print(f"{length:>10} {seconds(f'a{blanks}b'):>14.4f} {seconds(f'a{blanks}[2] b'):>11.4f}")


if __name__ == "__main__":
    main()
