"""A knowledge base as one audience sees it: a copy holding only the files of the documents it may see.

What the reply to an audience may depend on (issue 13): asked on the copy, every question must get the reply it
gets on the whole knowledge base.
"""

import shutil
from collections.abc import Sequence
from pathlib import Path

from core.retrieval.knowledge_base import load_knowledge_base


def visible_copy(root: Path, destination: Path, role_sets: Sequence[frozenset[str]] | None) -> Path:
    """Copy the files under `root` whose documents every party of `role_sets` may see (None: all of them)."""
    loaded = load_knowledge_base(root)
    assert not loaded.errors, loaded.errors
    destination.mkdir(parents=True)
    for document in loaded.documents:
        if role_sets is None or all(document.audience & roles for roles in role_sets):
            target = destination / document.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / document.path, target)
    return destination
