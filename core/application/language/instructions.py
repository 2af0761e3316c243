"""Text in a document that speaks to an automated reader ("Note to AI assistants: ...", "SYSTEM NOTE: ...",
"ignore your previous instructions") is content a person wrote into the page, never a command, and never an
answer: ingestion warns about it, the extractive model never quotes it, and the guard refuses a claim resting
on it.

Two general classes are recognised, in English and in the languages a company wiki is commonly written in:
- an automated reader named as the addressee: a note, instruction or message *to/for* AI assistants, bots,
  models or agents; "if you are an AI"; "AI assistants reading this page"; a "system note" or "system prompt";
- an instruction that only makes sense to a model: ignore, disregard or override previous instructions,
  guidelines or the system prompt; "you are now ..."; "from now on, answer ...".
A page *about* a bot ("the support chatbot answers FAQs") or a job title ("medical assistant") addresses no one.
"""

import re
from typing import Final

_MACHINE: Final = (
    r"(?:(?:ai|a\.i\.|automated|virtual|digital|llm|gpt|chat|smart)[\s-]*(?:assistants?|bots?|agents?|helpers?|"
    r"models?|systems?|tools?)|chat-?bots?|bots?|llms?|large language models?|language models?|ai models?|"
    r"copilots?|chatgpt|claude|gemini|ais?|a\.i\.|machine readers?|automated readers?|"
    # es / pt / it: asistente de IA, assistente de IA, assistente IA, modelo de lenguaje, modelo de linguagem
    r"(?:asistentes?|assistentes?|assistenti|modell[oi]|modelos?|agentes?|agenti)\s+(?:de\s+|d[ae]\s+|di\s+)?"
    r"(?:ia|inteligencia artificial|"
    r"intelig[eê]ncia artificial|lenguaje|linguagem|linguaggio)|"
    # fr: assistant IA, assistants d'IA, modèle de langage, intelligence artificielle
    r"(?:assistants?|agents?|mod[eè]les?)\s+(?:d['\u2019]|de\s+)?(?:ia|intelligence artificielle|langage)|"
    # de / nl: KI-Assistent, Sprachmodell, KI-Modell, AI-assistent, taalmodel
    r"ki[\s-]*(?:assistent(?:en)?|modell(?:e)?|systeme?)|sprachmodell(?:e)?|ai[\s-]*assistent(?:en)?|"
    r"taalmodel(?:len)?)"
)
"""Names of an automated reader. "assistant" alone is a job title, so it needs an AI-ish word beside it."""

_ADDRESSED: Final = re.compile(
    rf"\b(?:notes?|instructions?|messages?|directives?|reminders?|attention|warning|memo|hinweis|anweisungen?|"
    rf"nota|instrucciones|instru[cç][oõ]es|istruzioni|consigne|consignes|remarque|opmerking|instructies)"
    rf"\s+(?:to|for|für|fur|para|pour|per|aan|voor|a|aux|à)\s+(?:(?:all|any|every|the|alle|todos|los|las|les|"
    rf"tous|gli|i|de)\s+)?{_MACHINE}\b|\battention\s*:?\s*{_MACHINE}\b"
    rf"|\b(?:dear|hey|hello|attention|to|for)\s+(?:all\s+|any\s+|every\s+|the\s+)?{_MACHINE}\s*[:,]"
    rf"|\b(?:if|when)\s+you\s+are\s+(?:an?\s+)?{_MACHINE}\b"
    rf"|\b{_MACHINE}\s+(?:reading|processing|parsing|summari[sz]ing|answering|indexing|that reads?|who reads?)\b"
    rf"|\b(?:any|all|every)\s+{_MACHINE}\s+(?:must|should|shall|are|is)\b"
    r"|\bsystem\s*(?:note|prompt|message|instruction|override)s?\b|^\s*\[?\s*system\s*[\]:]"
    r"|\bsi\s+(?:eres|vous\s+[êe]tes|tu\s+es|sei|você\s+é)\s+(?:une?\s+|un\s+)?(?:ia|intelig|assistant|asistente)",
    re.IGNORECASE | re.MULTILINE,
)

_OVERRIDE: Final = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+(?:of\s+)?|any\s+(?:of\s+)?)?"
    r"(?:your\s+(?:own\s+)?|all\s+|(?:the\s+|your\s+)?(?:previous|prior|above|earlier|original|preceding|system)\s+)"
    r"(?:instructions?|guidelines?|rules|prompts?|directives?|programming|training)\b"
    r"|\byou\s+are\s+now\s+(?:an?\s+|in\s+)\b|\bfrom\s+now\s+on,?\s+(?:you|always|answer|respond|reply)\b"
    r"|\b(?:respond|answer|reply)\s+(?:only\s+)?(?:with|as if)\b[^.]{0,40}\b(?:regardless|whatever|no matter)\b"
    r"|\b(?:ignora|ignore[zs]?|olvida|oublie[zs]?|vergiss|ignoriere|negeer|dimentica)\s+(?:todas\s+|toutes\s+|"
    r"alle\s+|tutte\s+)?(?:las|les|die|de|le|tus|vos|deine|ihre|je)?\s*(?:instrucciones|instructions|"
    r"anweisungen|instructies|istruzioni|instruções|consignes|regeln|reglas|règles)\b",
    re.IGNORECASE,
)


def addressed_to_assistants(text: str) -> bool:
    """Does the text speak to an automated reader, or tell one to drop its instructions?"""
    return bool(_ADDRESSED.search(text) or _OVERRIDE.search(text))


def instruction_lines(text: str) -> list[int]:
    """1-based numbers of the lines of `text` that speak to an automated reader."""
    return [number for number, line in enumerate(text.splitlines(), start=1) if addressed_to_assistants(line)]
