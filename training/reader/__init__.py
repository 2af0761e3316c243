"""The reader: a MiniLM cross-encoder trained to tell whether a sentence states the answer to a question."""
