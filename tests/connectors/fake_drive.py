"""A fake Google Drive on loopback: the OAuth token endpoint a service account's signed assertion is exchanged at
(the signature is checked against the key's public half), and the Drive v3 and Admin directory methods the
connector calls, with the shapes of Google's reference (`changes.getStartPageToken`, `changes.list` with
`nextPageToken` / `newStartPageToken`, `files.list` and `files.get` with `alt=media`, `files.export`,
`permissions.list` with inherited permissions, `members.list`), over a scripted workspace of files, shared
drives, sharing and groups."""

import io
import itertools
import json
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.connectors.loopback import Answer, LoopbackServer

ACCOUNT = "sourced@project.iam.gserviceaccount.com"
ACCESS_TOKEN = "ya29.fake-drive-access-token"
DOC = "application/vnd.google-apps.document"
SHEET = "application/vnd.google-apps.spreadsheet"
FOLDER = "application/vnd.google-apps.folder"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


@dataclass
class DriveFile:
    id: str
    name: str
    mime_type: str
    content: bytes
    drive: str | None = None
    permissions: list[dict[str, str]] = field(default_factory=list)
    version: int = 1
    modified: datetime = field(default_factory=lambda: datetime.now(UTC))
    trashed: bool = False


class DriveWorkspace:
    """Files (each with its sharing), shared drives (with their members) and groups; every change is logged as
    Drive's change feed logs it, for the account that can see the file."""

    def __init__(self) -> None:
        self.files: dict[str, DriveFile] = {}
        self.drives: dict[str, list[dict[str, str]]] = {}
        self.groups: dict[str, set[str]] = {}
        self.log: list[str] = []
        self.export_limit = 10 * 1024 * 1024
        """Drive exports a Google Doc, Sheet or Slides of at most this many bytes; past it, 403."""
        self._ids = (f"f{n:04d}" for n in itertools.count(1))

    def add(self, name: str, mime_type: str, content: bytes, *, drive: str | None = None,
            shared_with: list[dict[str, str]] | None = None) -> str:
        file_id = next(self._ids)
        permissions = [{"type": "user", "role": "reader", "emailAddress": ACCOUNT}] if drive is None else []
        self.files[file_id] = DriveFile(id=file_id, name=name, mime_type=mime_type, content=content, drive=drive,
                                        permissions=permissions + list(shared_with or []))
        self._changed(file_id)
        return file_id

    def edit(self, file_id: str, content: bytes) -> None:
        self.files[file_id].content = content
        self.files[file_id].modified = datetime.now(UTC)
        self._changed(file_id)

    def share(self, file_id: str, permissions: list[dict[str, str]]) -> None:
        """Replace the file's own sharing (the account's own access is kept)."""
        found = self.files[file_id]
        own = [p for p in found.permissions if p.get("emailAddress") == ACCOUNT]
        found.permissions = own + permissions
        self._changed(file_id)

    def unshare_from_account(self, file_id: str) -> None:
        found = self.files[file_id]
        found.permissions = [p for p in found.permissions if p.get("emailAddress") != ACCOUNT]
        self._changed(file_id)

    def trash(self, file_id: str) -> None:
        self.files[file_id].trashed = True
        self._changed(file_id)

    def add_drive_member(self, drive: str, email: str, *, role: str = "reader") -> None:
        """A person added to a shared drive: Drive changes none of its files' versions, and its change feed
        reports no file."""
        self.drives.setdefault(drive, []).append({"type": "user", "role": role, "emailAddress": email})

    def remove_drive_member(self, drive: str, email: str) -> None:
        """A person removed from a shared drive: as silent in the feed as an addition."""
        self.drives[drive] = [m for m in self.drives.get(drive, []) if m.get("emailAddress") != email]

    def _changed(self, file_id: str) -> None:
        self.files[file_id].version += 1
        self.log.append(file_id)

    def visible(self, found: DriveFile) -> bool:
        if found.drive is not None:
            return any(m.get("emailAddress") == ACCOUNT for m in self.drives.get(found.drive, []))
        return any(p.get("emailAddress") == ACCOUNT for p in found.permissions)

    def permissions(self, found: DriveFile) -> list[dict[str, Any]]:
        inherited = [{**member, "permissionDetails": [{"permissionType": "member", "inherited": True,
                                                       "role": member.get("role", "reader")}]}
                     for member in self.drives.get(found.drive or "", [])]
        found_by_link = [{"allowFileDiscovery": False, **p} if p.get("type") in ("domain", "anyone") else p
                         for p in found.permissions]  # Drive's default: only whoever has the link
        return [{"id": f"p{n}", "kind": "drive#permission", **p} for n, p in enumerate(inherited + found_by_link)]


class FakeDrive(LoopbackServer):
    def __init__(self, workspace: DriveWorkspace, public_key_pem: bytes) -> None:
        super().__init__()
        self.workspace = workspace
        self._public_key = public_key_pem
        self.route("POST", r"/token", self._token)
        self.route("GET", r"/drive/v3/changes/startPageToken", self._start_token)
        self.route("GET", r"/drive/v3/changes", self._changes)
        self.route("GET", r"/drive/v3/files", self._list)
        self.route("GET", r"/drive/v3/files/([^/]+)", self._get)
        self.route("GET", r"/drive/v3/files/([^/]+)/export", self._export)
        self.route("GET", r"/drive/v3/files/([^/]+)/permissions", self._permissions)
        self.route("GET", r"/admin/directory/v1/groups/([^/]+)/members", self._members)

    def authorised(self, headers: Any) -> bool:
        return True  # checked per route: the token endpoint takes an assertion, the API a bearer token

    def _bearer(self) -> bool:
        return True

    def dispatch(self, method: str, path: str, query: dict[str, str], body: Any, headers: Any) -> Answer:
        if path != "/token" and headers.get("Authorization") != f"Bearer {ACCESS_TOKEN}":
            return Answer(status=401, body={"error": {"code": 401, "message": "Invalid Credentials"}})
        return super().dispatch(method, path, query, body, headers)

    def key_file(self, folder: Path, private_key_pem: bytes) -> Path:
        path = folder / "service-account.json"
        path.write_text(json.dumps({
            "type": "service_account", "project_id": "project", "private_key_id": "key-1",
            "private_key": private_key_pem.decode(), "client_email": ACCOUNT, "client_id": "1",
            "token_uri": f"{self.base}/token"}), encoding="utf-8")
        return path

    # -- routes -----------------------------------------------------------------------------------------

    def _token(self, _query: dict[str, str], body: Any) -> Answer:
        from google.auth import jwt  # noqa: PLC0415

        try:
            # google-auth signs for Google's token audience, wherever it posts the assertion
            claims = jwt.decode(body["assertion"], certs=self._public_key,
                                audience="https://oauth2.googleapis.com/token")
        except (ValueError, KeyError):
            return Answer(status=400, body={"error": "invalid_grant"})
        if claims.get("iss") != ACCOUNT or "drive.readonly" not in claims.get("scope", ""):
            return Answer(status=400, body={"error": "invalid_scope"})
        return Answer(body={"access_token": ACCESS_TOKEN, "expires_in": 3600, "token_type": "Bearer"})

    def _file_json(self, found: DriveFile) -> dict[str, Any]:
        result: dict[str, Any] = {"kind": "drive#file", "id": found.id, "name": found.name,
                                  "mimeType": found.mime_type, "version": str(found.version),
                                  "modifiedTime": found.modified.isoformat().replace("+00:00", "Z"),
                                  "webViewLink": f"https://docs.example.com/{found.id}/view",
                                  "trashed": found.trashed}
        if found.drive:
            result["driveId"] = found.drive
        return result

    def _start_token(self, _query: dict[str, str], _body: Any) -> Answer:
        return Answer(body={"kind": "drive#startPageToken", "startPageToken": str(len(self.workspace.log) + 1)})

    def _changes(self, query: dict[str, str], _body: Any) -> Answer:
        start = int(query["pageToken"])
        if start < 1:
            return Answer(status=400, body={"error": {"code": 400, "message": "Invalid pageToken"}})
        size = int(query.get("pageSize", 100))
        entries = self.workspace.log[start - 1:start - 1 + size]
        changes = []
        for file_id in entries:
            found = self.workspace.files[file_id]
            if self.workspace.visible(found):
                changes.append({"kind": "drive#change", "changeType": "file", "fileId": file_id, "removed": False,
                                "file": self._file_json(found)})
            else:
                changes.append({"kind": "drive#change", "changeType": "file", "fileId": file_id, "removed": True})
        answer: dict[str, Any] = {"kind": "drive#changeList", "changes": changes}
        following = start + len(entries)
        if following <= len(self.workspace.log):
            answer["nextPageToken"] = str(following)
        else:
            answer["newStartPageToken"] = str(following)
        return Answer(body=answer)

    def _list(self, query: dict[str, str], _body: Any) -> Answer:
        found = [f for f in self.workspace.files.values() if self.workspace.visible(f) and not f.trashed]
        start, size = int(query.get("pageToken") or 0), int(query.get("pageSize", 100))
        page = found[start:start + size]
        answer: dict[str, Any] = {"kind": "drive#fileList", "files": [self._file_json(f) for f in page]}
        if start + size < len(found):
            answer["nextPageToken"] = str(start + size)
        return Answer(body=answer)

    def _visible_file(self, file_id: str) -> DriveFile | None:
        found = self.workspace.files.get(file_id)
        return found if found is not None and self.workspace.visible(found) else None

    def _not_found(self, file_id: str) -> Answer:
        return Answer(status=404, body={"error": {"code": 404, "message": f"File not found: {file_id}."}})

    def _get(self, query: dict[str, str], _body: Any, file_id: str) -> Answer:
        found = self._visible_file(file_id)
        if found is None:
            return self._not_found(file_id)
        if query.get("alt") == "media":
            if found.mime_type.startswith("application/vnd.google-apps"):
                return Answer(status=403, body={"error": {"code": 403, "message": "Only files with binary content "
                                                                                 "can be downloaded."}})
            return Answer(raw=found.content, content_type=found.mime_type)
        return Answer(body=self._file_json(found))

    def _export(self, query: dict[str, str], _body: Any, file_id: str) -> Answer:
        found = self._visible_file(file_id)
        if found is None:
            return self._not_found(file_id)
        if len(found.content) > self.workspace.export_limit:
            message = "This file is too large to be exported."
            return Answer(status=403, body={"error": {"code": 403, "message": message, "errors": [
                {"message": message, "domain": "global", "reason": "exportSizeLimitExceeded"}]}})
        return Answer(raw=found.content, content_type=query["mimeType"])

    def _permissions(self, query: dict[str, str], _body: Any, file_id: str) -> Answer:
        found = self._visible_file(file_id)
        if found is None:
            return self._not_found(file_id)
        permissions = self.workspace.permissions(found)
        start = int(query.get("pageToken") or 0)
        answer: dict[str, Any] = {"kind": "drive#permissionList", "permissions": permissions[start:start + 2]}
        if start + 2 < len(permissions):
            answer["nextPageToken"] = str(start + 2)
        return Answer(body=answer)

    def _members(self, _query: dict[str, str], _body: Any, group: str) -> Answer:
        from urllib.parse import unquote  # noqa: PLC0415

        key = unquote(group)
        if key not in self.workspace.groups:
            return Answer(status=404, body={"error": {"code": 404, "message": "Resource Not Found: groupKey"}})
        members = [{"kind": "admin#directory#member", "email": email, "role": "MEMBER", "type": "USER",
                    "status": "ACTIVE"} for email in sorted(self.workspace.groups[key])]
        return Answer(body={"kind": "admin#directory#members", "members": members})


def docx(*paragraphs: tuple[str | None, str]) -> bytes:
    """A minimal Word file as Google Docs exports one: paragraphs with their style ("Title", "Heading1"...)."""
    styles = "".join(f'<w:style w:type="paragraph" w:styleId="{style}"><w:name w:val="{name}"/></w:style>'
                     for style, name in (("Title", "Title"), ("Heading1", "heading 1"), ("Heading2", "heading 2")))
    body = "".join(
        "<w:p>" + (f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else "")
        + f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>' for style, text in paragraphs)
    namespace = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    files = {
        "[Content_Types].xml": (
            '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/'
            'document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.'
            'main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.styles+xml"/></Types>'),
        "_rels/.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'),
        "word/_rels/document.xml.rels": (
            '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/'
            '2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
            '2006/relationships/styles" Target="styles.xml"/></Relationships>'),
        "word/styles.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:styles {namespace}>{styles}</w:styles>',
        "word/document.xml": (f'<?xml version="1.0" encoding="UTF-8"?><w:document {namespace}><w:body>{body}'
                              f"</w:body></w:document>"),
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()
