"""Model adapters behind the AnswerModel port: the offline extractive default, and HTTP models."""
