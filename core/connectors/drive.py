"""Google Drive: the files a service account can read (shared with it, or every user's with domain-wide
delegation), shared drives included, through `google-api-python-client`.

The change feed is `changes.list` from a start page token (`supportsAllDrives`, `includeItemsFromAllDrives`,
`includeRemoved`): a file edited, moved, trashed, shared or unshared is a change, and one the account may no
longer read is `removed`. The first sync takes a start token, then lists every file, so nothing changed while it
listed is missed. Google Docs, Slides and Sheets are exported as `.docx`, `.pptx` and `.csv`; PDFs, Office files,
Markdown and text are downloaded as they are; other kinds (folders, forms, images) are not documents.

Who may read a file: its permissions as `permissions.list` gives them, inherited ones included (a shared drive's
members, a folder's sharing): users and groups by e-mail, a domain, anyone. Sharing with a domain or with anyone
counts only where Drive lets them find the file (`allowFileDiscovery`), or where it is a shared drive's
membership: a file shared "with anyone who has the link" is readable by whoever was sent the link, which is not
everyone, so it grants no one unless the operator opts in (`link_sharing: true`). A group's members come from the
Admin SDK's directory, which needs domain-wide delegation (`subject`); without it a group grants no one. A
file's `version` grows with every change to it, its permissions included, so a listed version is enough to tell
an unchanged file, except for what it inherits: a shared drive's members changed change no file, so a full pass
reads every file's permissions again (`existing`) and the sync re-reads those whose readers changed.

Credentials: the path of the service account's JSON key file, from the environment; the library signs its token
requests with the key, and `execute(num_retries=...)` backs off on 429 and 5xx.
"""

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime
from typing import Any, Final

from core.config import DriveEntry
from core.connectors.port import Access, Changes, ConnectorError, Item, ItemRef, ItemUnreadable
from core.documents.formats import BY_MEDIA_TYPE
from core.domain.errors import SourceError
from core.install import install_command

SCOPES: Final = ("https://www.googleapis.com/auth/drive.readonly",
                 "https://www.googleapis.com/auth/admin.directory.group.member.readonly")
EXPORTS: Final = {
    "application/vnd.google-apps.document": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                                             ".docx"),
    "application/vnd.google-apps.presentation": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation", ".pptx"),
    "application/vnd.google-apps.spreadsheet": ("text/csv", ".csv"),
}
DOWNLOADS: Final = BY_MEDIA_TYPE
"""Files downloaded as they are: every media type the format table reads."""
FILE_FIELDS: Final = "id,name,mimeType,version,modifiedTime,webViewLink,trashed,driveId"
PAGE_SIZE: Final = 100
ONE_ITEM_REFUSALS: Final = {
    "exportSizeLimitExceeded": "the file is over Google Drive's export size limit (10 MB), so it cannot be exported",
    "cannotExportFile": "Google Drive cannot export this file",
    "cannotDownloadFile": "Google Drive does not let this file be downloaded",
}
"""What Drive answers (HTTP 403, with this `reason`) about one file it will not hand over: that file's refusal,
never the account's."""


class DriveConnector:
    def __init__(self, *, name: str, key_file: str | None = None, subject: str | None = None,
                 drives: Sequence[str] = (), api_url: str | None = None, retries: int = 5,
                 page_size: int = PAGE_SIZE, link_sharing: bool = False,
                 services: tuple[Any, Any] | None = None) -> None:
        self._name = name
        self._link_sharing = link_sharing
        self._drives = frozenset(drives)
        self._retries = retries
        self._page_size = page_size
        self._delegated = subject is not None
        self._drive, self._directory = services or _services(key_file or "", subject, api_url)

    @property
    def name(self) -> str:
        return self._name

    def changes(self, cursor: str | None) -> Iterator[Changes]:
        token = json.loads(cursor)["token"] if cursor else None
        if token is None:
            start = self._call(self._drive.changes().getStartPageToken(supportsAllDrives=True))["startPageToken"]
            yield from self._everything(json.dumps({"token": start}))
            return
        while True:
            page = self._feed_page(token)
            if page is None:  # the token expired: start again from a new one, with a full pass
                start = self._call(self._drive.changes().getStartPageToken(supportsAllDrives=True))["startPageToken"]
                yield Changes(refs=(), cursor=json.dumps({"token": start}), full=True)
                return
            refs = tuple(self._change_ref(change) for change in page.get("changes") or ()
                         if change.get("changeType", "file") == "file" and change.get("fileId"))
            drives_changed = any(change.get("changeType") == "drive" for change in page.get("changes") or ())
            following = page.get("nextPageToken")
            yield Changes(refs=refs, cursor=json.dumps({"token": following or page["newStartPageToken"]}),
                          full=drives_changed)
            if not following:
                return
            token = following

    def fetch(self, ref: ItemRef) -> Item | None:
        try:
            found = self._call(self._drive.files().get(fileId=ref.item_id, fields=FILE_FIELDS,
                                                      supportsAllDrives=True))
        except _NotFound:
            return None
        if found.get("trashed") or not self._in_scope(found):
            return None
        kind = str(found.get("mimeType") or "")
        if kind in EXPORTS:
            export_type, suffix = EXPORTS[kind]
            request = self._drive.files().export_media(fileId=ref.item_id, mimeType=export_type)
        elif kind in DOWNLOADS:
            suffix = DOWNLOADS[kind]
            request = self._drive.files().get_media(fileId=ref.item_id, supportsAllDrives=True)
        else:
            return None
        access = self._access(ref.item_id)
        try:
            content = self._call(request)
        except _NotFound:
            return None
        name = str(found.get("name") or ref.item_id)
        title = name.removesuffix(suffix) if name.lower().endswith(suffix) else name
        return Item(item_id=ref.item_id, title=title, access=access, version=str(found.get("version")),
                    url=found.get("webViewLink"), updated=_day(found.get("modifiedTime")),
                    content=bytes(content), suffix=suffix)

    def existing(self) -> Iterator[ItemRef]:
        """Every file, each with its permissions read again (`permissions.list`): a shared drive's membership
        (a member removed, a member added) changes no file's `version` and is no change of any file in the feed,
        so a full pass compares each file's access with what is stored."""
        for batch in self._everything(""):
            for ref in batch.refs:
                yield replace(ref, access=self._access(ref.item_id))

    def members(self, groups: Collection[str]) -> Mapping[str, frozenset[str]]:
        """Each group's members by e-mail, from the directory; none without domain-wide delegation."""
        found: dict[str, frozenset[str]] = {}
        for group in groups:
            emails: set[str] = set()
            token = None
            while self._delegated:
                try:
                    page = self._call(self._directory.members().list(groupKey=group, pageToken=token,
                                                                     includeDerivedMembership=True))
                except _NotFound:
                    break
                emails.update(str(member["email"]).casefold() for member in page.get("members") or ()
                              if member.get("email") and member.get("type", "USER") == "USER")
                token = page.get("nextPageToken")
                if not token:
                    break
            found[group] = frozenset(emails)
        return found

    # -- reading ----------------------------------------------------------------------------------------

    def _everything(self, cursor: str) -> Iterator[Changes]:
        token = None
        while True:
            page = self._call(self._drive.files().list(
                q="trashed = false", corpora="allDrives", includeItemsFromAllDrives=True, supportsAllDrives=True,
                pageSize=self._page_size, pageToken=token, fields=f"nextPageToken,files({FILE_FIELDS})"))
            refs = tuple(ItemRef(item_id=str(found["id"]), version=str(found.get("version")))
                         for found in page.get("files") or () if self._readable(found))
            yield Changes(refs=refs, cursor=cursor)
            token = page.get("nextPageToken")
            if not token:
                return

    def _feed_page(self, token: str) -> Mapping[str, Any] | None:
        from googleapiclient.errors import HttpError  # noqa: PLC0415  # the connectors extra is optional

        try:
            page: Mapping[str, Any] = self._call(self._drive.changes().list(
                pageToken=token, pageSize=self._page_size, includeRemoved=True, supportsAllDrives=True,
                includeItemsFromAllDrives=True, spaces="drive",
                fields=f"nextPageToken,newStartPageToken,changes(changeType,fileId,removed,file({FILE_FIELDS}))"),
                raw_errors=True)
            return page
        except HttpError as error:
            if error.resp.status in (400, 404, 410):
                return None
            raise ConnectorError(f"Google Drive: HTTP {error.resp.status} on changes.list") from None

    def _change_ref(self, change: Mapping[str, Any]) -> ItemRef:
        found = change.get("file") or {}
        gone = bool(change.get("removed") or found.get("trashed") or (found and not self._readable(found)))
        return ItemRef(item_id=str(change["fileId"]), version=None if gone else str(found.get("version")),
                       deleted=gone)

    def _readable(self, found: Mapping[str, Any]) -> bool:
        kind = str(found.get("mimeType") or "")
        return (kind in EXPORTS or kind in DOWNLOADS) and not found.get("trashed") and self._in_scope(found)

    def _in_scope(self, found: Mapping[str, Any]) -> bool:
        return not self._drives or found.get("driveId") in self._drives

    def _access(self, file_id: str) -> Access:
        users: set[str] = set()
        groups: set[str] = set()
        domains: set[str] = set()
        anyone = False
        token = None
        while True:
            page = self._call(self._drive.permissions().list(
                fileId=file_id, supportsAllDrives=True, pageToken=token,
                fields="nextPageToken,permissions(id,type,role,emailAddress,domain,deleted,allowFileDiscovery,"
                       "permissionDetails)"))
            for permission in page.get("permissions") or ():
                if permission.get("deleted"):
                    continue
                kind = permission.get("type")
                if kind in ("domain", "anyone") and not (self._link_sharing or _findable(permission)):
                    continue  # only whoever holds the link: no audience Sourced can name
                if kind == "user" and permission.get("emailAddress"):
                    users.add(str(permission["emailAddress"]).casefold())
                elif kind == "group" and permission.get("emailAddress"):
                    groups.add(str(permission["emailAddress"]).casefold())
                elif kind == "domain" and permission.get("domain"):
                    domains.add(str(permission["domain"]).casefold())
                elif kind == "anyone":
                    anyone = True
            token = page.get("nextPageToken")
            if not token:
                return Access(anyone=anyone, domains=frozenset(domains), users=frozenset(users),
                              groups=frozenset(groups))

    def _call(self, request: Any, *, raw_errors: bool = False) -> Any:
        """Run a request with the library's backoff; an error becomes one line (never a credential)."""
        from google.auth.exceptions import GoogleAuthError  # noqa: PLC0415
        from googleapiclient.errors import HttpError  # noqa: PLC0415

        try:
            return request.execute(num_retries=self._retries)
        except HttpError as error:
            if error.resp.status == 404:
                raise _NotFound from None
            if raw_errors:
                raise
            raise _http_error(error) from None
        except GoogleAuthError as error:
            raise ConnectorError(f"Google Drive: the service account's token was refused ({type(error).__name__})"
                                 ) from None
        except OSError as error:
            raise ConnectorError(f"Google Drive: unreachable ({type(error).__name__})") from None


def _findable(permission: Mapping[str, Any]) -> bool:
    """A domain or anyone permission that lets them find the file, or a shared drive's membership (which is
    membership, not a link)."""
    details = permission.get("permissionDetails") or ()
    member = any(isinstance(detail, Mapping) and detail.get("permissionType") == "member" for detail in details)
    return member or permission.get("allowFileDiscovery") is True


def _http_error(error: Any) -> ConnectorError:
    """One line for Drive's answer: a 403 says Drive's own reason (a file over the export limit is that file's
    refusal, not the account's); only a 401 is the service account refused."""
    status = error.resp.status
    details = getattr(error, "error_details", None)
    reasons = [str(detail.get("reason")) for detail in details if isinstance(detail, Mapping)
               and detail.get("reason")] if isinstance(details, list) else []
    for reason in reasons:
        if reason in ONE_ITEM_REFUSALS:
            return ItemUnreadable(f"{ONE_ITEM_REFUSALS[reason]} (HTTP {status} {reason})")
    if status == 401:
        return ConnectorError(f"Google Drive: HTTP {status} (the service account was refused)")
    if status == 403:
        said = reasons[0] if reasons else "forbidden"
        return ConnectorError(f"Google Drive: HTTP {status} ({said}: the service account may not do this)")
    return ConnectorError(f"Google Drive: HTTP {status} (after retries)")


class _NotFound(SourceError):
    """A file or group that is gone, or that the account may not read."""


def _services(key_file: str, subject: str | None, api_url: str | None) -> tuple[Any, Any]:
    try:
        from google.oauth2 import service_account  # noqa: PLC0415  # the connectors extra is optional
        from googleapiclient.discovery import build  # noqa: PLC0415
    except ImportError:
        raise ConnectorError("the Google Drive connector needs google-api-python-client and google-auth: "
                             + install_command([r for _, r in DriveEntry.libraries])) from None
    try:
        credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
            key_file, scopes=list(SCOPES))
    except (OSError, ValueError) as error:
        raise ConnectorError(f"Google Drive: the service account key file cannot be read ({type(error).__name__})"
                             ) from None
    if subject:
        credentials = credentials.with_subject(subject)
    root = (api_url or "https://www.googleapis.com/").rstrip("/") + "/"
    drive = build("drive", "v3", credentials=credentials, cache_discovery=False, static_discovery=True,
                  client_options={"api_endpoint": f"{root}drive/v3/"} if api_url else None)
    directory = build("admin", "directory_v1", credentials=credentials, cache_discovery=False, static_discovery=True,
                      client_options={"api_endpoint": root} if api_url else None)
    return drive, directory


def _day(text: object) -> date | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).date()
    except ValueError:
        return None


def connect(entry: DriveEntry, credential: str) -> DriveConnector:
    """The connector of a `kind: drive` entry; `credential` is the path of its service account's key file."""
    return DriveConnector(name=entry.name, key_file=credential, subject=entry.subject, drives=entry.drives,
                          api_url=entry.api_url, link_sharing=entry.link_sharing)
