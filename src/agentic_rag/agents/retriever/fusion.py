"""Fusing the legs' scores: weighted (the weights are ``retrieval.weights``: vector, bm25, graph,
position; absent legs' weights renormalized) or reciprocal-rank fusion."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["fuse_rrf", "fuse_weighted", "minmax"]


def minmax(scores: dict[str, float], zero_floor: bool = False) -> dict[str, float]:
    """Min-max normalization to [0, 1]. With ``zero_floor`` the lower end is 0 instead of the
    smallest score: BM25's zero means "no match", so the weakest of a few good candidates must
    not be pushed to 0 just for being last."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if zero_floor:
        lo = min(lo, 0.0)
    if hi - lo <= 1e-12:
        return {cid: 1.0 for cid in scores}
    return {cid: (s - lo) / (hi - lo) for cid, s in scores.items()}


def fuse_weighted(legs: dict[str, dict[str, float]], weights: dict[str, float],
                  position: dict[str, float], normalize: Iterable[str] = ("bm25", "vector")
                  ) -> dict[str, float]:
    """Weighted fusion: each leg's scores min-max normalized (legs named in ``normalize``; BM25
    with 0 as its floor; the others, such as graph, are already in [0, 1]), summed with ``weights``; the weights of legs
    that returned nothing are dropped and the rest renormalized so a full match scores 1.0.

    >>> fuse_weighted({"bm25": {"a": 4.0, "b": 1.0}}, {"bm25": 0.3, "vector": 0.4, "position": 0.1},
    ...               {"a": 1.0, "b": 0.3})
    {'a': 1.0, 'b': 0.2625}
    """
    present = {name: (minmax(s, zero_floor=name == "bm25") if name in normalize else s)
               for name, s in legs.items() if s}
    total = sum(weights.get(n, 0.0) for n in present) + weights.get("position", 0.0)
    if total <= 0:
        total = 1.0
    ids = sorted({cid for s in present.values() for cid in s})  # deterministic order
    weighted = [(weights.get(n, 0.0), s) for n, s in present.items()]  # looked up once, same order
    w_position = weights.get("position", 0.0)
    out = {}
    for cid in ids:
        score = sum(w * s.get(cid, 0.0) for w, s in weighted)
        score += w_position * position.get(cid, 1.0)
        out[cid] = round(score / total, 6)
    return out


def fuse_rrf(rankings: dict[str, list[str]], rrf_k: int = 60,
             position: dict[str, float] | None = None, position_share: float = 0.1) -> dict[str, float]:
    """Reciprocal-rank fusion: ``sum 1/(rrf_k + rank)`` over the legs' rankings (rank from 1),
    scaled by ``1 - position_share·(1 - position weight)`` so a footnote still ranks lower.

    >>> fuse_rrf({"bm25": ["a", "b"], "vector": ["b"]}, rrf_k=1)
    {'a': 0.5, 'b': 0.833333333}
    """
    out: dict[str, float] = {}
    for ranking in rankings.values():
        for r, cid in enumerate(ranking, 1):
            out[cid] = out.get(cid, 0.0) + 1.0 / (rrf_k + r)
    position = position or {}
    return {cid: round(s * (1.0 - position_share * (1.0 - position.get(cid, 1.0))), 9)
            for cid, s in sorted(out.items())}
