"""`manifest.yml` is valid for Slack and declares exactly what the code registers and calls.

What the code registers is read from a Bolt app the listeners registered on (each listener must match a
probe built from the manifest, and each probe a listener); the Web API methods it calls are read from the
source, so adding a listener or an API call without its manifest entry or scope fails here.
"""

import ast
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jsonschema
import pytest
import yaml
from slack_bolt import App, Assistant, BoltRequest, BoltResponse
from slack_bolt.authorization import AuthorizeResult
from slack_sdk import WebClient

from bot.app import LISTENERS
from bot.surface import API_SCOPES, Action, View, bot_scopes, clarify_action_id
from core.application.answerability.clarify import MAX_OPTIONS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT.parent / "shared" / "slack" / "manifest.schema.1.0.0.json"


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(yaml.safe_load((ROOT / "manifest.yml").read_text())))
    return loaded


@pytest.fixture(scope="module")
def app() -> App:
    app = App(signing_secret="test", client=WebClient(token=None),
              authorize=lambda: AuthorizeResult(team_id="T1", bot_user_id="UBOT", bot_token="xoxb-test"))
    for listener in LISTENERS:
        listener.register(app)
    return app


def test_the_manifest_validates_against_slacks_published_schema(manifest: dict[str, Any]) -> None:
    if not SCHEMA.exists():
        pytest.skip(f"Slack's manifest schema is not at {SCHEMA} (it ships in the shared/ folder beside "
                    "the repository); the manifest was not validated")
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(manifest)


def test_socket_mode_interactivity_and_a_bot_user_are_on(manifest: dict[str, Any]) -> None:
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["features"]["bot_user"]["display_name"]


def test_the_slash_command_has_a_usage_hint(manifest: dict[str, Any]) -> None:
    assert all(command.get("usage_hint") for command in manifest["features"]["slash_commands"])


def test_every_listener_is_for_something_the_manifest_declares_and_every_declaration_has_one(
        app: App, manifest: dict[str, Any]) -> None:
    events = manifest["settings"]["event_subscriptions"]["bot_events"]
    commands = [command["command"] for command in manifest["features"]["slash_commands"]]
    probes = {f"event {name}": _event(name) for name in events}
    if "message.im" in events:
        probes["event message.im in a thread"] = _event("message.im", thread_ts="1.0")
    probes |= {f"command {name}": _command(name) for name in commands}
    probes |= {f"shortcut {item['callback_id']}": _shortcut(item["callback_id"])
               for item in manifest["features"].get("shortcuts", [])}
    if manifest["settings"]["interactivity"]["is_enabled"]:
        probes |= {f"action {action_id}": _action(action_id) for action_id in _rendered_action_ids()}
        probes |= {f"view {callback_id}": _view_submission(callback_id) for callback_id in View}
    listeners = _listeners(app)
    unmatched = [name for name, probe in probes.items() if not any(_matches(lst, probe) for lst in listeners)]
    undeclared = [lst for lst in listeners if not any(_matches(lst, probe) for probe in probes.values())]
    assert unmatched == [], "declared in manifest.yml (or rendered) but no listener handles it"
    assert undeclared == [], "a listener handles something manifest.yml does not declare"


def test_the_assistant_view_and_the_home_tab_are_declared(manifest: dict[str, Any]) -> None:
    assert manifest["features"]["assistant_view"]["assistant_description"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True


def test_the_web_api_methods_the_code_calls_are_exactly_those_whose_scopes_are_known() -> None:
    assert _called_api_methods() == set(API_SCOPES)


def test_the_manifest_declares_exactly_the_bot_scopes_the_code_needs(manifest: dict[str, Any]) -> None:
    assert set(manifest["oauth_config"]["scopes"]["bot"]) == bot_scopes()
    assert "user" not in manifest["oauth_config"]["scopes"]


# -- probes --------------------------------------------------------------------------------------------

def _rendered_action_ids() -> list[str]:
    """Each button id the renderer can emit: the fixed ones, and the first and last clarify reading."""
    fixed = [action for action in Action if action != Action.CLARIFY]
    return [*fixed, clarify_action_id(0), clarify_action_id(MAX_OPTIONS - 1)]


def _listeners(app: App) -> list[Any]:
    """The app's listeners and those of Bolt's `Assistant` middleware. Bolt has no public listing; the
    matchers themselves are what counts here."""
    found = list(app._listeners)
    for middleware in app._middleware_list:
        if isinstance(middleware, Assistant):
            for kind in (middleware._thread_started_listeners, middleware._thread_context_changed_listeners,
                         middleware._user_message_listeners, middleware._bot_message_listeners):
                found += kind or []
    return found


def _event(name: str, **extra: str) -> BoltRequest:
    """An event as Slack sends it; `message.im` is a `message` event in a DM channel."""
    kind, _, channel_type = name.partition(".")
    event: dict[str, Any] = {"type": kind, "user": "U1", "channel": "D1" if channel_type else "C1", "ts": "1.0",
                             "text": "hi", **extra}
    if channel_type:
        event["channel_type"] = channel_type
    if kind.startswith("assistant_thread"):
        event["assistant_thread"] = {"user_id": "U1", "channel_id": "D1", "thread_ts": "1.0", "context": {}}
    body = {"type": "event_callback", "team_id": "T1", "event_id": "Ev1", "event": event}
    return BoltRequest(body=json.dumps(body), headers={"content-type": ["application/json"]})


def _shortcut(callback_id: str) -> BoltRequest:
    payload = {"type": "message_action", "callback_id": callback_id, "user": {"id": "U1"}, "team": {"id": "T1"},
               "channel": {"id": "C1"}, "message": {"text": "hi", "ts": "1.0"}, "trigger_id": "t"}
    return BoltRequest(body=urlencode({"payload": json.dumps(payload)}),
                       headers={"content-type": ["application/x-www-form-urlencoded"]})


def _view_submission(callback_id: str) -> BoltRequest:
    payload = {"type": "view_submission", "user": {"id": "U1"}, "team": {"id": "T1"},
               "view": {"type": "modal", "callback_id": callback_id, "state": {"values": {}}}}
    return BoltRequest(body=urlencode({"payload": json.dumps(payload)}),
                       headers={"content-type": ["application/x-www-form-urlencoded"]})


def _command(name: str) -> BoltRequest:
    body = urlencode({"command": name, "text": "q", "user_id": "U1", "team_id": "T1", "channel_id": "C1"})
    return BoltRequest(body=body, headers={"content-type": ["application/x-www-form-urlencoded"]})


def _action(action_id: str) -> BoltRequest:
    payload = {"type": "block_actions", "user": {"id": "U1"}, "team": {"id": "T1"},
               "actions": [{"type": "button", "action_id": action_id, "block_id": "b", "value": "v"}]}
    return BoltRequest(body=urlencode({"payload": json.dumps(payload)}),
                       headers={"content-type": ["application/x-www-form-urlencoded"]})


def _matches(listener: Any, request: BoltRequest) -> bool:
    return bool(listener.matches(req=request, resp=BoltResponse(status=200)))


def _called_api_methods() -> set[str]:
    """`client.chat_postMessage(...)` and the like anywhere in bot/, as Slack method names."""
    found = set()
    for path in (ROOT / "bot").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and "_" in node.func.attr and not node.func.attr.startswith("_")
                    and node.func.attr != "api_call" and callable(getattr(WebClient, node.func.attr, None))):
                found.add(node.func.attr.replace("_", "."))
    return found
