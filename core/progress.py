"""Progress bars on stderr for a person watching a terminal: transient, and not drawn at all when stderr is a
pipe, a file or a CI log (rich would leave a blank line there for every bar it stopped)."""

from rich.console import Console
from rich.progress import Progress, ProgressColumn


def progress_bar(*columns: str | ProgressColumn, shown: bool) -> Progress:
    """A transient bar on stderr, so stdout stays clean for summaries and pipes; drawn only when `shown` and
    stderr is a terminal."""
    console = Console(stderr=True)
    return Progress(*columns, console=console, transient=True, disable=not (shown and console.is_terminal))
