"""Pure functions over text, the vocabulary the guard and answerability share: a document's statements
(`statements`, `quotes`), what a quote's context supplies (`quote_context`), numbers, negations and bounds
(`facts`), the kind of value a question asks for (`answer_types`), a question's shape (`shape`), text addressed
to assistants (`instructions`) and citation markers (`markers`). Imports nothing else of the application."""
