"""The Retriever's ranking constants, in one place, each with what it does.

The fusion weights and the other tunable numbers a user may change are ``RetrievalSettings`` fields
(``retrieval.*`` in the config); these are the fixed shapes of the ranking behind them.
"""

import re

#: a chunk of a superseded/repealed document keeps this share of its score (unless pinned):
#: enough to rank below its successor, not so much that the older wording vanishes, because
#: the Reasoner must see both versions to state the change and which one wins
STATUS_PENALTY = {"active": 1.0, "superseded": 0.8, "repealed": 0.75}
#: how much a place mismatch / pinned-year mismatch / slot match moves a score
PLACE_MISMATCH = 0.6
#: the oldest candidate keeps this share of its score: newer is preferred, mildly
RECENCY_FLOOR = 0.85
#: a chunk of the year the question pins / of another year
PIN_MATCH, PIN_MISMATCH = 1.2, 0.8
#: a chunk that is the clause the question names
CLAUSE_MATCH = 1.15
#: graph hits inherit this share of the seed's fused score
GRAPH_DECAY = 0.9
GRAPH_SEEDS = 5  # the strongest hits whose REFERENCES edges are followed
SEED_MIN = 0.5  # a seed must score at least half of the best direct hit
#: strong hits followed along REFERENCES edges, and how far SUPERSEDES chains are followed
SUPERSEDES_HOPS = 3
#: an older version's counterpart is added for the top few current clauses, from at most two
#: older documents each, when its wording is at least this alike (character-bigram Jaccard)
COUNTERPART_SEEDS = 5
DEFERRAL_FANOUT = 2  # a clause citing more clauses than this lists them rather than defers
COUNTERPART_DOCS = 2
#: the same matter in another document already in the evidence: a little more alike, at most
#: two such clauses per question, looked for in the first few documents of the ranking
PEER_MIN = 0.35
PEER_MAX = 2
PEER_DOCS = 4
BESIDE_SOURCE = 0.99  # an added clause's score: this share of its source's
#: multi-hop: at most this many next-hop queries a round; pieces of an entity's page read for
#: bridge entities; pool weight of an entity/bridge query's hits other than its top one
MAX_HOP_QUERIES = 6
SOURCE_PIECES = 4
SIDE_HITS = 0.7
#: near-duplicates across documents (character-bigram Jaccard), checked in the first ranks
DEDUP_JACCARD = 0.9
DEDUP_HEAD = 100
#: markers of a nested description in an English question ("the city where ...", "X's ...")
RE_NESTED = re.compile(r"\b(?:where|which|who|whose|that|when)\b(?!\s*$)|'s\b|’s\b|\bof the\b", re.IGNORECASE)

#: worker threads a retriever keeps for its other legs (dense): one per call that runs at once,
#: up to this many (the server's parallel requests); idle ones are reused
LEG_WORKERS = 8
#: counterpart clauses a retriever keeps found (per clause and compared document)
COUNTERPART_MATCHES = 4096
#: edge lookups (ids, kind, direction) a retriever keeps answered within one store version
EDGE_LOOKUPS = 4096
#: rankings' heads whose near-duplicate check a retriever keeps within one store version
DEDUPED_HEADS = 1024
#: chunks, and documents' chunk lists, a retriever keeps read within one store version
CHUNKS_KEPT = 4096
DOC_CHUNK_LISTS = 256
#: queries whose synonym expansion a retriever keeps
EXPANSIONS_KEPT = 4096
#: chunk texts whose sampled 8-grams (near-duplicate keys) are kept
SAMPLED_TEXTS = 4096
