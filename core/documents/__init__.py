"""Documents read as structure: the document model, one reader per format, and the reading form every chunk is
written in (DESIGN section 5, Formats)."""
