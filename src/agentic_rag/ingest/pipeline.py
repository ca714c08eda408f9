"""Files and folders into the store: parse, extract metadata, chunk, link, upsert.

    >>> from agentic_rag.store import open_store                      # doctest: +SKIP
    >>> report = ingest_paths(["docs/"], open_store(".arag"))         # doctest: +SKIP
    >>> [(f.path, f.status) for f in report.files]                     # doctest: +SKIP

Each document is written atomically by the store; one bad file (or jsonl line) becomes a
``failed`` result with its reason and never stops the others. Re-ingesting unchanged content is a
no-op (``unchanged``); a changed file keeps its ``doc_id`` (derived from its path) and so
``replaced`` its chunks. After all documents are stored, supersession (explicit 废止/supersedes
statements and newer versions of one title) and references to clauses of other named documents
(《…》第X条) are resolved against everything in the store.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agentic_rag.config import Settings
from agentic_rag.errors import AragError, IngestError, describe_validation
from agentic_rag.ingest import edges as edge_rules
from agentic_rag.ingest.chunking import chunk_document
from agentic_rag.ingest.metadata import apply_overrides, extract_metadata, find_supersessions, index_terms
from agentic_rag.ingest.parsers import PARSED_SUFFIXES, parse_bytes
from agentic_rag.ingest.pdf import PdfOptions, locate
from agentic_rag.store.base import DocumentStore
from agentic_rag.types import Chunk, DocMeta, Document, DocStatus, Edge

try:  # orjson is several times faster on 70k-line bulk files; json is the fallback
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _loads = json.loads

Progress = Callable[[int, int], None]
FileStatus = Literal["added", "unchanged", "replaced", "failed", "skipped"]

#: everything ``ingest_paths`` reads; ``.jsonl`` (optionally ``.jsonl.gz``) is one document per line
SUFFIXES = PARSED_SUFFIXES | {".jsonl"}
_BATCH_DOCS = 500  # documents per store transaction in bulk imports
# formats people keep beside their documents that no parser reads yet: named, so a folder's
# report says what was left out and why instead of passing over it in silence
_NO_READER = {".xls": "legacy Excel (save it as .xlsx)", ".ods": "spreadsheet",
              ".ppt": "legacy PowerPoint (save it as .pptx)", ".odp": "slides",
              ".mobi": "e-book (convert it to .epub)", ".doc": "legacy Word (save it as .docx)",
              ".odt": "OpenDocument text (save it as .docx)"}
_MAX_LOOKUPS = 2000  # store look-ups per run for supersession/reference resolution (a bound, not a tuning)


class FileResult(BaseModel):
    """What happened to one input file (or one jsonl line: ``path`` is then ``file:line``)."""

    path: str
    status: FileStatus
    doc_id: str | None = None
    chunks: int = 0
    reason: str = ""


class IngestReport(BaseModel):
    """The summary of one ``ingest_paths`` run."""

    files: list[FileResult] = Field(default_factory=list)
    edges: int = 0  # cross-document edges added after all documents were stored
    status_changes: dict[str, str] = Field(default_factory=dict)  # doc_id -> superseded/repealed
    notes: list[str] = Field(default_factory=list)  # e.g. resolution skipped above a bound
    seconds: float = 0.0

    def count(self, status: FileStatus) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def chunks(self) -> int:
        return sum(f.chunks for f in self.files if f.status in ("added", "replaced"))

    @property
    def ok(self) -> bool:
        return all(f.status != "failed" for f in self.files)


# ---------------------------------------------------------------- ids

def doc_id_for_path(path: str | Path) -> str:
    """Stable id of a file's document: the same path keeps its id when its content changes."""
    return hashlib.sha1(str(Path(path).resolve()).encode("utf-8")).hexdigest()[:12]


def doc_id_for_record(record_id: str) -> str:
    """Stable id of a jsonl record's document, from its ``id`` field."""
    return hashlib.sha1(f"jsonl:{record_id}".encode("utf-8")).hexdigest()[:12]


# ---------------------------------------------------------------- building documents

def build_document(doc_id: str, source: str, content_hash: str, text: str, *, title_hint: str = "",
                   title_rule: str = "", hints: dict[str, str] | None = None,
                   overrides: dict[str, Any] | None = None, fallback_title: str = "",
                   max_clause_chars: int = 500, overrides_from: str = "meta",
                   declared: dict[str, Any] | None = None, file_extra: dict[str, Any] | None = None,
                   layout: list | None = None) -> tuple[Document, list[Chunk], list[Edge],
                                                        list[edge_rules.PendingReference]]:
    """One document from its text: metadata (then user overrides), chunks, same-document edges,
    and the references to other documents still to resolve. ``declared``: what the file states
    about itself (``front_matter``, ``front_matter_rule``, ``meta_tags`` of a parser's result);
    ``file_extra``: facts about the file for ``meta.extra`` (``ocr_pages``); ``layout``: the page
    and box of each block of a PDF's text, so that each chunk records where it stands
    (``extra.page``, ``extra.pages``, ``extra.boxes``)."""
    meta = extract_metadata(text, title_hint=title_hint, title_rule=title_rule, hints=hints,
                            fallback_title=fallback_title, **(declared or {}))
    if file_extra:
        meta = meta.model_copy(update={"extra": {**meta.extra, **file_extra}})
    if overrides:
        meta = apply_overrides(meta, overrides, source, overrides_from)
    doc = Document(doc_id=doc_id, source=source, content_hash=content_hash, text=text, meta=meta)
    chunks = chunk_document(doc, max_clause_chars)
    if not chunks:
        raise IngestError(source, "empty file: no text to index")
    if layout:
        chunks = [c.model_copy(update={"extra": {**c.extra, **where}})
                  if (where := locate(layout, *c.span)) else c for c in chunks]
    doc_edges, pending = edge_rules.references(chunks)
    return doc, chunks, doc_edges, pending


def _read_sidecar(path: Path) -> tuple[dict[str, Any], bytes]:
    """The metadata overrides in ``<file>.meta.json`` (and its bytes, part of the content hash);
    a problem with it fails the file, the reason naming the sidecar."""
    sidecar = path.with_name(path.name + ".meta.json")
    try:
        st = sidecar.stat()
    except FileNotFoundError:
        return {}, b""
    except OSError as exc:
        raise IngestError(str(path), f"sidecar {sidecar.name}: {_path_problem(sidecar, exc)}") from exc
    if not stat.S_ISREG(st.st_mode):
        raise IngestError(str(path), f"sidecar {sidecar.name}: {_not_regular(st.st_mode)}")
    try:
        raw = sidecar.read_bytes()
    except OSError as exc:
        raise IngestError(str(path), f"sidecar {sidecar.name}: {_path_problem(sidecar, exc)}") from exc
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise IngestError(str(path), f"sidecar {sidecar.name}: invalid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise IngestError(str(path), f"sidecar {sidecar.name} must hold a JSON object of metadata "
                                     "fields")
    return data, raw


def confirm_fields(doc: Document, values: dict[str, str]) -> Path:
    """Store a person's confirmation of metadata fields (``{"publish_date": "2024-06-18"}``) in
    the document's sidecar ``<file>.meta.json``, merged with what it already holds, under the
    fields' own names (so every later ingest applies them, provenance "override") and in
    ``confirmed`` (so they show as confirmed). Checked against the document first: a value that
    does not fit its field, or a document that is no file of its own, raises IngestError."""
    path = Path(doc.source)
    if "#" in path.name and not path.is_file():
        raise IngestError(doc.source, "a jsonl record has no sidecar: put the value in its line's \"meta\"")
    if not path.is_file():
        raise IngestError(doc.source, "the document's file is gone: cannot store a confirmation beside it")
    for key in values:
        if key not in DocMeta.model_fields or key in ("provenance", "extra", "supersedes"):
            raise IngestError(doc.source, f"cannot confirm {key!r}: use one of publish_date, "
                                          "effective_date, version, title, authority, doc_number, status")
    apply_overrides(doc.meta, values, doc.source, "confirmation")  # raises on a value that does not fit
    current, _ = _read_sidecar(path)
    confirmed = current.get("confirmed") if isinstance(current.get("confirmed"), dict) else {}
    data = {**current, **values, "confirmed": {**confirmed, **values}}
    sidecar = path.with_name(path.name + ".meta.json")
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, sidecar)
    except OSError as exc:
        raise IngestError(doc.source, f"cannot write {sidecar.name}: {exc.strerror or exc}") from exc
    return sidecar


def parse_document(path: str | Path, settings: Settings | None = None
                   ) -> list[tuple[Document, list[Chunk], list[Edge]]]:
    """Parse one file (any supported type, jsonl included) without a store; raises IngestError.
    Handy in tests and for inspecting how a file will be chunked."""
    settings = settings or Settings()
    path = Path(path)
    if _suffix(path) == ".jsonl":
        out = []
        for item in _jsonl_records(path, settings):
            if isinstance(item, FileResult):
                raise IngestError(item.path, item.reason)
            out.append(item[:3])
        return out
    doc, chunks, doc_edges, _ = _file_document(path, settings)
    return [(doc, chunks, doc_edges)]


def _file_document(path: Path, settings: Settings, content_hash: str | None = None,
                   data: bytes | None = None):
    name = str(path)
    if data is None:
        data = _read_file(path, settings)
    overrides, sidecar_raw = _read_sidecar(path)
    if content_hash is None:
        content_hash = hashlib.sha256(data + sidecar_raw).hexdigest()
    ing = settings.ingest
    parsed = parse_bytes(data, name, PdfOptions(engine=ing.pdf_engine, ocr=ing.ocr, ocr_dpi=ing.ocr_dpi,
                                                ocr_max_pages=ing.ocr_max_pages))
    return build_document(doc_id_for_path(path), name, content_hash, parsed.text,
                          title_hint=parsed.title, title_rule=parsed.rule, hints=parsed.hints,
                          overrides=overrides, fallback_title=path.stem,
                          max_clause_chars=settings.ingest.max_clause_chars,
                          overrides_from=f"sidecar {path.name}.meta.json",
                          declared={"front_matter": parsed.front_matter, "meta_tags": parsed.meta_tags,
                                    "front_matter_rule": parsed.front_matter_rule},
                          file_extra=parsed.extra, layout=parsed.layout)


def _read_file(path: Path, settings: Settings) -> bytes:
    name = str(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise IngestError(name, _path_problem(path, exc)) from exc
    if not stat.S_ISREG(st.st_mode):  # reading a FIFO would block forever
        raise IngestError(name, _not_regular(st.st_mode))
    size = st.st_size
    limit = settings.ingest.max_file_mb * 1024 * 1024
    if size > limit:
        raise IngestError(name, f"file too large: {size / 1048576:.1f} MB > ingest.max_file_mb "
                                f"{settings.ingest.max_file_mb:g} MB")
    if size == 0:
        raise IngestError(name, "empty file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(name, _path_problem(path, exc)) from exc


def _suffix(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".jsonl.gz") or name.endswith(".jsonl"):
        return ".jsonl"
    return path.suffix.lower()


# ---------------------------------------------------------------- jsonl

class _NotDocuments(IngestError):
    """A jsonl file whose records are not documents; it fails as one file, not line by line."""


def _open_lines(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw) if path.name.lower().endswith(".gz") else raw
        try:
            yield from stream
        except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt .gz
            raise IngestError(str(path), f"corrupt compressed file: {exc}") from exc


def _units(path: Path) -> int:
    """Progress units of one input: its non-empty lines for jsonl, else 1. An unreadable file
    counts 1 here and is reported when it is read."""
    if _suffix(path) != ".jsonl":
        return 1
    count = 0
    try:
        for line in _open_lines(path):
            if line.strip():
                count += 1
    except (IngestError, OSError):
        return 1
    return max(1, count)


@dataclass(frozen=True, slots=True)
class _Unchanged:
    """A jsonl record whose content the store already holds: nothing was parsed."""

    doc: Document
    where: str


def _jsonl_records(path: Path, settings: Settings, stored: Callable[[str], Document | None] | None = None,
                   lines: Iterable[tuple[int, bytes]] | None = None):
    """Yield (doc, chunks, edges, pending, where) per good line, FileResult per bad one, and
    _Unchanged for a line whose content ``stored(doc_id)`` already has (not re-parsed).
    ``lines``: (line number, bytes) of a part of the file, instead of reading it whole."""
    limit = settings.ingest.max_file_mb * 1024 * 1024
    max_chars = settings.ingest.max_clause_chars
    good = 0
    numbered = lines if lines is not None else enumerate(_open_lines(path), start=1)
    for lineno, line in numbered:
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            if len(line) > limit:
                raise IngestError(where, f"record too large: {len(line) / 1048576:.1f} MB")
            try:
                record = _loads(line)
            except ValueError as exc:
                raise IngestError(where, f"invalid JSON on line {lineno}: {exc}") from exc
            if not isinstance(record, dict):
                raise IngestError(where, f"line {lineno} is not a JSON object")
            text = record.get("text")
            if not isinstance(text, str) or not text.strip():
                if good == 0 and "text" not in record:
                    # the first record is not a document: this is some other jsonl (questions, logs)
                    raise _NotDocuments(str(path), f"not a document file: line {lineno} has no \"text\" "
                                                   "(expected one {\"id\", \"title\", \"text\", \"meta\"} per line)")
                raise IngestError(where, f"line {lineno} has no \"text\"")
            rid = record.get("id")
            rid = str(rid) if rid is not None and str(rid) else f"{path.name}:{lineno}"
            title = record.get("title") or ""
            meta = record.get("meta") or {}
            if not isinstance(meta, dict):
                raise IngestError(where, f"line {lineno}: \"meta\" must be an object")
            overrides = {**meta, "extra": {**(meta.get("extra") or {}), "source_id": rid}} \
                if isinstance(meta.get("extra", {}), dict) else {**meta, "source_id": rid}
            content_hash = hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()
            doc_id = doc_id_for_record(rid)
            if stored is not None:
                try:
                    old = stored(doc_id)
                except AragError:  # cannot tell: parse it, the store decides at upsert
                    old = None
                if old is not None and old.content_hash == content_hash:
                    good += 1
                    yield _Unchanged(old, where)
                    continue
            text = text.replace("\r\n", "\n")
            doc, chunks, doc_edges, pending = build_document(
                doc_id, f"{path}#{rid}", content_hash, text,
                title_hint=str(title), title_rule="jsonl title" if title else "",
                overrides=overrides, max_clause_chars=max_chars, overrides_from=f"line {lineno} \"meta\"")
            good += 1
            yield doc, chunks, doc_edges, pending, where
        except _NotDocuments:
            raise
        except IngestError as exc:
            yield FileResult(path=where, status="failed", reason=exc.reason)
        except Exception as exc:  # one odd record must not stop a bulk import; say what broke
            yield FileResult(path=where, status="failed", reason=_unexpected(exc))


# ---------------------------------------------------------------- the run

@dataclass(slots=True)
class _Info:
    """What resolution needs to know about a document seen in this run (no text, no chunks)."""

    doc_id: str
    title: str
    norm: str
    publish_date: Any
    doc_number: str | None
    status: DocStatus
    supersedes: list[tuple[str, DocStatus]] = field(default_factory=list)
    pending: list[edge_rules.PendingReference] = field(default_factory=list)
    written: bool = False  # added or replaced in this run
    part: str | None = None  # a part of a code (附则, 第二编): a version only of that same part
    authority: str | None = None  # the issuing body: two bodies' documents are no versions of each other


class _Writer:
    """Batches documents into the store (``upsert_many`` when the store has it)."""

    def __init__(self, store: DocumentStore, report: IngestReport, infos: dict[str, _Info]) -> None:
        self.store = store
        self.report = report
        self.infos = infos
        self.batch: list[tuple[Document, list[Chunk], list[Edge], list, int]] = []
        self.bulk = getattr(store, "upsert_many", None)

    def add(self, doc: Document, chunks: list[Chunk], doc_edges: list[Edge], pending: list, where: str) -> None:
        # hold this input's place in the report so results stay in input order
        slot = len(self.report.files)
        self.report.files.append(FileResult(path=where, status="failed", doc_id=doc.doc_id,
                                            reason="not written"))
        self.batch.append((doc, chunks, doc_edges, pending, slot))
        if len(self.batch) >= _BATCH_DOCS or self.bulk is None:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch:
            return
        # defined terms and headings join the segmentation dictionary before this batch is
        # tokenized, so the documents that define them and later questions split them alike
        add_terms = getattr(self.store, "add_terms", None)
        if add_terms is not None:
            terms = {t for d, c, _, _, _ in batch for t in index_terms(d.text, c)}
            if terms:
                try:
                    add_terms(terms)
                except AragError:  # a dictionary that cannot grow only costs whole-word matches
                    pass
        results: list[str | BaseException]
        if self.bulk is not None and len(batch) > 1:
            try:
                results = list(self.bulk([(d, c, e) for d, c, e, _, _ in batch]))
            except AragError:
                results = [self._one(d, c, e) for d, c, e, _, _ in batch]  # isolate the bad one
        else:
            results = [self._one(d, c, e) for d, c, e, _, _ in batch]
        for (doc, chunks, _, pending, slot), result in zip(batch, results):
            where = self.report.files[slot].path
            if isinstance(result, BaseException):
                self.report.files[slot] = FileResult(path=where, status="failed", doc_id=doc.doc_id,
                                                     reason=f"store write failed: {result}")
                continue
            self.report.files[slot] = FileResult(path=where, status=result, doc_id=doc.doc_id,
                                                 chunks=len(chunks))
            self.infos[doc.doc_id] = _info(doc, written=result != "unchanged", pending=pending)

    def _one(self, doc: Document, chunks: list[Chunk], doc_edges: list[Edge]) -> str | BaseException:
        try:
            return self.store.upsert(doc, chunks, doc_edges)
        except AragError as exc:
            return exc


def _info(doc: Document, *, written: bool, pending: list | None = None) -> _Info:
    meta: DocMeta = doc.meta
    supersedes: list[tuple[str, DocStatus]] = []
    if meta.supersedes:
        found = dict(find_supersessions(doc.text, own_title=meta.title))
        supersedes = [(name, found.get(name, "superseded")) for name in meta.supersedes]
    # a title made from the file name is no statement of the document's: it joins no versions
    norm = "" if meta.provenance.get("title") == "file name" else edge_rules.normalize_title(meta.title)
    return _Info(doc.doc_id, meta.title, norm, meta.version_date,
                 meta.doc_number, meta.status, supersedes, list(pending or []), written,
                 meta.extra.get("part"), meta.authority)


def _expand(paths: Sequence[str | Path], report: IngestReport) -> list[Path]:
    """The files to ingest under ``paths``. Each path that cannot be used (missing, a symlink
    loop, a FIFO, not reachable by this user, an unreadable folder on the way) becomes one
    ``failed`` result with its reason; the others go ahead."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            report.files.append(FileResult(path=str(path), status="failed", reason=_path_problem(path, exc)))
            continue
        if stat.S_ISDIR(mode):
            files.extend(_walk(path, report))
        elif not stat.S_ISREG(mode):
            report.files.append(FileResult(path=str(path), status="failed", reason=_not_regular(mode)))
        elif _suffix(path) in SUFFIXES:
            files.append(path)
        else:
            report.files.append(FileResult(path=str(path), status="failed",
                                           reason=f"unsupported file type {path.suffix or '(none)'}"))
    seen: set[Path] = set()
    unique = []
    for p in files:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def _walk(root: Path, report: IngestReport) -> list[Path]:
    """Supported files under ``root``, sorted, hidden names skipped. Symlinked folders are
    followed once each (a link back up the tree is no loop); an unreadable folder, and a
    supported file that is not a regular file, are reported instead of skipped silently."""
    found: list[Path] = []
    seen_dirs: set[tuple[int, int]] = set()

    def unreadable(exc: OSError) -> None:
        where = exc.filename or str(root)
        why = ("this user cannot list it (permission denied)" if isinstance(exc, PermissionError)
               else _path_problem(Path(where), exc))
        report.files.append(FileResult(path=str(where), status="failed",
                                       reason=f"folder skipped, its files not ingested: {why}"))

    for folder, dirs, names in os.walk(root, onerror=unreadable, followlinks=True):
        try:
            st = os.stat(folder)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = None
        if key is not None and key in seen_dirs:
            dirs[:] = []
            continue
        if key is not None:
            seen_dirs.add(key)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in names:
            path = Path(folder) / name
            if name.startswith("."):
                continue
            if _suffix(path) not in SUFFIXES:
                if not (name.endswith(".meta.json") and path.with_name(name[:-10]).exists()):
                    report.files.append(FileResult(path=str(path), status="skipped", reason=_skip_reason(path)))
                continue
            try:
                mode = os.stat(path).st_mode
            except OSError as exc:
                report.files.append(FileResult(path=str(path), status="failed",
                                               reason=_path_problem(path, exc)))
                continue
            if stat.S_ISREG(mode):
                found.append(path)
            elif not stat.S_ISDIR(mode):
                report.files.append(FileResult(path=str(path), status="failed", reason=_not_regular(mode)))
    return sorted(found)


def _path_problem(path: Path, exc: OSError) -> str:
    """Why ``path`` cannot be used, in the user's terms."""
    if exc.errno == errno.ELOOP:
        return "symlink loop: the link points back to itself"
    if isinstance(exc, FileNotFoundError):
        if os.path.islink(path):
            return f"broken symlink: its target {os.readlink(path)!r} does not exist"
        return "no such file or folder"
    if isinstance(exc, NotADirectoryError):
        return "no such file or folder (a part of the path is a file, not a folder)"
    if isinstance(exc, PermissionError):
        blocked = next((str(p) for p in reversed(path.absolute().parents)
                        if p.is_dir() and not os.access(p, os.X_OK)), None) \
            if not os.access(path.absolute().parent, os.X_OK) else None
        if blocked is not None:
            return f"permission denied: this user cannot enter the folder {blocked}"
        return "permission denied: this user cannot read it"
    return f"cannot read: {exc.strerror or exc}"


def _not_regular(mode: int) -> str:
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return f"not a regular file: {kind}; only files and folders are ingested"


def _skip_reason(path: Path) -> str:
    suffix = path.suffix.lower()
    kind = _NO_READER.get(suffix)
    return f"no reader for {suffix} files ({kind})" if kind else f"unsupported file type {suffix or '(none)'}"


def expand_paths(paths: Sequence[str | Path]) -> tuple[list[Path], IngestReport]:
    """The files under ``paths`` that ingest would read, and a report holding the paths that
    cannot be read or have no reader (what ``arag ingest --queue`` splits into tasks)."""
    report = IngestReport()
    return _expand(paths, report), report


def ingest_lines(path: str | Path, lines: Iterable[tuple[int, bytes]], store: DocumentStore,
                 settings: Settings | None = None) -> IngestReport:
    """Ingest some lines of a jsonl file, given as (line number, bytes): one part of a bulk file
    (a queue task). Ids, sources and results are those a whole-file ingest gives the same lines."""
    return ingest_paths([path], store, settings, parts={Path(path): lines})


def ingest_paths(paths: Sequence[str | Path], store: DocumentStore, settings: Settings | None = None,
                 progress: Progress | None = None,
                 parts: dict[Path, Iterable[tuple[int, bytes]]] | None = None) -> IngestReport:
    """Ingest files and folders (recursively) into ``store``; never raises for a bad input file.

    ``progress(done, total)`` counts documents: one per file, one per jsonl line. ``parts``:
    for a jsonl path, the (line number, bytes) to read instead of the whole file.
    """
    settings = settings or Settings()
    started = time.perf_counter()
    report = IngestReport()
    parts = parts or {}
    if parts:
        files = [Path(p) for p in paths]
        sizes = {p: len(parts[p]) if isinstance(parts.get(p), Sequence) else 1 for p in files}
    else:
        files = _expand(paths, report)
        sizes = {p: _units(p) for p in files}
    total = sum(sizes.values())
    done = 0
    step = max(1, total // 200)
    infos: dict[str, _Info] = {}
    writer = _Writer(store, report, infos)
    # a first import into an empty index has nothing older to look up in the store
    stats = getattr(store, "stats", None)
    try:
        had_docs = bool(stats()["docs"]) if stats is not None else True
    except (AragError, KeyError, TypeError):
        had_docs = True
    # re-importing a bulk file: skip parsing records whose content the store already holds
    stored = store.get_document if had_docs else None

    def tick(n: int = 1) -> None:
        nonlocal done
        before = done
        done += n
        if progress is not None and (done // step != before // step or done == total):
            progress(done, total)

    for path in files:
        if _suffix(path) == ".jsonl":
            n = 0
            try:
                for item in _jsonl_records(path, settings, stored, parts.get(path)):
                    n += 1
                    if isinstance(item, FileResult):
                        report.files.append(item)
                    elif isinstance(item, _Unchanged):
                        doc_id = item.doc.doc_id
                        report.files.append(FileResult(path=item.where, status="unchanged", doc_id=doc_id,
                                                       chunks=len(store.chunks(doc_id))))
                        infos[doc_id] = _info(item.doc, written=False)
                    else:
                        writer.add(*item)
                    tick()
                if n == 0:
                    report.files.append(FileResult(path=str(path), status="failed", reason="empty file"))
            except IngestError as exc:  # unreadable file as a whole (corrupt gzip)
                report.files.append(FileResult(path=str(path), status="failed", reason=exc.reason))
            tick(max(0, sizes[path] - n))
            continue
        _ingest_file(path, store, settings, writer, report, infos)
        tick()
    writer.flush()
    _resolve(store, infos, report, look_in_store=had_docs)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _ingest_file(path: Path, store: DocumentStore, settings: Settings, writer: _Writer,
                 report: IngestReport, infos: dict[str, _Info]) -> None:
    name = str(path)
    try:
        data = _read_file(path, settings)
        _, sidecar_raw = _read_sidecar(path)
        content_hash = hashlib.sha256(data + sidecar_raw).hexdigest()
        doc_id = doc_id_for_path(path)
        try:
            stored = store.get_document(doc_id)
        except AragError as exc:
            raise IngestError(name, f"store read failed: {exc}") from exc
        if stored is not None and stored.content_hash == content_hash:
            # nothing to parse: the store already holds exactly this content
            report.files.append(FileResult(path=name, status="unchanged", doc_id=doc_id,
                                           chunks=len(store.chunks(doc_id))))
            infos[doc_id] = _info(stored, written=False)
            return
        doc, chunks, doc_edges, pending = _file_document(path, settings, content_hash, data)
    except IngestError as exc:
        report.files.append(FileResult(path=name, status="failed", reason=exc.reason))
        return
    except Exception as exc:  # a parser library choking on one file must not stop the others
        report.files.append(FileResult(path=name, status="failed", reason=_unexpected(exc)))
        return
    writer.add(doc, chunks, doc_edges, pending, name)


def _unexpected(exc: Exception) -> str:
    """One line for an error no parser anticipated (a library's multi-line message included)."""
    if isinstance(exc, ValidationError):
        return describe_validation(exc, "cannot ingest: invalid")
    text = " ".join(str(exc).split())
    return f"cannot ingest: {type(exc).__name__}: {text[:300]}"


# ---------------------------------------------------------------- after all documents are stored

class _Finder:
    """Finds stored documents by title or doc number: this run's documents first, then the
    store's exact look-ups (bounded per run)."""

    def __init__(self, store: DocumentStore, infos: dict[str, _Info], report: IngestReport,
                 look_in_store: bool) -> None:
        self.store = store
        self.report = report
        self.infos = infos
        self.by_title: dict[str, list[_Info]] = {}
        self.by_norm: dict[str, list[_Info]] = {}
        self.by_number: dict[str, list[_Info]] = {}
        for info in infos.values():
            self.by_title.setdefault(info.title, []).append(info)
            self.by_norm.setdefault(info.norm, []).append(info)
            if info.doc_number:
                self.by_number.setdefault(info.doc_number, []).append(info)
        self.lookups = 0
        self.find = getattr(store, "find_documents", None) if look_in_store else None
        self.cache: dict[tuple[str, str], list[tuple[str, str, Any, DocStatus, Any, str | None]]] = {}

    def stored(self, **kw: str) -> list[tuple[str, str, Any, DocStatus, Any, str | None]]:
        """(doc_id, title, publish_date, status, part, authority) of stored documents matching
        ``kw`` exactly."""
        key = next(iter(kw.items()))
        if key in self.cache:
            return self.cache[key]
        if self.find is None or self.lookups >= _MAX_LOOKUPS:
            if self.find is not None and self.lookups == _MAX_LOOKUPS:
                self.report.notes.append(f"stopped looking up stored documents after {_MAX_LOOKUPS} "
                                         "names; links to older documents outside this run may be missing")
                self.lookups += 1
            return []
        self.lookups += 1
        try:
            docs = self.find(**kw)
        except AragError:
            docs = []
        found = [(d.doc_id, d.meta.title, d.meta.version_date, d.meta.status, d.meta.extra.get("part"),
                  d.meta.authority) for d in docs]
        self.cache[key] = found
        return found

    def date_of(self, doc_id: str) -> Any:
        if doc_id in self.infos:
            return self.infos[doc_id].publish_date
        for found in self.cache.values():
            for d in found:
                if d[0] == doc_id:
                    return d[2]
        return None

    def by_name(self, name: str) -> list[str]:
        """Doc ids a name (title as written, or a doc number) refers to: an exact title or doc
        number first; only when there is none, any version of that title."""
        variants = _title_variants(name)
        ids = [i.doc_id for v in variants for i in self.by_title.get(v, [])]
        ids += [i.doc_id for i in self.by_number.get(name, [])]
        if not ids:
            for variant in variants:
                ids += [d[0] for d in self.stored(title=variant)]
            ids += [d[0] for d in self.stored(doc_number=name)] if not ids else []
        if not ids:
            ids = [i.doc_id for i in self.by_norm.get(edge_rules.normalize_title(name), [])]
        if not ids:
            # "the Travel and Expense Policy" for "Stellar River Co. Travel and Expense Policy"
            norm = edge_rules.normalize_title(name)
            if len(norm) >= 6:
                ids = [i.doc_id for key, infos in self.by_norm.items() if key.endswith(norm) for i in infos]
        return list(dict.fromkeys(ids))


def _newer(a: Any, b: Any) -> bool:
    """True when both dates are known and ``a`` is later than ``b``."""
    return a is not None and b is not None and a > b


def _title_variants(name: str) -> list[str]:
    name = name.strip().strip("《》")
    variants = [name]
    if name.startswith("中华人民共和国"):
        variants.append(name[len("中华人民共和国"):])
    elif any("\u4e00" <= ch <= "\u9fff" for ch in name[:1]):
        variants.append("中华人民共和国" + name)
    return variants


def _by_issuer(members: list[tuple[str, Any, DocStatus, str | None]]) -> list[list[tuple]]:
    """The version chains among documents of one title, each sorted by date: one per issuing
    body, since two bodies' notices of the same title (every province issues its own
    关于做好…工作的通知) are no versions of each other. A member without a known issuer joins
    the chain when there is exactly one issuer, else none. Chains of fewer than two dates are
    left out."""
    issuers = {_issuer(m[3]) for m in members if m[3]}
    chains: dict[str, list[tuple]] = {}
    for m in members:
        if m[1] is None:
            continue
        key = _issuer(m[3]) if m[3] else (next(iter(issuers)) if len(issuers) == 1 else None)
        if key is not None or not issuers:
            chains.setdefault(key or "", []).append(m)
    out = []
    for chain in chains.values():
        chain.sort(key=lambda m: (m[1], m[0]))
        if len({m[1] for m in chain}) >= 2:
            out.append(chain)
    return out


def _issuer(authority: str) -> str:
    return "".join(ch for ch in authority.casefold() if ch.isalnum())


def _resolve(store: DocumentStore, infos: dict[str, _Info], report: IngestReport,
             look_in_store: bool = True) -> None:
    if not infos:
        return
    finder = _Finder(store, infos, report, look_in_store)
    new_edges: list[Edge] = []
    status: dict[str, DocStatus] = {}

    # explicit statements: 《…》同时废止 / supersedes the X
    for info in infos.values():
        for name, target_status in info.supersedes:
            for target in finder.by_name(name):
                if target == info.doc_id or _newer(finder.date_of(target), info.publish_date):
                    continue  # a document cannot repeal itself or one published after it
                new_edges.append(Edge(src=info.doc_id, dst=target, kind="SUPERSEDES", phrase=name))
                if status.get(target) != "repealed":
                    status[target] = target_status

    # a newer version of the same title supersedes the older ones
    groups: dict[tuple[str, Any], list[tuple[str, Any, DocStatus, str | None]]] = {}
    for info in infos.values():
        if info.norm:
            groups.setdefault((info.norm, info.part), []).append(
                (info.doc_id, info.publish_date, info.status, info.authority))
    for (norm, part), members in groups.items():
        titles = {infos[m[0]].title for m in members}
        if any(i.written for i in (infos[m[0]] for m in members)):
            for title in titles:
                for doc_id, _, date, st, stored_part, authority in finder.stored(title=title):
                    if doc_id not in {m[0] for m in members} and stored_part == part:
                        members.append((doc_id, date, st, authority))
        for dated in _by_issuer(members):
            for older, newer in zip(dated, dated[1:]):
                if older[1] == newer[1]:
                    continue
                title = infos[newer[0]].title if newer[0] in infos else norm
                new_edges.append(Edge(src=newer[0], dst=older[0], kind="SUPERSEDES",
                                      phrase=f"newer version of {title}"))
                status.setdefault(older[0], "superseded")

    # references to clauses of other documents: 《…》第X条
    pending = [p for info in infos.values() if info.written for p in info.pending]
    if pending:
        targets: dict[str, str | None] = {}

        def chunks_of_title(title: str) -> list[Chunk]:
            if title not in targets:
                ids = finder.by_name(title)
                targets[title] = ids[0] if ids else None
            doc_id = targets[title]
            return store.chunks(doc_id) if doc_id else []

        new_edges.extend(edge_rules.resolve_pending(pending, chunks_of_title))

    add_edges = getattr(store, "add_edges", None)
    if new_edges:
        if add_edges is None:
            report.notes.append(f"the store cannot add edges; {len(new_edges)} cross-document edges dropped")
        else:
            try:
                # one edge per (src, dst, kind): an explicit statement beats the version rule
                unique = {(e.src, e.dst, e.kind): e for e in reversed(new_edges)}
                report.edges = add_edges(list(reversed(unique.values()))) or 0
            except AragError as exc:
                report.notes.append(f"cross-document edges not written: {exc}")
    set_status = getattr(store, "set_status", None)
    for doc_id, st in status.items():
        current = infos[doc_id].status if doc_id in infos else None
        if current == st:
            continue
        if set_status is None:
            report.notes.append("the store cannot set document status; supersession not recorded")
            break
        try:
            set_status(doc_id, st)
            report.status_changes[doc_id] = st
        except AragError as exc:
            report.notes.append(f"status of {doc_id} not set: {exc}")
