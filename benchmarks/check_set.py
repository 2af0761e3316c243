"""Check an evaluation set against its own knowledge base before it measures anything.

    .venv/bin/python -m benchmarks.check_set benchmarks/sets/dev3 [--overlap DIR ...]

A set is a folder with `kb/`, `cases.yaml`, and where present `owners.yml` (known gaps) and `absent_terms.yml`
(for each `not_in_corpus` case, phrases the kb would contain if it answered). It checks, with Sourced's own
loader, chunker and gap matcher, what a case silently relies on:

- every `support` names a section the chunker produces (`doc-id#last heading of the chunk's path`), in a
  document the asker may see, and every `must_include` item occurs in the text of every supporting section;
- a `not_permitted` case names a restricted `answer_doc` the asker may not see;
- `ambiguous` candidates are documents of the kb;
- every `not_in_corpus` case has probe terms and none of them occurs anywhere in the kb's files;
- a known gap's keywords match no answer question, each refusal case with an `owner` matches a gap of that
  owner, and a refusal case without one matches no gap;
- with `--overlap`, the 8-word runs the kb shares with the `.md`/`.mdx` files under each folder (another set, or
  training pages) are counted.

Exit 1 on any error; warnings (long pages, overlaps) are printed and do not fail.
"""

import argparse
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from core.application.routing import KnownGap
from core.config import load_known_gaps
from core.domain import EVERYONE
from core.eval.cases import Case, load_cases
from core.eval.scoring import includes
from core.retrieval.chunking import PATH_SEPARATOR, chunk_document
from core.retrieval.knowledge_base import SourceDocument, load_knowledge_base

RUN_WORDS: Final = 8


def sections(documents: tuple[SourceDocument, ...]) -> dict[tuple[str, str], str]:
    """(doc id, last heading case-folded) -> the text of every chunk of that section, windows joined."""
    texts: dict[tuple[str, str], list[str]] = defaultdict(list)
    for document in documents:
        for chunk in chunk_document(document):
            last = chunk.heading.rsplit(PATH_SEPARATOR, maxsplit=1)[-1].strip().casefold()
            texts[document.doc_id, last].append(chunk.text)
    return {key: "\n".join(parts) for key, parts in texts.items()}


def sees(roles: list[str], document: SourceDocument) -> bool:
    return bool(document.audience & {*roles, EVERYONE})


def check_case(case: Case, docs: dict[str, SourceDocument], texts: dict[tuple[str, str], str]) -> list[str]:
    errors = []
    roles = case.asker.roles
    for section in case.support:
        doc = docs.get(section.doc_id)
        text = texts.get((section.doc_id, section.heading.casefold()))
        if doc is None or text is None:
            errors.append(f"support {section} is not a section of the kb")
            continue
        if not sees(roles, doc):
            errors.append(f"support {section} is in a document the asker {roles} may not see")
        missing = [item for item in case.must_include if not includes(text, item)]
        if missing:
            errors.append(f"must_include {missing} not in the text of {section}")
    if case.expect == "not_permitted":
        doc = docs.get(case.answer_doc or "")
        if doc is None:
            errors.append(f"answer_doc {case.answer_doc!r} is not a document of the kb")
        elif sees(roles, doc) or EVERYONE in doc.audience:
            errors.append(f"answer_doc {case.answer_doc!r} is visible to the asker {roles}")
    errors += [f"candidate {c!r} is not a document of the kb" for c in case.candidates if c not in docs]
    return errors


def check_gaps(cases: tuple[Case, ...], gaps: tuple[KnownGap, ...]) -> list[str]:
    errors = []
    for case in cases:
        matched = [(gap, keyword) for gap in gaps if (keyword := gap.matched_keyword(case.question))]
        if case.expect == "answer":
            errors += [f"{case.id}: the question matches the known gap {gap.topic!r} ({keyword!r})"
                       for gap, keyword in matched]
        elif case.owner is not None:
            if not matched or matched[0][0].owner != case.owner:
                errors.append(f"{case.id}: owner {case.owner!r} but the first matching gap is "
                              f"{matched[0][0].topic if matched else None!r}")
        elif matched and case.expect == "not_in_corpus":
            errors.append(f"{case.id}: matches the known gap {matched[0][0].topic!r} but names no owner")
    return errors


def check_absent(cases: tuple[Case, ...], probes: dict[str, list[str]], corpus: str) -> list[str]:
    errors = []
    refused = {case.id for case in cases if case.expect == "not_in_corpus"}
    errors += [f"{case_id}: no probe terms in absent_terms.yml" for case_id in sorted(refused - set(probes))]
    errors += [f"absent_terms.yml names {case_id!r}, not a not_in_corpus case" for case_id in probes
               if case_id not in refused]
    for case_id, terms in probes.items():
        errors += [f"{case_id}: probe term {term!r} occurs in the kb" for term in terms
                   if term.casefold() in corpus]
    return errors


def word_runs(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.casefold())
    return {tuple(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}


def overlaps(documents: tuple[SourceDocument, ...], folder: Path) -> dict[str, int]:
    """Per document, how many of its 8-word runs occur in some .md/.mdx file under `folder`."""
    other: set[tuple[str, ...]] = set()
    for path in sorted(folder.rglob("*.md*")):
        other |= word_runs(path.read_text(encoding="utf-8"))
    counts = {document.doc_id: len(word_runs(document.body) & other) for document in documents}
    return {doc_id: count for doc_id, count in counts.items() if count}


@dataclass(frozen=True, kw_only=True)
class Checked:
    documents: tuple[SourceDocument, ...]
    cases: tuple[Case, ...]
    errors: tuple[str, ...]

    @property
    def summary(self) -> str:
        kinds = Counter(case.expect for case in self.cases).most_common()
        return (f"{len(self.documents)} documents, {len(self.cases)} cases: "
                + ", ".join(f"{count} {kind}" for kind, count in kinds))


def check_set(folder: Path) -> Checked:
    """Every error of the set in `folder` (kb/, cases.yaml, and owners.yml, absent_terms.yml where present)."""
    loaded = load_knowledge_base(folder / "kb")
    errors = [f"kb: {error}" for error in loaded.errors]
    docs = {document.doc_id: document for document in loaded.documents}
    texts = sections(loaded.documents)
    cases = load_cases(folder / "cases.yaml")
    for case in cases:
        errors += [f"{case.id}: {error}" for error in check_case(case, docs, texts)]
    gaps_file = folder / "owners.yml"
    errors += check_gaps(cases, load_known_gaps(gaps_file) if gaps_file.exists() else ())
    probes_file = folder / "absent_terms.yml"
    probes = yaml.safe_load(probes_file.read_text(encoding="utf-8")) if probes_file.exists() else {}
    corpus = "\n".join(path.read_text(encoding="utf-8") for path in sorted((folder / "kb").rglob("*"))
                       if path.is_file()).casefold()
    errors += check_absent(cases, probes or {}, corpus)
    return Checked(documents=loaded.documents, cases=cases, errors=tuple(errors))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("set", type=Path, help="the set's folder (kb/, cases.yaml, owners.yml, absent_terms.yml)")
    parser.add_argument("--overlap", type=Path, action="append", default=[], metavar="DIR",
                        help="count the 8-word runs the kb shares with the pages under DIR (repeatable)")
    args = parser.parse_args()
    checked = check_set(args.set)
    for folder in args.overlap:
        for doc_id, count in overlaps(checked.documents, folder).items():
            print(f"warning: {doc_id} shares {count} {RUN_WORDS}-word runs with {folder}")
    print(checked.summary)
    for error in checked.errors:
        print(f"error: {error}")
    return 1 if checked.errors else 0


if __name__ == "__main__":
    sys.exit(main())
