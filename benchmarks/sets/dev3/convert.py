#!/usr/bin/env python3
"""Convert the dev3 pages of PostHog's handbook into the Sourced knowledge-base format (kb/).

Usage, from the repository root (the pages are staged beside the checkout, in ../shared/reader-data/handbooks):

    python3 benchmarks/sets/dev3/convert.py [--pages HANDBOOKS_DIR] [--out OUT_DIR]

The 25 pages are those `page_split.txt` (next to this file) marks `dev3`; the other 25 are training pages and
are never converted here. The body of every kb/ file is the page's text, verbatim, except for:

  1. the page's own front matter (title, sidebar, showTitle, hideAnchor) is replaced by ours
     (id, title, owner, audience, updated, url); `title` is the page's front-matter title, or its first `# ` line
     where it has no front matter;
  2. MDX `import`/`export` lines outside code fences are dropped (none occur in the dev3 pages).

Nothing else changes: headings of any depth, wrapped lines, trailing spaces, lists, checklists, tables, raw HTML,
site components (<PrivateLink ...>), links, emoji, code and the pages' own typos stay as published. The script
checks each page's length against the character count the staging README reports, and prints what it changed.
"""

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_PAGES = HERE.parents[3] / "shared" / "reader-data" / "handbooks"
SITE = "https://posthog.com"
BUILT = "2026-12-04"
"""`updated` of every document: the day the set was built (none of the dev3 pages states a date of its own)."""

# page path (under the handbooks folder) -> (doc id, commit the staging README lists, chars, owner, audience)
DOCS = {
    "posthog/contents/handbook/company/communication.md":
        ("communication", "081a121245c9fd5ab0bb42496d4391398181729f", 27151, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/company/fuzzy-ownership.mdx":
        ("fuzzy-ownership", "074bdd0a7a3e3eaaf6b555551377de89f3fe393a", 2318, "#team-exec", ["everyone"]),
    "posthog/contents/handbook/company/grown-ups.md":
        ("grown-up-company", "379a68ce78e75a8824a2ef726f133c80978213ea", 5031, "#team-people-and-ops",
         ["everyone"]),
    "posthog/contents/handbook/company/security-advisories.md":
        ("security-advisories", "06370c1af08651bed24c5c6831864a03043b2ccb", 12124, "#team-security",
         ["security"]),
    "posthog/contents/handbook/company/small-teams.md":
        ("small-teams", "01098ae04daf5a806ccc873ffbc17c820687257b", 13562, "#team-exec", ["everyone"]),
    "posthog/contents/handbook/company/standups.md":
        ("standups", "5b0d09e0ae42910e792e73c1902ec3d4626ae64e", 2967, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/company/use-of-ai-tools.md":
        ("ai-tools", "c1a9e14cc7a9b667b469152ef965be88f3eaf40f", 5559, "#legal", ["everyone"]),
    "posthog/contents/handbook/engineering/bug-prioritization.md":
        ("bug-prioritization", "16d833c76f7c24907b159ad2832514533dbfd80c", 3323, "#engineering", ["everyone"]),
    "posthog/contents/handbook/engineering/disruption-messages.md":
        ("disruption-messages", "2dec6e11399729d11de52cb3ac8929900d24a37c", 2300, "#team-infrastructure",
         ["everyone"]),
    "posthog/contents/handbook/engineering/how-we-review.md":
        ("pr-reviews", "00fe56ae30951c6bc7fd5af911d0b10a345b9e08", 2513, "#engineering", ["everyone"]),
    "posthog/contents/handbook/engineering/operations/on-call-rotation.md":
        ("on-call", "05710ae1346206a4c9b6d7a6451bd02c4c70245d", 9215, "#team-infrastructure", ["engineering"]),
    "posthog/contents/handbook/engineering/operations/support-hero.md":
        ("support-hero", "06a9f2cdab5d8a2b9c76ba7d12dbac35e1b23aa5", 36248, "#team-support", ["everyone"]),
    "posthog/contents/handbook/growth/marketing/incident-comms.md":
        ("incident-comms", "01444c4d7b27940a47e5908c2ed9f171a9ae28dc", 7111, "#team-marketing", ["everyone"]),
    "posthog/contents/handbook/people/benefits.md":
        ("benefits", "0003028c13993cd4c2bc5027f45f60a33a4c743c", 7028, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/career-progression.md":
        ("career-progression", "3246ec447ddef71589d51b47875b708050dd94c8", 3927, "#team-people-and-ops",
         ["everyone"]),
    "posthog/contents/handbook/people/feedback.md":
        ("feedback", "012270f1a376e96a027efa354e1a9e3de1d5e502", 6920, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/grievances.md":
        ("grievances", "22f094dbbede3d2b97d584e0c57ff21725d139dd", 6451, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/hiring-process/how-to-interview.md":
        ("interviewing", "054853816bd9b78e0b32ff937dde4d7d29b6d0b9", 5224, "#team-talent", ["everyone"]),
    "posthog/contents/handbook/people/laptop-provisioning.md":
        ("laptops", "3ec054e87a3b82f5eeeb4beddd7f10131ca19912", 2333, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/onboarding.md":
        ("onboarding", "010524802fe3d565cfc524f0d9933e7e7d3daa83", 20086, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/politics-causes.md":
        ("politics", "0bdeb4708a83cd85e6fda4fc3790e237f35735e0", 1938, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/side-gigs.md":
        ("side-gigs", "0043b1e653221bd4d2ec4b37772b5eaf73478f5c", 2772, "#team-people-and-ops", ["everyone"]),
    "posthog/contents/handbook/people/spending-money.md":
        ("spending-money", "03032139748f5e70373e4c6dc93233337aea5c41", 20113, "#team-people-and-ops",
         ["everyone"]),
    "posthog/contents/handbook/people/talent.md":
        ("talent", "24b817a8f37a8f9a54e64891cc48e167a5550ecc", 7277, "#team-talent", ["talent"]),
    "posthog/contents/handbook/people/time-off.md":
        ("time-off", "00c63d65e1a791f59fb76a8a03df973c7777b11a", 6125, "#team-people-and-ops", ["everyone"]),
}

FENCE = re.compile(r"^\s*(```|~~~)")
MDX_LINE = re.compile(r"^(import|export)\s")


def dev3_pages(split_file: Path) -> list[str]:
    """The pages the split marks `dev3`, in its order."""
    pages = []
    for line in split_file.read_text(encoding="utf-8").splitlines():
        mark, _, path = line.partition(": ")
        if mark == "dev3":
            pages.append(path.strip())
    return pages


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The page's own front matter as its simple `key: value` lines, and the body after it."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.index("\n---\n", 4)
    meta = {}
    for line in text[4:end].split("\n"):
        key, _, value = line.partition(":")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        meta[key.strip()] = value
    return meta, text[end + 5:]


def drop_mdx_lines(body: str) -> tuple[str, list[str]]:
    """The body without MDX import/export lines (outside code fences), and what was dropped."""
    kept, dropped, fenced = [], [], False
    for line in body.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and MDX_LINE.match(line):
            dropped.append(f"dropped MDX line {line!r}")
            continue
        kept.append(line)
    return "\n".join(kept), dropped


def yaml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def convert(pages_dir: Path, out_dir: Path) -> None:
    pages = dev3_pages(HERE / "page_split.txt")
    if sorted(pages) != sorted(DOCS):
        sys.exit(f"page_split.txt and DOCS disagree: {sorted(set(pages) ^ set(DOCS))}")
    out_dir.mkdir(parents=True, exist_ok=True)
    for page in pages:
        doc_id, commit, chars, owner, audience = DOCS[page]
        raw = (pages_dir / page).read_bytes().decode("utf-8")
        if len(raw) != chars:
            sys.exit(f"{page}: {len(raw)} characters, the staging README says {chars}")
        meta, body = split_front_matter(raw)
        heading = re.search(r"^# (.+)$", body, re.M)
        title = meta.get("title") or (heading.group(1).strip() if heading else doc_id)
        body, log = drop_mdx_lines(body)
        url = SITE + "/" + re.sub(r"\.mdx?$", "", page.removeprefix("posthog/contents/"))
        header = ("---\n" f"id: {doc_id}\n" f"title: {yaml_str(title)}\n" f"owner: \"{owner}\"\n"
                  f"audience: [{', '.join(audience)}]\n" f"updated: {BUILT}\n" f"url: {url}\n" "---\n")
        (out_dir / f"{doc_id}.md").write_text(header + body, encoding="utf-8", newline="")
        print(f"{doc_id:22} {commit[:12]} {len(raw):6} chars {len(body.split()):5} words  "
              f"audience {','.join(audience):12} {len(log)} changes")
        for entry in log:
            print("    " + entry)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES, help="the staged handbooks folder")
    parser.add_argument("--out", type=Path, default=HERE / "kb", help="where the knowledge base is written")
    args = parser.parse_args()
    convert(args.pages, args.out)


if __name__ == "__main__":
    main()
