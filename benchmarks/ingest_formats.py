"""How fast PDF and Word files are read into the document model, against how fast their chunks are embedded, and
how much memory reading a hostile file takes (an encrypted PDF, a scan, a zip bomb named .docx, a 200 MB file).

    .venv/bin/python -m benchmarks.ingest_formats [--pages 500] [--json]

The corpus is generated: a Word document of `--pages` pages (each a heading, prose, a bulleted list and a
table, then a page break), written here as WordprocessingML, and LibreOffice's PDF of it (`soffice` must be on
the PATH: `apt-get install libreoffice-writer`). Reading is timed through the loader (`load_knowledge_base`),
as `sourced ingest` reads; embedding through the shipped MiniLM embedder on the same chunks. Each hostile file
is read in a fresh interpreter whose peak resident memory (`ru_maxrss`) is reported beside an empty folder's.
"""

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from core.retrieval.chunking import chunk_document
from core.retrieval.knowledge_base import load_knowledge_base

FIXTURES = Path(__file__).parents[1] / "tests" / "fixtures" / "formats" / "files"
HANDBOOK = Path(__file__).parents[1] / "bot" / "examples" / "handbook"
_W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
TOPICS = ("travel", "leave", "equipment", "security", "payroll", "onboarding", "expenses", "training")


def _paragraph(text: str, style: str | None = None, *, bullet: bool = False) -> str:
    properties = (f'<w:pStyle w:val="{style}"/>' if style else "") + (
        '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>' if bullet else "")
    return f'<w:p><w:pPr>{properties}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def _page(number: int) -> str:
    topic = TOPICS[number % len(TOPICS)]
    prose = (f"Section {number} sets out how the {topic} rules apply to every employee in region {number % 7}. "
             f"Requests are made through the portal at least {number % 20 + 5} working days ahead, and a manager "
             f"approves them within two days. Exceptions need the written approval of the budget holder. ") * 3
    rows = "".join(f"<w:tr>{''.join(f'<w:tc>{_paragraph(cell)}</w:tc>' for cell in row)}</w:tr>" for row in (
        ["Grade", "Limit", "Approver"], *([f"G{g}", f"{number * 10 + g} EUR", "Manager"] for g in range(1, 6))))
    return "".join([
        _paragraph(f"{topic.title()} rules, part {number}", "Heading1"),
        _paragraph(prose), _paragraph("Before you ask:"),
        *(_paragraph(f"Check item {k} of the {topic} checklist", bullet=True) for k in range(1, 4)),
        f"<w:tbl>{rows}</w:tbl>", _paragraph(prose[:300]),
        '<w:p><w:r><w:br w:type="page"/></w:r></w:p>',
    ])


def write_docx(path: Path, pages: int) -> None:
    body = _paragraph("Company rules", "Title") + "".join(_page(number) for number in range(1, pages + 1))
    document = f'<?xml version="1.0" encoding="UTF-8"?><w:document {_W}><w:body>{body}</w:body></w:document>'
    styles = (f'<?xml version="1.0" encoding="UTF-8"?><w:styles {_W}>'
              '<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:rPr><w:b/><w:sz w:val="48"/>'
              '</w:rPr></w:style><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
              '<w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style></w:styles>')
    numbering = (f'<?xml version="1.0" encoding="UTF-8"?><w:numbering {_W}><w:abstractNum w:abstractNumId="1">'
                 '<w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/><w:lvlText w:val="\u2022"/></w:lvl></w:abstractNum>'
                 '<w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num></w:numbering>')
    relations = '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    officedoc = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
            "</Types>"))
        archive.writestr("_rels/.rels", f'{relations}<Relationship Id="rId1" Type="{officedoc}/officeDocument" '
                                        'Target="word/document.xml"/></Relationships>')
        archive.writestr("word/_rels/document.xml.rels", f'{relations}<Relationship Id="rId1" '
                         f'Type="{officedoc}/styles" Target="styles.xml"/><Relationship Id="rId2" '
                         f'Type="{officedoc}/numbering" Target="numbering.xml"/></Relationships>')
        archive.writestr("word/document.xml", document)
        archive.writestr("word/styles.xml", styles)
        archive.writestr("word/numbering.xml", numbering)


def to_pdf(docx: Path, folder: Path) -> Path:
    if shutil.which("soffice") is None:
        sys.exit("benchmarks.ingest_formats: soffice not found (apt-get install libreoffice-writer)")
    profile = folder / "lo-profile"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf",
                    "--outdir", str(folder), str(docx)], check=True, capture_output=True)
    return folder / (docx.stem + ".pdf")


def timed_read(path: Path, pages: int) -> dict[str, Any]:
    folder = path.parent / f"only-{path.suffix[1:]}"
    folder.mkdir()
    shutil.copy(path, folder)
    started = time.perf_counter()
    loaded = load_knowledge_base(folder)
    read = time.perf_counter() - started
    assert not loaded.errors, loaded.errors
    started = time.perf_counter()
    drafts = chunk_document(loaded.documents[0])
    chunked = time.perf_counter() - started
    return {"file": path.name, "bytes": path.stat().st_size, "pages": pages, "chunks": len(drafts),
            "read_s": round(read, 2), "chunk_s": round(chunked, 2),
            "pages_per_s": round(pages / (read + chunked), 1),
            "chunks_per_s": round(len(drafts) / (read + chunked), 1), "texts": [d.text for d in drafts]}


def embedding_rate(texts: list[str]) -> float | None:
    try:
        from core.retrieval.embeddings import EmbedderUnavailable, MiniLmEmbedder  # noqa: PLC0415
    except ImportError:
        return None
    try:
        embedder = MiniLmEmbedder()
    except EmbedderUnavailable:
        return None
    sample = texts[:512]
    started = time.perf_counter()
    for start in range(0, len(sample), 64):
        embedder.embed(sample[start:start + 64])
    return round(len(sample) / (time.perf_counter() - started), 1)


_PEAK = """
import re, sys
from pathlib import Path
from core.retrieval.knowledge_base import load_knowledge_base
result = load_knowledge_base(Path(sys.argv[1]))
status = Path("/proc/self/status").read_text()
print(repr([error.reason for error in result.errors]), re.search(r"VmHWM:\\s+(\\d+)", status).group(1))
"""
"""Peak resident memory from VmHWM, this process's own: `ru_maxrss` keeps the parent's across fork and exec."""


def peak_memory(path: Path | None, scratch: Path) -> tuple[str, int]:
    """The reason the file was refused (or "read"), and the peak resident kilobytes of reading it alone."""
    folder = Path(tempfile.mkdtemp(dir=scratch))
    if path is not None and path.parent == scratch:
        shutil.move(str(path), folder / path.name)  # the generated ones: a 200 MB file is not copied
    elif path is not None:
        shutil.copy(path, folder)
    done = subprocess.run([sys.executable, "-c", _PEAK, str(folder)], check=True, capture_output=True, text=True,
                          cwd=Path(__file__).parents[1])
    reasons, peak = done.stdout.strip().rsplit(" ", 1)
    return reasons, int(peak)


def hostile_files(scratch: Path) -> dict[str, Path]:
    bomb = scratch / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            for _ in range(1000):
                part.write(b"\0" * 1_000_000)  # 1 GB unpacked
    huge = scratch / "huge.pdf"
    with huge.open("wb") as file:
        file.truncate(200 * 1024 * 1024)
    return {"encrypted PDF": FIXTURES / "encrypted.pdf", "scanned PDF": FIXTURES / "scanned.pdf",
            "zip bomb as .docx (1 GB unpacked)": bomb, "200 MB file": huge}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        docx = scratch / "rules.docx"
        write_docx(docx, args.pages)
        pdf = to_pdf(docx, scratch)
        reads = [timed_read(pdf, args.pages), timed_read(docx, args.pages)]
        embedded = embedding_rate(reads[0]["texts"])
        handbook = [draft.text for document in load_knowledge_base(HANDBOOK).documents
                    for draft in chunk_document(document)]
        embedded_handbook = embedding_rate(handbook * (512 // len(handbook) + 1))
        peaks = {"empty folder": peak_memory(None, scratch), f"{args.pages}-page PDF": peak_memory(pdf, scratch)}
        peaks |= {label: peak_memory(path, scratch) for label, path in hostile_files(scratch).items()}
    report = {"reading": [{k: v for k, v in read.items() if k != "texts"} for read in reads],
              "embedding_chunks_per_s": embedded, "embedding_handbook_chunks_per_s": embedded_handbook,
              "peak_rss_mb": {label: {"refused": reasons, "mb": round(kb / 1024, 1)}
                              for label, (reasons, kb) in peaks.items()}}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for read in report["reading"]:
        print(f"{read['file']}: {read['pages']} pages, {read['bytes']:,} bytes -> {read['chunks']} chunks in "
              f"{read['read_s'] + read['chunk_s']:.1f} s: {read['pages_per_s']} pages/s, "
              f"{read['chunks_per_s']} chunks/s")
    print(f"embedding (MiniLM, this machine): {embedded} chunks/s on these chunks, {embedded_handbook} chunks/s on "
          f"the example handbook's (shorter) chunks")
    for label, peak in report["peak_rss_mb"].items():
        print(f"peak memory, {label}: {peak['mb']} MB ({peak['refused']})")


if __name__ == "__main__":
    main()
