"""What text from outside (a button's value, a document's front matter) must be before it is stored or looked up."""


def storable(text: str) -> bool:
    """Encodable as UTF-8 (no half of a UTF-16 surrogate pair, which JSON and YAML can escape) and free of NUL,
    which PostgreSQL's text type refuses. Found by fuzzing: either made a lookup fail with an error."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text
