"""What a person reads in a Block Kit payload: every mrkdwn text, in order (button values are data)."""

from typing import Any


def mrkdwn_texts(node: Any) -> str:
    found: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            if item.get("type") == "mrkdwn":
                found.append(item["text"])
            for value in item.values():
                walk(value)
        elif isinstance(item, list):
            for child in item:
                walk(child)

    walk(node)
    return "\n".join(found)
