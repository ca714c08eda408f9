"""Clause fidelity on LeCoQA: do the statute articles named in the questions map to chunks?

The corpus holds whole statutes (one jsonl line each, "title" = the statute); every dev question
names gold articles as statute title + article label (中华人民共和国民法典第五十四条). A gold
article is *found* when some chunk of a document with that title carries that article label
(compared by normalized number, so 第五十四条 and 第54条 agree). Titles are compared after
stripping a leading 中华人民共和国 on both sides, since gold names often use the long form.

    python bench/clause_fidelity.py [--data ../shared/bench/lecoqa] [--show 10]

Prints the share of distinct gold articles found (target ≥ 0.99) and a few misses.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from agentic_rag.ingest.pipeline import parse_document
from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int

_GOLD = re.compile(rf"^(?P<title>.+?)第(?P<no>[{CN_NUMERAL_CHARS}0-9]+)条(?:之(?P<sub>[{CN_NUMERAL_CHARS}0-9]+))?$")
_PREFIX = "中华人民共和国"


def norm_title(title: str) -> str:
    title = re.sub(r"\s+", "", title.strip().strip("《》"))
    return title[len(_PREFIX):] if title.startswith(_PREFIX) else title


def gold_key(name: str) -> tuple[str, str] | None:
    m = _GOLD.match(name.strip())
    if not m:
        return None
    no = cn_to_int(m.group("no"))
    if no is None:
        return None
    sub = cn_to_int(m.group("sub")) if m.group("sub") else None
    return norm_title(m.group("title")), f"{no}-{sub}" if sub else str(no)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = Path(__file__).resolve().parents[1]
    parser.add_argument("--data", type=Path, default=here.parent / "shared" / "bench" / "lecoqa")
    parser.add_argument("--show", type=int, default=10, help="misses to print")
    args = parser.parse_args(argv)
    corpus, dev = args.data / "corpus.jsonl", args.data / "dev.jsonl"
    if not corpus.exists() or not dev.exists():
        print(f"missing {corpus} or {dev}", file=sys.stderr)
        return 2

    started = time.perf_counter()
    docs = parse_document(corpus)
    seconds = time.perf_counter() - started
    chunks = [c for _, cs, _ in docs for c in cs]
    have: set[tuple[str, str]] = set()
    for doc, doc_chunks, _ in docs:
        title = norm_title(doc.meta.title)
        for c in doc_chunks:
            if c.clause_no and c.clause and c.clause.startswith("第"):
                have.add((title, c.clause_no))
    titles = {norm_title(d.meta.title) for d, _, _ in docs}

    gold: set[tuple[str, str]] = set()
    names: set[str] = set()
    unparsed: list[str] = []
    with dev.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            for name in json.loads(line).get("gold", []):
                names.add(name)
                key = gold_key(name)
                if key is None:
                    unparsed.append(name)
                else:
                    gold.add(key)
    found = sorted(k for k in gold if k in have)
    missing = sorted(k for k in gold if k not in have)
    share = len(found) / len(gold) if gold else 0.0
    print(f"documents {len(docs)}  chunks {len(chunks)}  chunking {seconds:.2f}s")
    print(f"distinct gold names {len(names)}  articles {len(gold)}  found {len(found)}  "
          f"missing {len(missing)}  unparsed names {len(unparsed)}")
    print(f"clause fidelity: {share:.4f}")
    for title, no in missing[: args.show]:
        why = "no document with this title" if title not in titles else "no chunk with this article"
        print(f"  miss: {title} 第{no}条 ({why})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
