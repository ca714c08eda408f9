"""The Reasoner's constants, in one place, each with what it does.

What a user may tune is in ``Settings`` (``reasoner.*``: the evidence-score weights, the
abstention threshold, the answer length); these are the fixed shapes behind them.
"""

#: sentences per answer (one per clause of a three-clause question, plus a deferred clause)
MAX_SENTENCES = 4
#: evidence chunks read per question (the retriever ranks; the tail adds noise, not facts)
MAX_EVIDENCE = 20
#: sentences longer than this are cut to their relevant segments (characters)
LONG_SENTENCE = {"zh": 60, "en": 110}
#: a quote still longer than this after that keeps only the clauses that answer (characters; a
#: single fact's answer stays within about 200)
QUOTE_CAP = {"zh": 150, "en": 260}
#: two sentences of different documents this alike (character-bigram Jaccard) are versions of
#: one rule: the other document's wording is weighed for conflicts whatever it scores
VERSION_ALIKE = 0.45
#: ... or, in the same-numbered clause, one holds this share of the other's character bigrams
#: (the newer wording extends the old)
VERSION_CONTAINED = 0.7
#: chunks whose sentence split a Reasoner keeps (the oldest is dropped first)
SPLIT_CACHE = 4096
#: a sentence for a special case the question does not mention counts this much
CONDITION_FACTOR = 0.8
#: a sentence that states years, none of them the one the question names, counts this much
OTHER_YEAR = 0.8
#: ... and one that states another ordinal of what the question counts (第四棒 for 最后一棒)
OTHER_ORDINAL = 0.8
#: a rate stated per another period than the question's ("per week" for "a year") counts this much
OTHER_PERIOD = 0.8
#: a sentence that states a total ("累计", "a total of") for a question asking one ("一共") counts this much
TOTAL_STATED = 1.1

#: in a question about which source prevails, a sentence another document contradicts gains this
DISPUTED_BONUS = 0.3
DISPUTED_FLOOR = 0.3  # ... when it scores at least this share of the best sentence
#: a source's title is shortened to this many characters in a conflict sentence (a passage
#: without a title is named by its first line); an English title, cut at a word, to this many
TITLE_CHARS = 40
TITLE_CHARS_EN = 64

#: a chunk of one unpunctuated line this long at most that repeats its title, beside other chunks
#: of its document, is the document's title, not a statement: no answer sentence
TITLE_ONLY_CHARS = 60

# -- term weights (how much a question word counts) ------------------------------------------
#: a generic rule word ("规定", "policy") or a word only the Router's rewrite adds
SOFT_TERM = 0.35
#: a named place or entity of the question, or its core (江南 of 江南省)
NAMED_TERM = 2.0
#: an action or manner word no chunk mentions (often just worded differently: 提交 / 提出)
UNSEEN_ACTION = 0.5
#: the words of the listed item a question part asks about
FOCUS_TERM = 2.0

# -- the lexical and answer-type signals of the evidence score (see scoring.py) -------------
#: a question word found only in the sentence's context (its heading, its clause's lead)
CONTEXT_HIT = 0.6
#: share of the question's own character bigrams in the sentence, function words included
BIGRAM = 0.1
#: the sentence is the one a question names by its words ("按照X的规定")
ASKED_MATCH = 0.3
#: the sentence says "not" of what the question says "not" of ("尚未实施" for "还没有实施")
NEGATION_MATCH = 0.3
#: the sentence is of a passage another passage's sentence leads to, for a question about a
#: thing it does not name ("the town where X was born": the town's passage answers)
HOP_LINK = 0.25
#: the sentence after a byline block run into it is kept when it has this many characters
MIN_TAIL = 8
#: a name two passages' sentences share leads from one to the other when it is this long (a
#: short capitalized word, "The", "Act", links everything)
LINK_NAME_MIN = 4
#: a value the question does not state itself, and of the kind it asks for
NEW_VALUE, KIND_MATCH = 0.4, 0.6
#: a name for who/which body/where, a procedure for "how", items for "which ones"
SHAPE_MATCH = 0.6
#: ... and a proper name the question does not give itself, for who/which body/where
NEW_NAME = 0.3
#: ... and, for "what is it called", a name in quotation or title marks the question lacks
QUOTED_NAME = 0.3

# -- selection -------------------------------------------------------------------------------
#: a new sentence this close to a part's best is preferred to one already quoted
PART_NEAR_TOP = 0.9
#: a sentence whose lexical signal for another part of the question is this much higher than
#: for the part being answered answers that other part
OTHER_PART = 0.3
#: sentences beyond the direct answer score at least this share of the threshold and of the best
EXTRA_OF_THRESHOLD, EXTRA_OF_BEST = 0.8, 0.45
#: a sentence of a clause already quoted continues it
SAME_CLAUSE_GAIN = 0.5
#: for "which ones": the lead sentence's siblings scoring this share of it are listed too
SIBLING_SHARE = 0.9
#: ... and one of the next this many sentences of its chunk that lists what the question names
LIST_FOLLOWS = 2
#: a conflict's sentences are weighed when they score this share of the threshold / the best
CONFLICT_OF_BEST = 0.6
#: an unrelated conflict (touching no chosen sentence) is dropped below this share of the lead
UNRELATED_CONFLICT = 0.85

# -- versions --------------------------------------------------------------------------------
#: a source of the version the question pins / of another version
PINNED_MATCH, PINNED_MISMATCH = 1.2, 0.8
#: a superseded or repealed source when no version is pinned
NOT_IN_FORCE = 0.85
