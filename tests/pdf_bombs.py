"""Small PDFs that cost far more than their size to read, built here rather than stored: each page's content
stream is packed by two Flate filters in a row (a filter chain any PDF reader follows), so a kilobyte unpacks to
tens or hundreds of megabytes."""

import zlib
from collections.abc import Iterable

_CHUNK = 1_000_000


def cpu_bomb(glyphs: int = 1_000_000) -> bytes:
    """About a kilobyte whose one page draws `glyphs` one-letter strings: pdfplumber takes minutes of CPU over a
    million of them (26 s for 200,000 on one core of the test machine)."""
    draw = b"BT /F1 1 Tf 1 1 Td (x) Tj ET\n"
    return _pdf(_packed_twice([b"BT /F1 12 Tf 72 720 Td (Garage) Tj ET\n"]
                              + [draw * (_CHUNK // len(draw))] * (glyphs * len(draw) // _CHUNK)))


def memory_bomb(megabytes: int = 500) -> bytes:
    """A page whose content stream unpacks to `megabytes` of blanks, unpacked whole before it is parsed."""
    return _pdf(_packed_twice([b" " * _CHUNK] * megabytes))


def _packed_twice(chunks: Iterable[bytes]) -> bytes:
    """Packed chunk by chunk, so the test never holds what it packs."""
    inner, outer = zlib.compressobj(9), zlib.compressobj(9)
    packed = b"".join(outer.compress(inner.compress(chunk)) for chunk in chunks)
    return packed + outer.compress(inner.flush()) + outer.flush()


def _pdf(stream: bytes) -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter [/FlateDecode /FlateDecode] >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
