"""Document metadata from the text itself: title, doc number, authority, dates, version, what it
repeals, language. Every field found records the rule that found it in ``DocMeta.provenance``, so
a user can see why a date was chosen and override it (sidecar ``<file>.meta.json`` or jsonl
``meta``; provenance "override").

Rules look at the head (first lines) and the tail (signature block) of a document, plus a few
whole-text statements (自…起施行, 同时废止); each is one compiled regex, so metadata costs little
even on a 70k-document bulk import.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from agentic_rag.text.dates import DATE, DATE_RE, parse_date
from agentic_rag.errors import IngestError, describe_validation
from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int
from agentic_rag.text.language import detect_language as tokenizer_detect
from agentic_rag.types import Chunk, DocMeta, DocStatus

_HEAD_CHARS = 3000
_TAIL_CHARS = 1500

# ---------------------------------------------------------------- dates

_DATE_RE = DATE_RE  # see agentic_rag.text.dates


# ---------------------------------------------------------------- compiled rules

_SEP = r"[：:\s]*"
# a label that makes the date right after it the publish date; a verb right after a date
_PUBLISH_LABEL = re.compile(
    r"(?:(发布日期|印发日期|发文日期|成文日期|发布时间|公布日期|颁布日期|签发日期)|"
    r"\b(?:Issued(?: on)?|Issue [Dd]ate|Date of [Ii]ssue|Published(?: on)?|Publication [Dd]ate|Date|"
    r"ISSUED|DATE))[：:\s]*")
_PUBLISH_CUES = ("日期", "时间", "Issue", "ISSUE", "Publi", "Date", "DATE")
# a later date the text itself gives its current version: Last updated: …, 修订日期：…
_UPDATED_LABEL = re.compile(
    r"(?:\b(?:[Ll]ast (?:[Uu]pdated|[Rr]evised|[Aa]mended|[Mm]odified|[Rr]eviewed)|[Uu]pdated(?: on)?|"
    r"[Rr]evised(?: on)?|[Aa]mended(?: on)?|LAST UPDATED|Revision [Dd]ate)|修订日期|修改日期|更新日期|修正日期)"
    r"[：:\s]*")
_UPDATED_CUES = ("pdated", "evised", "mended", "odified", "eviewed", "UPDATED", "Revision", "修订日期",
                 "修改日期", "更新日期", "修正日期")
_PUBLISHED_WORD = re.compile(r"发布|印发|公布|颁布|通过")
_EFFECTIVE_FROM = re.compile(rf"自\s*({DATE})\s*(?:起|开始)?\s*(?:施行|实施|执行|生效|正式施行|正式实施)", re.I)
_EFFECTIVE_LINE = re.compile(rf"(?:生效日期|施行日期|实施日期|执行日期|生效时间){_SEP}({DATE})", re.I)
_EFFECTIVE_EN = re.compile(
    r"\b(?:[Ee]ffective(?: date| from| as of| on)?|[Tt]akes? effect(?: on| from)?|"
    rf"[Cc]omes? into (?:force|effect)(?: on)?){_SEP}({DATE})")
_EFFECTIVE_ON_PUBLISH = re.compile(
    r"自(?:印发|发布|公布|颁布|发文)之日起(?:施行|实施|执行|生效)|effective (?:immediately|upon (?:issuance|publication))",
    re.I)
_DOC_NUMBER = re.compile(r"([\u4e00-\u9fff]{1,12}[〔\[【［(（]\s*(?:19|20)\d{2}\s*[〕\]】］)）]\s*第?\s*\d{1,5}\s*号)")
_NUMBER_LABEL = re.compile(r"(?:文号|发文字号|发文号|文件编号|编号)[：:\s]*")
_HEAD_PUNCT_MD = re.compile(r"[。；，,|]")
_EN_NUMBER = re.compile(r"(?m)^[#*\s]*(?:Policy|Document|Doc\.?|Reference|Ref\.?|File|Circular|Order)\s*"
                        r"(?:No\.?|Number|#)\s*[:：]?\s*([A-Za-z0-9][A-Za-z0-9\-/.]{1,40}[A-Za-z0-9])")
# the bracketed year of a doc number: found first (cheap), the issuer prefix is matched after it
_DOC_NUMBER_YEAR = re.compile(r"[〔\[【［(（]\s*(?:19|20)\d{2}\s*[〕\]】］)）]\s*第?\s*\d{1,5}\s*号")
_ORG_SUFFIX = (r"(?:人民政府|办公厅|办公室|委员会|常务委员会|管理局|总局|局|厅|委|部|署|院|大会|协会|"
               r"公司|集团|银行|中心|国务院|政府|Ministry|Department|Agency|Authority|Commission|"
               r"Council|Office|Bureau|Board|Inc\.?|Ltd\.?|LLC|Company|Corporation|University)")
_ORG_LINE = re.compile(rf"^[\u4e00-\u9fffA-Za-z（）()·&,. ]{{2,40}}?{_ORG_SUFFIX}(?:文件)?$")
_AUTHORITY_FIELD = re.compile(
    r"(?:发文机关|发布机关|发布单位|发文单位|颁布机关|制定机关|印发机关|发布机构)[：:\s]+([^\n，。；]{2,60})"
    r"|(?:Issued by|ISSUED BY|Issuing (?:authority|body)|Publisher|Owner|Policy owner)[：:\s]+(?:the\s+)?"
    r"([^\n;,.]{2,80})")
_ABBREVIATED = re.compile(r"\b(?:Inc|Ltd|Co|Corp|Bros|Plc|plc|L\.L\.C|S\.A|N\.V|B\.V|GmbH\.?|Dept)$")
_TITLE_AUTHORITY = re.compile(rf"^(.{{2,40}}?{_ORG_SUFFIX})(?:关于|印发)")
_VERSION_RULES = (
    (re.compile(r"[（(]\s*((?:19|20)\d{2})\s*年?\s*(?:修订|修正|修改|版)\s*[)）]"), "修订 mark"),
    (re.compile(r"((?:19|20)\d{2})\s*年?版"), "年版 mark"),
    (re.compile(r"(修订版|修订稿|修正版)"), "修订版 mark"),
    (re.compile(r"\b(?:Version|Ver\.)\s*(\d+(?:\.\d+)*)", re.I), "Version mark"),
    (re.compile(r"\bv(\d+(?:\.\d+)+)\b"), "Version mark"),
    (re.compile(r"\bRev(?:ision)?\.?\s*(\d+)\b", re.I), "Revision mark"),
)
_REPEAL_WORDS = re.compile(r"废止|停止执行|不再执行|同时失效|予以废止|[Rr]epeal|[Rr]escind|[Ss]upersede|[Rr]eplaces|[Rr]evoke")
_REPEAL_CUES = ("废止", "停止执行", "不再执行", "失效", "epeal", "escind", "upersede", "eplaces", "evoke")
_SENTENCE = re.compile(r"[^。；;\n]*(?:[。；;\n]|$)")
_BOOK_TITLE = re.compile(r"《([^《》\n]{2,80})》(?:\s*[（(]([^()（）\n]{2,40})[)）])?")
_EN_SUPERSEDES = re.compile(
    r"\b(?:supersedes|replaces|repeals|revokes|rescinds)\s+(?:and replaces\s+)?(?:the\s+)?"
    r"[\"“]?([A-Z](?:[^\"”.;\n]|\.(?=\d)){2,100}?)[\"”]?(?=\s+(?:dated|issued|of\s+\d)|\.(?!\d)|[;,\n]|$)"
    r"|(?:^|[.;]\s+)(?:The\s+)?[\"“]?([A-Z](?:[^\"”.;\n]|\.(?=\d)){2,100}?)[\"”]?\s+(?:is|are) hereby "
    r"(?:repealed|superseded|rescinded|revoked)")
_SELF_REFERENCE = re.compile(r"^本(?:办法|规定|条例|细则|通知|决定|意见|方案|法|规则|准则|标准)")
_CLAUSE_START = re.compile(r"^(?:第[一二三四五六七八九十百零〇\d]+[条章节编]|[一二三四五六七八九十]+、|\d+[.、](?!\d)|Article|Section|§)")
#: a news report's dateline under its headline: the outlet, the date, the reporters
#: ("澄阳日报　2025年6月2日　记者 林晓岚")
_DATELINE = re.compile(rf"^(?P<outlet>[\u4e00-\u9fff]{{2,12}}(?:日报|晚报|晨报|商报|时报|报|新闻网|网|通讯社|社|电视台|客户端))"
                       rf"[\s　]*(?P<date>{DATE})(?:[\s　]+(?:记者|通讯员|编辑|本报).*)?$")


# the promulgation note of a law or regulation: （2007年6月29日第十届全国人民代表大会常务委员会第二十八次
# 会议通过　根据2012年12月28日…《关于修改〈…〉的决定》修正）. One event per date; the body between
# date and verb may hold a 《决定》 (whose own 修改 is not the verb) but no comma: "2024年3月1日，会议
# 通过了…" in a news lead is no note
_EVENT = re.compile(
    rf"({DATE})\s*(?P<body>(?:《[^《》\n]{{0,80}}》|[^《》（）()\n。；，,：:]){{0,80}}?)\s*"
    rf"(?P<verb>第[{CN_NUMERAL_CHARS}]+次(?:修正|修订)|修正|修订|修改|通过|公布|颁布)")
_EVENT_BODY = re.compile(r"会议|令|决定|人民代表大会|委员会|国务院|^\s*$")
_AMENDED = ("修正", "修订", "修改")
# where the note ends: the first chapter, part, article or table of contents
_BODY_START = re.compile(rf"^[#\s]*(?:第[{CN_NUMERAL_CHARS}\d]+[编章节条]|目\s*录|附\s*则\s*$)", re.M)
_ORG_END = re.compile(rf"{_ORG_SUFFIX}$")
# the first structure of a text: a part (第二编), the 附则 of a code, or an article
_PART_START = re.compile(
    rf"^[#\s]*(?:第(?P<part>[{CN_NUMERAL_CHARS}\d]+)(?:分编|编)|(?P<fu>附\s*则)\s*$|(?P<art>第[{CN_NUMERAL_CHARS}\d]+条))",
    re.M)


def detect_language(text: str) -> str:
    """"zh" or "en": the tokenizer's rule (one rule for the whole engine), on the opening text."""
    return tokenizer_detect(text[:500])


def _lines(block: str, limit: int) -> list[str]:
    out: list[str] = []
    for line in block.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line:
            out.append(line)
            if len(out) >= limit:
                break
    return out


def _is_date_line(line: str) -> bool:
    if len(line) > 40:
        return False
    m = _DATE_RE.search(line)
    return bool(m) and len(line) - (m.end() - m.start()) <= 4


def _title(text: str, hint: str, rule: str, fallback: str) -> tuple[str, str]:
    if hint.strip():
        return hint.strip()[:200], rule or "format title"
    for line in _lines(text[:_HEAD_CHARS], 8):
        if (_DOC_NUMBER.fullmatch(line) or _is_date_line(line) or _CLAUSE_START.match(line) or _DATELINE.match(line)
                or (len(line) <= 25 and _ORG_LINE.match(line))):
            continue
        if len(line) <= 100:
            return line, "first line"
        break
    return fallback, "file name" if fallback else ""


def find_doc_number(text: str) -> str | None:
    """The document's own number: a doc number (江医保发〔2024〕9号) standing on its own line or
    after a 文号/发文字号 label, or an English "Policy No.: SR-FIN-007" line. Numbers quoted
    inside sentences name other documents and are skipped."""
    for m in _DOC_NUMBER_YEAR.finditer(text):
        start = m.start()
        prefix = start
        while prefix > 0 and start - prefix < 12 and "\u4e00" <= text[prefix - 1] <= "\u9fff":
            prefix -= 1
        if prefix == start:
            continue
        line_start = text.rfind("\n", 0, prefix) + 1
        line_end = text.find("\n", m.end())
        before = text[line_start:prefix].strip(" \t\u3000#*")
        after = text[m.end():line_end if line_end >= 0 else len(text)].strip()
        if (not before or _NUMBER_LABEL.fullmatch(before)) and len(after) <= 20 \
                and not _HEAD_PUNCT_MD.search(after):
            return re.sub(r"\s+", "", text[prefix:m.end()])
    if m := _EN_NUMBER.search(text):
        return m.group(1)
    return None


def _publish_in_head(head: str, statement: bool = False) -> tuple[dt.date | None, str]:
    """A date labelled as the publish date (发布日期：…, Issued: …), or with ``statement`` one
    followed by 发布/印发 (2024年3月1日印发). Cues are found first, dates only next to them."""
    if statement:
        for m in _PUBLISHED_WORD.finditer(head, 0, 600):
            # the date may be a few words before the verb: （2023年5月12日国务院第5次常务会议通过）
            window = head[max(0, m.start() - 60):m.start()]
            window = window[max(window.rfind("\n"), window.rfind("。")) + 1:]
            last = None
            for d in _DATE_RE.finditer(window):
                last = d
            if last is not None and (value := parse_date(last.group(0))):
                return value, "…发布 statement"
        return None, ""
    if not any(cue in head for cue in _PUBLISH_CUES):
        return None, ""
    for m in _PUBLISH_LABEL.finditer(head):
        if (d := _DATE_RE.match(head, m.end())) and (value := parse_date(d.group(0))):
            return value, "发布日期 line" if m.group(1) else "Issued line"
    return None, ""


def _declared_version_date(declared: Mapping[str, tuple[Any, str]], extra: dict[str, Any]
                           ) -> tuple[dt.date | None, str]:
    """The version date a file declares: the later of its date and its ``updated`` date; when
    both are there the earlier one is kept in ``extra["history"]``."""
    published, updated = declared.get("publish_date"), declared.get("updated")
    if published and updated and updated[0] > published[0]:
        extra["history"] = [{"date": published[0].isoformat(), "event": "published", "rule": published[1]},
                            {"date": updated[0].isoformat(), "event": "updated", "rule": updated[1]}]
        return updated
    return published or updated or (None, "")


def _version_mark(title: str, head: str) -> tuple[str, str] | None:
    """A version the title or opening states: （2024年修订）, 2024年版, Version 2, Rev. 3."""
    zone = title + "\n" + head[:500]
    if not any(cue in zone for cue in ("修订", "修正", "修改", "版", "ersion", "Ver", "v", "Rev")):
        return None
    for pattern, name in _VERSION_RULES:
        if m := pattern.search(title) or pattern.search(head[:500]):
            return m.group(1), name
    return None


def promulgation(head: str) -> list[tuple[dt.date, str, str | None]]:
    """The adoption and amendment events of a law's promulgation note, in order of date:
    ``(date, verb, issuing body or None)``, e.g. ``(2012-12-28, "修正", "全国人民代表大会常务委员会")``.
    Only the text before the first chapter or article is read.

    >>> [(str(d), v, b) for d, v, b in promulgation("（2007年6月29日第十届全国人民代表大会常务委员会第二十八次会议通过"
    ...     "　根据2012年12月28日第十一届全国人民代表大会常务委员会第三十次会议《关于修改〈中华人民共和国劳动合同法〉的决定》修正）")]
    [('2007-06-29', '通过', '全国人民代表大会常务委员会'), ('2012-12-28', '修正', '全国人民代表大会常务委员会')]
    """
    if not any(v in head for v in ("通过", "修正", "修订", "修改", "公布", "颁布")):
        return []
    zone = head[:1500]
    if m := _BODY_START.search(zone):
        zone = zone[:m.start()]
    events: list[tuple[dt.date, str, str | None]] = []
    for m in _EVENT.finditer(zone):
        body = m.group("body")
        if not _EVENT_BODY.search(body) or (date := parse_date(m.group(1))) is None:
            continue
        verb = m.group("verb")
        events.append((date, verb[-2:] if verb.startswith("第") else verb, _issuing_body(body)))
    return sorted(events, key=lambda e: e[0])


def _issuing_body(body: str) -> str | None:
    """第十届全国人民代表大会常务委员会第二十八次会议 -> 全国人民代表大会常务委员会;
    《国务院关于修改〈…〉的决定》 -> 国务院; 中华人民共和国国务院令第395号 -> 国务院."""
    if m := re.search(r"《([^《》]{2,30}?)关于", body):
        body = m.group(1)
    body = re.sub(r"《[^《》]*》", "", body)
    body = re.sub(rf"第[{CN_NUMERAL_CHARS}\d]+届", "", body)
    body = re.sub(rf"第?[{CN_NUMERAL_CHARS}\d]+次.*$|(?:全体|常务)?会议.*$|令.*$", "", body)
    body = re.sub(r"^中华人民共和国(?=国务院)", "", body.strip())
    return body if 2 <= len(body) <= 30 and _ORG_END.search(body) else None


def part_of(text: str) -> str | None:
    """The part of a code this text is, when it is not the whole: it opens with 第二编 (or a
    later part) or with the code's 附则 before any article. ``None`` for a whole text."""
    m = _PART_START.search(text[:2 * _HEAD_CHARS])
    if m is None or m.group("art"):
        return None
    if m.group("fu"):
        return "附则"
    return None if cn_to_int(m.group("part")) == 1 else f"第{m.group('part')}编"


def _updated_in_head(head: str) -> dt.date | None:
    """The date of a "Last updated: …" / 修订日期：… label (the latest when there are several)."""
    if not any(cue in head for cue in _UPDATED_CUES):
        return None
    dates = [parse_date(d.group(0)) for m in _UPDATED_LABEL.finditer(head)
             if (d := _DATE_RE.match(head, m.end()))]
    return max((d for d in dates if d is not None), default=None)


def _first(patterns: tuple[tuple[re.Pattern[str], str], ...], text: str) -> tuple[dt.date | None, str]:
    for pattern, rule in patterns:
        m = pattern.search(text)
        if m and (value := parse_date(m.group(1))):
            return value, rule
    return None, ""


def _last_date(pattern: re.Pattern[str], text: str) -> dt.date | None:
    found = None
    for m in pattern.finditer(text):
        found = m
    return parse_date(found.group(1)) if found else None


def _signature(tail: str) -> tuple[str | None, dt.date | None]:
    """The issuing body and date of a signature block (an org line, then a date line)."""
    lines = _lines(tail, 10_000)[-8:]
    date = None
    authority = None
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i].strip("（）() ")
        if date is None and _is_date_line(line):
            date = parse_date(line)
            for j in range(i - 1, max(-1, i - 4), -1):
                cand = lines[j]
                if len(cand) <= 40 and _ORG_LINE.match(cand):
                    authority = cand
                    break
            break
    return authority, date


# ---------------------------------------------------------------- what a file declares

# front matter keys and <meta> names (lowercased, "-"/" " as "_", Dublin Core / Open Graph /
# citation prefixes dropped) -> the field they state
_DECLARED_KEYS: dict[str, str] = {
    **dict.fromkeys(("title", "headline"), "title"),
    **dict.fromkeys(("date", "published", "publish_date", "published_at", "published_time",
                     "publication_date", "date_published", "pubdate", "publishdate", "issued",
                     "issue_date", "issued_on", "created", "date_created"), "publish_date"),
    **dict.fromkeys(("updated", "last_updated", "lastmod", "last_modified", "modified",
                     "modified_time", "date_modified", "updated_at", "revised", "last_revised",
                     "revision_date", "amended"), "updated"),
    **dict.fromkeys(("effective", "effective_date", "effective_from", "valid_from", "in_force_from"),
                    "effective_date"),
    **dict.fromkeys(("version", "ver", "revision", "rev"), "version"),
    **dict.fromkeys(("status", "state", "lifecycle"), "status"),
    **dict.fromkeys(("deprecated", "obsolete", "archived", "retired"), "deprecated"),
    **dict.fromkeys(("redirect", "redirect_to", "redirect_url", "moved_to", "superseded_by",
                     "replaced_by", "successor"), "superseded_by"),
    **dict.fromkeys(("supersedes", "replaces", "obsoletes", "repeals"), "supersedes"),
    **dict.fromkeys(("doc_number", "document_number", "doc_no", "policy_number", "policy_no",
                     "policy_id", "document_id", "number", "reference"), "doc_number"),
    **dict.fromkeys(("language", "lang", "locale"), "language"),
}
# several keys may name the issuer: the first present in this order wins
_AUTHORITY_KEYS = ("authority", "issuer", "issued_by", "issuing_body", "publisher", "company", "company_name",
                   "employer", "department",
                   "dept", "owner", "policy_owner", "organization", "organisation", "org", "creator",
                   "author")
# the <meta> names worth keeping in extra; the rest (viewport, robots, og:image, ...) is page plumbing
_META_EXTRA = frozenset({"description", "keywords", "subject", "category", "section", "tag", "tags",
                         "audience", "coverage", "rights", "source", "type", "abstract"})
_DECLARED_PREFIX = re.compile(r"^(?:dc|dcterms|og|article|citation|book|prism)[.:_]")
_STATUS_WORDS: dict[str, DocStatus] = {
    **dict.fromkeys(("active", "current", "published", "in force", "in_force", "valid", "effective",
                     "现行有效", "有效", "现行"), "active"),
    **dict.fromkeys(("superseded", "deprecated", "obsolete", "archived", "retired", "replaced",
                     "inactive", "outdated", "已被修改", "已修改", "失效"), "superseded"),
    **dict.fromkeys(("repealed", "revoked", "rescinded", "withdrawn", "abolished", "expired",
                     "废止", "已废止"), "repealed"),
}


def _declared_key(key: str) -> str:
    key = re.sub(r"[\s-]+", "_", key.strip().lower())
    return _DECLARED_PREFIX.sub("", key)


def _plain(value: Any) -> Any:
    """A front matter value as JSON-friendly text: dates as ISO, lists of such, mappings kept."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()[:10] if not isinstance(value, dt.datetime) else value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return parse_date(str(value)) if isinstance(value, (str, int)) else None


def declared_fields(pairs: Mapping[str, Any], rule: str, extra_keys: frozenset[str] | None = None
                    ) -> tuple[dict[str, tuple[Any, str]], dict[str, Any]]:
    """What a file says about itself (front matter keys, HTML ``<meta>`` names) as DocMeta fields,
    each with the rule that found it (``rule`` with the key filled in: ``"YAML front matter: {}"``
    -> ``"YAML front matter: owner"``), plus the rest for ``extra``.

    Dates parse (``updated`` is kept apart: the caller decides the version date); ``status``,
    ``deprecated: true`` and ``redirect_to``/``superseded_by`` set the status; ``supersedes``
    lists what this document replaces; ``redirect_from``/``aliases`` name this document's own old
    addresses and change nothing. With ``extra_keys`` only those (normalized) keys reach extra.

    >>> fields, extra = declared_fields({"title": "Leave", "Owner": "HR", "tags": ["a"]}, "front matter: {}")
    >>> fields["authority"], extra
    (('HR', 'front matter: Owner'), {'tags': ['a']})
    """
    fields: dict[str, tuple[Any, str]] = {}
    extra: dict[str, Any] = {}
    authority: dict[str, tuple[str, str]] = {}
    for key, value in pairs.items():
        norm = _declared_key(key)
        found_by = rule.format(key)
        name = _DECLARED_KEYS.get(norm)
        if value is None or value == "" or value == []:
            continue
        if norm in _AUTHORITY_KEYS and isinstance(value, (str, list)):
            text = value if isinstance(value, str) else ", ".join(str(v) for v in value)
            authority.setdefault(norm, (text.strip()[:120], found_by))
        elif name in ("publish_date", "updated", "effective_date"):
            if (date := _as_date(value)) is not None:
                fields.setdefault(name, (date, found_by))
        elif name == "title" and isinstance(value, str) and value.strip():
            fields.setdefault("title", (value.strip()[:200], found_by))
        elif name in ("version", "doc_number") and isinstance(value, (str, int, float)):
            fields.setdefault(name, (str(value).strip(), found_by))
        elif name == "language" and isinstance(value, str):
            lang = value.strip().lower()[:2]
            if lang in ("zh", "en"):
                fields.setdefault("language", (lang, found_by))
        elif name == "status" and isinstance(value, str) and value.strip().lower() in _STATUS_WORDS:
            fields["status"] = (_STATUS_WORDS[value.strip().lower()], found_by)
        elif name == "deprecated" and value is True:
            fields.setdefault("status", ("superseded", found_by))
        elif name == "superseded_by" and isinstance(value, str):
            fields.setdefault("status", ("superseded", found_by))
        elif name == "supersedes":
            names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
            names = [str(n).strip() for n in names if str(n).strip()]
            if names:
                fields.setdefault("supersedes", (names, found_by))
        if extra_keys is None or norm in extra_keys:
            extra[key] = _plain(value)
    for key in _AUTHORITY_KEYS:
        if key in authority:
            fields["authority"] = authority[key]
            break
    # what became a field is not repeated in extra; what set the status stays (redirect_to: where)
    used = {found for name, (_, found) in fields.items() if name != "status"}
    extra = {k: v for k, v in extra.items() if rule.format(k) not in used}
    return fields, extra


def extract_metadata(text: str, *, title_hint: str = "", title_rule: str = "",
                     hints: Mapping[str, str] | None = None, fallback_title: str = "",
                     front_matter: Mapping[str, Any] | None = None, front_matter_rule: str = "",
                     meta_tags: Mapping[str, str] | None = None) -> DocMeta:
    """Every metadata field the text states, with the rule that found it.

    Front matter states fields outright and beats what the text's rules find; HTML ``<meta>``
    tags (often a CMS's page dates) only fill fields the text leaves empty. Keys that are no
    field of their own (description, tags, category, redirect_from) go into ``extra``.

    >>> m = extract_metadata("关于调整报销比例的通知\\n江医保发〔2024〕9号\\n本通知自2024年3月1日起施行。")
    >>> m.doc_number, str(m.effective_date), m.provenance["effective_date"]
    ('江医保发〔2024〕9号', '2024-03-01', '自…起施行')
    """
    hints = hints or {}
    head, tail = text[:_HEAD_CHARS], text[-_TAIL_CHARS:]
    prov: dict[str, str] = {}
    fields: dict[str, Any] = {}
    strong, extra = declared_fields(front_matter or {}, (front_matter_rule or "front matter") + ": {}")
    weak, weak_extra = declared_fields(meta_tags or {}, '<meta name="{}">', _META_EXTRA)
    extra = {**weak_extra, **extra}

    if "title" in strong:
        title_hint, title_rule = strong["title"]
    elif not title_hint.strip() and "title" in weak:
        title_hint, title_rule = weak["title"]
    title, rule = _title(text, title_hint, title_rule, fallback_title)
    fields["title"] = title
    if rule:
        prov["title"] = rule

    if "doc_number" in strong:
        fields["doc_number"], prov["doc_number"] = strong["doc_number"]
    elif number := find_doc_number(head[:1500]):
        fields["doc_number"] = number
        prov["doc_number"] = "文号 pattern"
    elif "doc_number" in weak:
        fields["doc_number"], prov["doc_number"] = weak["doc_number"]

    sig_authority, sig_date = _signature(tail)
    events = promulgation(head)
    enacted_by = next((b for _, v, b in events if b and v == "通过"), None) \
        or next((b for _, _, b in events if b), None)
    authority, rule = None, ""
    if "authority" in strong:
        authority, rule = strong["authority"]
    elif m := _AUTHORITY_FIELD.search(head):
        authority = (m.group(1) or m.group(2)).strip()
        if m.group(2) and head[m.end(2):m.end(2) + 1] == "." and _ABBREVIATED.search(authority):
            authority += "."  # "Acme Robotics Inc." keeps the period of its abbreviation
        rule = "发文机关 line" if m.group(1) else "Issued by line"
    elif sig_authority:
        authority, rule = sig_authority, "signature block"
    elif enacted_by:
        authority, rule = enacted_by, "通过 line"
    else:
        for line in _lines(head, 6):
            if len(line) <= 30 and _ORG_LINE.match(line):
                authority, rule = re.sub(r"文件$", "", line), "head line"
                break
        else:
            if m := _TITLE_AUTHORITY.match(title):
                authority, rule = m.group(1), "title prefix"
            elif "authority" in weak:
                authority, rule = weak["authority"]
            elif hints.get("authority"):
                authority, rule = hints["authority"], "format metadata"
    if authority:
        fields["authority"] = authority
        prov["authority"] = rule

    publish, rule = _declared_version_date(strong, extra)
    if publish is None:
        publish, rule = _publish_in_head(head)
        updated = _updated_in_head(head)
        if updated is not None and (publish is None or updated > publish):
            if publish is not None:
                extra["history"] = [{"date": publish.isoformat(), "event": "published", "rule": rule},
                                    {"date": updated.isoformat(), "event": "updated", "rule": "Last updated line"}]
            publish, rule = updated, "Last updated line"
    amended = any(v in _AMENDED for _, v, _ in events)
    if publish is None and events and (amended or sig_date is None):
        # the text as amended last is this version: its date, the earlier events as history
        publish, rule = events[-1][0], f"latest {events[-1][1]} line" if amended else f"{events[-1][1]} line"
        extra["history"] = [{"date": d.isoformat(), "event": v, **({"by": b} if b else {})}
                            for d, v, b in events]
    if publish is None and sig_date is not None:
        publish, rule = sig_date, "signature date"
    if publish is None:
        for line in _lines(head, 4):
            if (m := _DATELINE.match(line)) and (value := parse_date(m.group("date"))):
                publish, rule = value, "news dateline"
                break
    if publish is None:
        publish, rule = _publish_in_head(head, statement=True)
    if publish is None:
        publish, rule = _declared_version_date(weak, extra)
    if publish is None:
        for key, name in (("publish_date", "format metadata"), ("pdf_date", "pdf creation date")):
            if hints.get(key) and (value := parse_date(hints[key])):
                publish, rule = value, name
                break
    if publish is not None:
        fields["publish_date"] = publish
        prov["publish_date"] = rule

    effective, rule = strong.get("effective_date", (None, ""))
    for pattern, name, cue in () if effective is not None else ((_EFFECTIVE_FROM, "自…起施行", "自"), (_EFFECTIVE_LINE, "施行日期 line", "日期"),
                               (_EFFECTIVE_EN, "Effective line", "ffect")):
        # the commencement clause sits at the end; earlier matches may quote other acts
        if cue in text and (value := _last_date(pattern, text)):
            effective, rule = value, name
            break
    if effective is None and "effective_date" in weak:
        effective, rule = weak["effective_date"]
    if effective is None and publish is not None and ("之日起" in text or "ffective" in text) \
            and _EFFECTIVE_ON_PUBLISH.search(text):
        effective, rule = publish, "自发布之日起施行"
    if effective is not None:
        fields["effective_date"] = effective
        prov["effective_date"] = rule

    version = strong.get("version") or _version_mark(title, head) or weak.get("version")
    if version is None and (publish or effective) is not None:
        version = (str((publish or effective).year), "publish year" if publish else "effective year")
    if version is not None:
        fields["version"], prov["version"] = version

    repealed = [name for name, _ in find_supersessions(text, own_title=title)]
    if "supersedes" in strong:
        names, prov["supersedes"] = strong["supersedes"]
        repealed = list(dict.fromkeys(names + repealed))
    elif repealed:
        prov["supersedes"] = "废止 statement"
    if repealed:
        fields["supersedes"] = repealed

    status = strong.get("status") or weak.get("status")
    if status is not None:
        fields["status"], prov["status"] = status

    fields["language"], prov["language"] = strong.get("language") or (detect_language(text), "CJK share")
    if part := part_of(text):
        extra["part"] = part
    fields["provenance"] = prov
    if extra:
        fields["extra"] = extra
    return DocMeta(**fields)


def find_supersessions(text: str, own_title: str = "") -> list[tuple[str, DocStatus]]:
    """Documents this text repeals or supersedes, by title or doc number, each with the status it
    gives them: ``《…》同时废止`` -> repealed; ``supersedes the X`` -> superseded."""
    out: list[tuple[str, DocStatus]] = []
    seen: set[str] = set()
    if not any(cue in text for cue in _REPEAL_CUES):
        return out
    for sm in _SENTENCE.finditer(text):
        sentence = sm.group(0)
        if not sentence.strip():
            continue
        words = _REPEAL_WORDS.search(sentence)
        if not words:
            continue
        status: DocStatus = "repealed" if re.search(r"废止|失效|repeal|rescind|revoke", sentence, re.I) \
            else "superseded"
        verbs = [m.start() for m in _REPEAL_WORDS.finditer(sentence)]

        def governed(start: int, end: int) -> bool:
            # the repeal verb must be about this name: right after it (《A》（文号）同时废止) or
            # before it in the same sentence (废止《A》); a title merely mentioned earlier is not
            return any(v < start or 0 <= v - end <= 40 for v in verbs)

        names: list[str] = []
        for bm in _BOOK_TITLE.finditer(sentence):
            if not governed(bm.start(), bm.end()):
                continue
            names.append(bm.group(1).strip())
            if bm.group(2) and _DOC_NUMBER.fullmatch(bm.group(2).strip()):
                names.append(re.sub(r"\s+", "", bm.group(2)))
        if not names:
            for dm in _DOC_NUMBER.finditer(sentence):
                if governed(dm.start(), dm.end()):
                    names.append(re.sub(r"\s+", "", dm.group(1)))
        for em in _EN_SUPERSEDES.finditer(sentence):
            name = (em.group(1) or em.group(2) or "").strip()
            if name and not re.match(r"(?i)this\b", name):
                names.append(name)
        for name in names:
            if name == own_title or name in seen or _SELF_REFERENCE.match(name):
                continue
            seen.add(name)
            out.append((name, status))
        if len(out) >= 50:  # a repeal list longer than this is an appendix table, not a statement
            break
    return out


# ---------------------------------------------------------------- user overrides

_ALIASES = {"date": "publish_date", "published": "publish_date", "publish_time": "publish_date",
            "pub_date": "publish_date", "issued": "publish_date", "effective": "effective_date",
            "doc_no": "doc_number", "number": "doc_number", "issuer": "authority",
            "lang": "language"}
_DATE_FIELDS = ("publish_date", "effective_date")


def apply_overrides(meta: DocMeta, overrides: Mapping[str, Any], source: str,
                    origin: str = "meta") -> DocMeta:
    """``meta`` with the user's values on top (provenance "override"). Known DocMeta fields (and a
    few common aliases such as ``published``) replace the extracted ones; anything else goes into
    ``extra``. A value that does not fit its field raises IngestError with one line naming
    ``origin`` (where the values came from, e.g. ``sidecar a.txt.meta.json``), the field, the
    value and the problem."""
    if not overrides:
        return meta
    data = meta.model_dump()
    prov = dict(meta.provenance)
    extra = dict(meta.extra)
    for key, value in overrides.items():
        name = _ALIASES.get(key, key)
        if name in ("provenance",):
            continue
        if value is None or value == "":
            continue  # an empty field in a bulk file means "unknown", not "erase"
        if name in DocMeta.model_fields and name != "extra":
            if name in _DATE_FIELDS and isinstance(value, str):
                parsed = parse_date(value)
                if parsed is None:
                    if name != key:  # an alias we guessed at: keep the value, do not fail the file
                        extra[key] = value
                        continue
                    raise IngestError(source, f"{origin}: field {key}={value!r}: not a date")
                value = parsed
            data[name] = value
            prov[name] = "override"
        elif name == "extra" and isinstance(value, Mapping):
            extra.update(value)
        else:
            extra[key] = value
    data["provenance"] = prov
    data["extra"] = extra
    try:
        return DocMeta(**data)
    except ValidationError as exc:
        raise IngestError(source, describe_validation(exc, f"{origin}: field")) from exc


# -- index terms ---------------------------------------------------------------------------------
_TERM = r"[\u4e00-\u9fff]{2,12}?"
_OPEN, _CLOSE = "[“\"「『]?", "[”\"」』]?"
_DEFINED = re.compile(
    # （以下简称经办机构） / (以下称"门诊慢特病")
    rf"以下(?:简称|称){_OPEN}(?P<abbr>{_TERM}){_CLOSE}[）)，,。；]"
    # 本办法所称门诊慢特病，包括… / 本法所称的作品，是指…
    rf"|本(?:法|办法|条例|规定|细则|规则|制度|通知|决定|合同|协议|章程|标准|意见|解释)所称的?"
    rf"{_OPEN}(?P<defined>{_TERM}){_CLOSE}(?:，|,|是指|包括|指)"
    # “双通道”是指…
    rf"|[“\"「『](?P<quoted>[\u4e00-\u9fff]{{2,12}})[”\"」』]，?(?:是指|指的是)")
_HEADING = re.compile(r"^第[一二三四五六七八九十百零〇两\d]+[编章节]\s*(?P<name>[\u4e00-\u9fff]{2,12})$")


def index_terms(text: str, chunks: Iterable[Chunk] = ()) -> list[str]:
    """Words a regulation defines or heads a part with, for the word-segmentation dictionary.

    Defined terms ("本办法所称门诊慢特病", "（以下简称经办机构）", "“双通道”是指") and chapter or
    section headings ("第二章 假期类别" -> 假期类别), so BM25 keeps them whole in documents and
    questions alike. Only structured documents (chunks with clause labels) are read: a news
    article's "以下简称" is seldom a term anyone asks about, and every new word costs a
    dictionary reload.

        >>> index_terms("第二条 本办法所称门诊慢特病，包括高血压等五类病种。", [])
        ['门诊慢特病']
    """
    chunks = list(chunks)
    if chunks and not any(c.clause for c in chunks):
        return []
    terms = {m.group(m.lastgroup) for m in _DEFINED.finditer(text) if m.lastgroup}
    for c in chunks:
        for part in c.path:
            m = _HEADING.match(part.strip())
            if m:
                terms.add(m.group("name"))
    return sorted(terms)


# ---------------------------------------------------------------- date candidates

_CANDIDATE_KINDS = (("publish_date", "publish"), ("effective_date", "effective"))


def date_candidates(text: str, meta: DocMeta) -> list[dict[str, Any]]:
    """Up to three candidate dates of a document, for a person to confirm: the publish date,
    the effective date, and a signature or amendment date (when it differs), each with the rule
    that found it and the span of text it was read from (``None`` when it came from front
    matter, file metadata or an override, not from the text).

    >>> text = "关于差旅的通知\\n发布日期：2024年6月18日\\n本通知自2024年7月1日起施行。"
    >>> [(c["kind"], c["date"], c["rule"], c["span"]) for c in date_candidates(text, extract_metadata(text))]
    [('publish', '2024-06-18', '发布日期 line', [13, 23]), ('effective', '2024-07-01', '自…起施行', [28, 37])]
    """
    out: list[dict[str, Any]] = []
    dates = [(m, parse_date(m.group(0))) for m in _DATE_RE.finditer(text)]
    dates = [(m, d) for m, d in dates if d is not None]

    def span_of(value: dt.date, last: bool) -> tuple[int, int] | None:
        hits = [m for m, d in dates if d == value]
        if not hits:
            return None
        m = hits[-1] if last else hits[0]
        return m.start(), m.end()

    def add(kind: str, field: str | None, value: dt.date, rule: str, last: bool) -> None:
        from_text = not rule.startswith(("YAML", "TOML", "front matter", "<meta", "format metadata",
                                         "pdf creation"))
        if rule == "override" and field in (meta.extra.get("confirmed") or {}):
            rule = "confirmed"
        span = span_of(value, last) if from_text else None
        snippet = None
        if span is not None:
            line_start = text.rfind("\n", 0, span[0]) + 1
            line_end = text.find("\n", span[1])
            line_end = len(text) if line_end < 0 else line_end
            lo, hi = max(line_start, span[0] - 30), min(line_end, span[1] + 30)
            snippet = text[lo:hi].strip()
        out.append({"kind": kind, "field": field, "date": value.isoformat(), "rule": rule,
                    "span": list(span) if span else None, "text": snippet})

    for field, kind in _CANDIDATE_KINDS:
        value = getattr(meta, field)
        if value is not None:
            add(kind, field, value, meta.provenance.get(field, ""), last=field == "effective_date")
    shown = {c["date"] for c in out}
    _, signed = _signature(text[-_TAIL_CHARS:])
    history = [h for h in meta.extra.get("history", []) if isinstance(h, dict) and h.get("date")] \
        if isinstance(meta.extra.get("history"), list) else []
    if signed is not None and signed.isoformat() not in shown:
        add("signature", None, signed, "signature date", last=True)
    else:
        for h in reversed(history):
            value = parse_date(str(h["date"]))
            if value is not None and value.isoformat() not in shown:
                add("amendment" if h.get("event") in _AMENDED else str(h.get("event") or "history"),
                    None, value, f"{h.get('event', '')} line".strip(), last=False)
                break
    return out[:3]
