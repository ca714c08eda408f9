"""What a question asks for: the type of answer it wants, read from its wording.

``analyze(question)`` returns an :class:`Asked`: the answer type (a date or time, a number —
amount, percentage, count, duration —, a person, an organisation, a place, a list, yes/no, a
definition or procedure, a comparison, or ``other``), the kinds of quantity it wants, and
whether it wants every item of an enumeration. Chinese and English, from question words
(什么时候, 多少, 谁, 哪里, 哪些, when, how much, who, where, which ...) and, for the bare noun
phrases news questions often are ("……的开幕时间", "……死亡人数", "……总导演"), from the head noun
the phrase ends with.

``carries(answer_type, sentence)`` says whether a sentence *can* state an answer of that type:
a "when" question needs a date or time expression (or, as rules tell time, the event it is tied
to: "一致时成立", "upon return"), "how much" a number, "who" a name or a role.
The Reasoner never picks a sentence that cannot carry the asked type as the answer sentence.

``fills_slot(sentence, question)`` says whether a sentence states, in the frame the question's
own words make around its question word, what that word asks ("在哪里举行" and "在……教堂举行").

    >>> analyze("2022年冬奥会开幕式总导演是谁").answer_type
    'person'
    >>> analyze("How much is the daily meal allowance?").answer_type
    'number'
    >>> carries("date", "The ceremony opened on 4 February 2022.")
    True
    >>> carries("date", "The ceremony was held in the national stadium.")
    False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from agentic_rag.text.clauses import ASKS_PENALTY, CROSS_REFERENCE
from agentic_rag.text.dates import MONTH
from agentic_rag.text.quantities import CLOCK_TIME, extract_quantities, rate_measures, rate_periods

__all__ = ["states_none", "states_whole", "asks_money", "counts_in", "Asked", "AnswerType", "analyze", "split_asks", "carries", "unasked_kind", "is_proper_name", "names_new", "quotes_new_name", "new_quantity_kinds",
           "lists_items",
           "reads_as_procedure", "fills_slot", "PAY_CYCLE", "ASKS_FORMER", "subject_of", "scene", "asked_meaning", "defines", "ordinals", "CONSTRAINING",
           "measured_kind"]

AnswerType = str  # one of ANSWER_TYPES
ANSWER_TYPES = ("date", "number", "person", "organization", "place", "name", "sanction", "list", "yes_no",
                "definition", "comparison", "other")
#: answer types a sentence can fail to carry (a yes/no or a definition fits any sentence, and a
#: single item may answer "which ones"); "name" is what something is called (吉祥物叫什么);
#: "sanction" the penalty for an act (会被怎么罚, "what is the penalty for ..."): the clause that
#: states the duty is no answer, the one that states what follows its breach is
CONSTRAINING = frozenset({"date", "number", "person", "organization", "place", "name", "sanction"})


@dataclass(frozen=True)
class Asked:
    """What one question (or one sub-question) asks for."""

    answer_type: AnswerType = "other"
    #: kinds of quantity wanted (duration, money, percent, date, count), from 多少天 / how much ...
    kinds: frozenset[str] = frozenset()
    #: a value is wanted (an amount, a rate, a period, a date): a sentence stating one scores higher
    quantity: bool = False
    #: every item is wanted (哪些 / which ... / what are ...)
    enumeration: bool = False
    #: whether a rule applies (是否 / 算不算 / "Is ..."): its 限额 / 比例 name the subject, not a value
    yes_no: bool = False
    #: how many things it asks ("how long is probation, and how many days ...": 2)
    asks: int = 1


# -- reading a question ------------------------------------------------------------------------

_YES_NO = re.compile(r"算不算|是不是|是否|会不会|能不能|可不可以|能否|可否|有没有|要不要|吗\s*[？?]?\s*$|"
                     r"^\s*(?:is|are|was|were|does|do|did|can|could|will|would|should|must|may|has|have)\b|"
                     # after the scene a question sets: "If I resign before it is paid, do I still get it?"
                     r"[,，]\s*(?:is|are|was|were|does|do|did|can|could|will|would|should|must|may|has|have)\s+"
                     r"(?:i|we|you|they|he|she|it|my|our|the|this|that|there)\b[^,，]*[?？]\s*$", re.I)
_EXPLICIT_QUANTITY = re.compile(r"多少|(?<!哪)几|多长|多久|多高|多大|how (?:much|many|long|soon|often)|"
                                r"what (?:percentage|rate|amount)", re.I)
_ASKS_QUANTITY = re.compile(
    r"多少|(?<!哪)几|多长|多久|多高|多大|比例|标准|限额|额度|时限|期限|什么时候|何时|哪天|起付|金额|费用|天数|"
    r"how (?:much|many|long|often|soon)|what (?:percentage|rate|amount|share)|\bwhen\b|\blimit\b|"
    r"\brate\b|\bdeadline\b|\bhow\b|\bup to what\b|\b(?:length|duration|minimum|maximum)\b", re.I)
#: things that last: "length" of one asks how long ("length of service", "contract length"); of
#: anything else it asks a size ("password length": 14 characters)
_LASTING = (r"service|employment|stay|leave|trip|journey|absence|notice|probation|contract|tenancy|membership|"
            r"term|time|period|visit|meeting|break|shift|flight|storage|retention|loan|mortgage|warranty|"
            r"subscription|licen[cs]e|suspension|training|course|programme|program|placement|secondment|"
            r"assignment|sabbatical|holiday|vacation|lease")
_LENGTH_OF_TIME = (rf"\blength\s+of\s+(?:the\s+|a\s+|an\s+|my\s+|your\s+|their\s+)?(?:\w+\s+)?(?:{_LASTING})s?\b"
                   rf"|\b(?:{_LASTING})s?\s+length\b|\bhow\s+long\b")
#: a rate per unit ("rate per mile", "hourly rate") is a sum of money for each unit; a rate alone a share
_RATE_UNITS = ("hourly", "daily", "nightly", "mileage")
_UNIT_RATE = rf"\brate per\b|\b(?:{'|'.join(_RATE_UNITS)}) rate\b"
_SHARE_RATE = r"\brate\b(?! per\b)" + "".join(rf"(?<!{unit} rate)" for unit in _RATE_UNITS)
#: what kind of value a question asks for, from its question words
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("duration", re.compile(r"多少天|几天|多少个?工作日|几个工作日|多长时间|多久|多少年|几年|几个月|多少个月|期限|时限|有效期|"
                            r"how long|how many (?:days|weeks|months|years|hours)|how (?:soon|fast|quickly)|within how|"
                            r"时长|\bduration\b|" + _LENGTH_OF_TIME + "|"
                            r"\b(?:how much|minimum|maximum|what)\s+(?:\w+\s+)?(?:time(?: off)?|leave|notice|holidays?|"
                            r"vacation|absence)\b", re.I)),
    ("money", re.compile(r"多少钱|多少元|几元|金额|限额|额度|费用是多少|补贴|津贴|how much|\bcost\b|allowance|amount|"
                         + _UNIT_RATE, re.I)),
    ("percent", re.compile(r"比例|百分之几|几成|百分比|percentage|\bshare\b|" + _SHARE_RATE, re.I)),
    ("date", re.compile(r"哪天|哪一天|什么时候|何时|几月几日|日期|\bwhen\b|\bdate\b", re.I)),
    ("time", re.compile(r"几点|几时|什么时段|哪个时段|\bwhat time\b|\bat what hour\b|\bopening hours\b", re.I)),
    ("count", re.compile(r"多少次|几次|多少人|几人|多少项|几项|how many (?:times|people|persons|items)", re.I)),
    ("age", re.compile(r"年纪|年龄|岁数|几岁|多少岁|周岁|多大(?:了|才|的)|how old|what age|minimum age|age limit", re.I)),
)
#: English "which" asks at the start of a clause or after a preposition; after a noun it is a
#: relative pronoun ("the association which published ..."), which asks for nothing
_ENUMERATION = re.compile(r"哪些|哪几|有哪|都有谁|有谁|(?:^|[,;:]\s*|\b(?:and|but|or|in|of|for|from|to|at|on|by|with)\s+)"
                          r"which\b(?! one)|\bwhat are\b|\blist\b|\bname the\b|"
                          r"\bwhat (?:kinds?|types?|sorts?) of\b", re.I)

#: the words after English "which" (after "kinds of": those ask for items)
_WHICH_NOUN = re.compile(r"\s+((?:kinds|types|sorts)\s+of\b)?((?:\s*[a-z'-]+){1,5})", re.I)
#: verbs a "which" noun phrase stops before ("which hire firms are ...")
_AUX_EN = frozenset("is are was were am be do does did can could must should shall will would may might have has had "
                    "need needs".split())


def _plural(word: str) -> bool:
    w = word.lower()
    return w.endswith("s") and not w.endswith(("ss", "us", "is", "'s")) or w in ("people", "children", "staff", "men",
                                                                               "women", "criteria", "media")


def _one_of(text: str, m: re.Match[str]) -> bool:
    """Whether an English "which" asks for one thing, by the number of its noun, the word before
    the verb that follows ("in which payroll run is ...", "which cloud storage providers are
    ...") or else the word right after it ("which country hosted", "which jobs fall under")."""
    if not m.group(0).lower().rstrip().endswith("which"):
        return False
    w = _WHICH_NOUN.match(text, m.end())
    if w is None or w.group(1):
        return False  # "which kinds of ...": items
    words = w.group(2).split()
    if words[0].lower() in _AUX_EN or words[0].lower() == "of":
        return False  # "which are ...", "which of the following": items
    verb = next((i for i, x in enumerate(words) if x.lower() in _AUX_EN), 0)
    return not _plural(words[verb - 1] if verb else words[0])


# question words, tried in order; the first that matches decides
_COMPARISON = re.compile(
    r"哪个更|谁更|更早|更晚|更多|更少|更大|更高|更长|相比|比较|区别|差别|差异|"
    r"\b(?:which|who) (?:\w+ ){0,4}(?:(?<!\bthe )first|earlier|later|older|younger|larger|bigger|smaller|longer|"
    r"shorter|more|less|higher|lower)\b|\bcompared?\b|\bdifference between\b|\bboth\b", re.I)
_DATE = re.compile(
    r"什么时候|何时|哪天|哪一天|哪年|哪一年|几月|几号|几点|什么时间|日期|(?<!多长)(?<!多少)时间\s*(?:是|为)?\s*[？?]?\s*$|"
    r"(?:开始|结束|举行|举办|上映|开幕|闭幕|发布|召开)(?:的)?(?:时间|日期)|"
    # "when" asks where it opens the question or a clause of it ("…, and when does it end?",
    # "tell me when …"); inside a clause it is a conjunction ("the meal limit when travelling")
    r"(?:^\s*|[,;:]\s*|\b(?:and|or|but|until|since|by|from|know|tell me|ask|wonder|wondering)\s+)when\b|"
    r"\bwhat (?:year|date|day|month|time)\b|\bwhich (?:year|date|day|month)\b|\bon what date\b|"
    r"\bin what year\b|\b(?:release|premiere|launch|start|end|opening|closing|birth|death|due) date\b|"
    r"\bdate of\b|\b(?:what|when)(?:'s|\s+is|\s+was)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:deadline|cut-?off)\b|\bby when\b|"
    r"截止(?:时间|日期)?(?:是)?\s*[？?]?\s*$", re.I)
_NUMBER = re.compile(
    r"多少|(?<!哪)几(?!乎)|多长|多久|多高|多大|多重|多远|百分之几|几成|"
    r"(?:人数|数量|总数|次数|销量|产量|总产量|营收|收入|票房|产值|价格|售价|金额|规模|吞吐量|交付量|净利润|利润|"
    r"增速|增幅|增长率|比例|比率|出生率|[^\s，,]率|震级|点数|总额|份额|排名)\s*(?:是|为)?\s*[？?]?\s*$|"
    r"增长了?多少|\bhow (?:much|many|long|old|far|big|tall|often|soon|quickly|fast)\b|\bup to what\b|"
    r"\bwhat (?:is|are|was|were) the (?:minimum|maximum)\b|\bwhat (?:percentage|rate|amount|share|"
    r"number|proportion|fraction)\b|\bnumber of\b|\bwhat (?:is|was|were|are) (?:the |its |their )?(?:\S+'s )?"
    r"(?:\w+ )?(?:revenue|sales|population|price|cost|salary|budget|score|amount|height|length|age|"
    r"profit|income|fee|allowance|rate)\b|"
    # a sum paid: up to two words qualify it ("the standard referral bonus"), never a preposition
    # ("the rules on bonuses" asks for rules), and it heads its phrase ("the bonus policy" is a policy)
    r"\bwhat (?:is|was|were|are) (?:the |its |their )?(?:(?!(?:on|of|about|for|in|at|with|to|and|or)\b)[\w-]+ ){0,2}"
    r"(?:bonus(?:es)?|fees|wages?|deposit|premium|subsidy|rent|fines?|per diem|reimbursement|compensation)"
    r"(?=\s*(?:[?？,.]|$)|\s+(?:for|of|in|at|on|per|paid|payable|under|when|if|to|after|before|from|with)\b)",
    re.I)
_PERSON = re.compile(
    r"谁|哪位|何人|什么人|(?:导演|主演|演员|编剧|作者|作曲|歌手|总理|总统|首相|主席|总书记|部长|市长|省长|行政长官|"
    r"首席执行官|CEO|董事长|总裁|总经理|创始人|得主|冠军得主|获得者|指令长|旗手|火炬手|教练|主教练|队长|"
    r"负责人|发言人|嫌疑人|凶手|设计师|主持人)\s*(?:是)?\s*[？?]?\s*$|"
    # English "who" asks at the start of a clause or after a preposition; after a noun it is a
    # relative pronoun ("the politician who was premier")
    r"(?:^|[,;:]\s*|\b(?:and|but|or)\s+)(?:who|whose)\b|\b(?:to|by|with|of|for|from) whom\b|^\s*whom\b|"
    r"\b(?:did|does|do|is|was|were|are) (?:\w+ )?whom?\b|\bwhich (?:person|people|actor|actress|director|author|player|president|"
    r"minister|writer|singer|manager|officer)\b", re.I)
_ORGANIZATION = re.compile(
    r"哪个部门|哪个机构|哪个单位|哪家|哪个公司|哪个组织|哪个团队|哪支|哪个队|什么机构|什么部门|"
    r"(?:冠军|主办方|承办方|主办单位|发行商|开发商|制造商|研发国家|主席国)\s*(?:是)?\s*[？?]?\s*$|"
    r"\bwhich (?:department|team|company|organi[sz]ation|agency|body|office|club|university|band|"
    r"committee|party|firm|institution|station|network|label|publisher|airline|magazine|newspaper|school|"
    r"college)\b|\bwhat (?:company|organi[sz]ation|agency|body|team|club|university|band|station|network|"
    r"label|publisher|airline|magazine|newspaper|school|college)\b", re.I)
_PLACE = re.compile(
    r"哪里|在哪|哪儿|什么地方|何处|何地|哪个国家|哪个城市|哪个省|哪座|哪个地区|"
    r"(?:地点|地址|举办地|所在地|发生地|起点|终点|目的地|产地|总部)\s*(?:是|在)?\s*[？?]?\s*$|"
    # English "where" asks at the start of a clause; after a noun it is relative ("the country where ...")
    r"(?:^|[,;:]\s*|\b(?:and|but|or|is|are|was|were)\s+)where\b|\bwhere\s*[?？]?\s*$|\blocation\b|\bvenue\b|"
    r"\bwhich (?:country|city|state|province|town|county|region|place|island|river|venue|"
    r"website|system|platform|portal|channel)\b|\bin what (?:city|country|state|county|region|province|town)\b|"
    r"\bwhat (?:city|country|state|place|county|region|province|town|continent)\b", re.I)
_NAME = re.compile(r"叫什么|名字|名称|全称|简称|称号|口号|哪一?部(?![门分署委])|哪本|哪首|哪款|\bwhat (?:is|was|are|were) (?:the |its |their )?(?:\w+ )?"
                   r"(?:name|title|nickname|motto|slogan)\b|\bcalled what\b|\bwhat (?:is|was) \w+ called\b", re.I)
#: a question for the penalty for an act: 会被怎么罚, 如何处罚, 受到什么处罚, "what is the penalty
#: for ...", "can I be fined" (a sum of money it asks for is a number: 罚多少钱); not "承担什么责任",
#: which a civil rule answers as often (追加为第三人, 视为已订立合同)
_SANCTION_ASKED = re.compile(
    r"(?:怎么|怎样|如何|什么|哪些|何种)(?:样的)?(?:处罚|处分|罚|惩罚)|被罚吗|会被罚|"
    r"\bwhat (?:is|are|was|would be) the (?:\w+ )?(?:penalt(?:y|ies)|sanctions?|consequences?)\b|"
    r"\bwhat (?:penalt(?:y|ies)|sanctions?)\b|\b(?:can|could|will|would) (?:i|we|they|you|he|she|the \w+) be fined\b", re.I)
_DEFINITION = re.compile(
    r"什么是|是什么|是指|指什么|含义|定义|意思|怎么|如何|怎样|流程|步骤|手续|程序|需要什么|需要哪些材料|"
    r"\bwhat (?:is|are|does|do) \b|\bhow (?:do|does|can|should|to|is|are)\b|\bprocedure\b|\bwhat happens\b|"
    r"\bwhy\b|为什么|为何", re.I)


def analyze(text: str) -> Asked:
    """The answer type, wanted quantity kinds and enumeration/yes-no flags of ``text``."""
    return _analyze(text.strip())


@lru_cache(maxsize=4096)
def _analyze(text: str) -> Asked:
    if asked_meaning(text) is not None:
        # "什么是保险金额": the meaning of a term, whatever the term's words ask elsewhere
        return Asked("definition", frozenset(), False, False, False, 1)
    yes_no = bool(_YES_NO.search(text)) and not _EXPLICIT_QUANTITY.search(text) \
        and not re.search(r"\b(?:who|what|which|when|where|how)\b|谁|哪|什么", text, re.I)
    quantity = bool(_ASKS_QUANTITY.search(text)) and not (
        _YES_NO.search(text) and not _EXPLICIT_QUANTITY.search(text))
    kinds = frozenset(k for k, p in _KINDS if p.search(text))
    enumeration = any(not _one_of(text, m) for m in _ENUMERATION.finditer(text))
    if yes_no:
        kind = "yes_no"
    elif _COMPARISON.search(text):
        kind = "comparison"
    elif _DATE.search(text) and not re.search(r"多长时间|多久|\bhow (?:long|soon|quickly|fast|often|much|many)\b", text, re.I):
        # "how quickly must my manager answer when I come back": that "when" opens a clause
        kind = "date"
    elif _NUMBER.search(text):
        kind = "number"
    elif _ORGANIZATION.search(text):
        kind = "organization"
    elif _PERSON.search(text):
        kind = "person"
    elif _PLACE.search(text):
        kind = "place"
    elif _NAME.search(text):
        kind = "name"
    elif _SANCTION_ASKED.search(text):
        kind = "sanction"
    elif enumeration:
        kind = "list"
    elif _DEFINITION.search(text):
        kind = "definition"
    else:
        kind = "other"
    if kind in ("date", "number"):
        quantity = True
    asks = sum(1 for clause in _CLAUSES.split(text) if _ASK_WORD.search(clause))
    return Asked(kind, kinds, quantity, enumeration, yes_no, max(1, asks))


#: a comma that separates clauses, not the digits of a number ("£40,000")
_SEP_COMMA = r"(?:，|(?<!\d),|,(?!\d))"
_CLAUSES = re.compile(r"[？?；;。！!、]|" + _SEP_COMMA + r"|\band\b|以及|并且")
#: sentence ends: Chinese and English marks, and an English full stop before a capital ("My
#: laptop got stolen. How soon ...") unless it ends a title or abbreviation (Mr. Smith, No. 5)
_SENTENCES = re.compile(r"[？?；;。！!\n]+|(?<![A-Z])(?<!\b(?:Mr|Ms|Dr|St|vs|No))(?<!\bMrs)(?<!\betc)\.\s+(?=[A-Z])")
_COMMA = re.compile(_SEP_COMMA + r"\s*(?:and\s+|以及|并且|还有)?")


#: what an English question asks the amount of: "how many days of paid sick leave", "how long
#: a sabbatical" (not "what is the most popular hotel": a superlative asks for one of many)
_MEASURED_EN = re.compile(
    r"\bhow (?:many|much)\s+(?:[a-z]+\s+)?of\s+(?:the\s+|my\s+|our\s+|your\s+|their\s+)?"
    r"(?P<of>(?:[a-z'-]+\s+){0,3}[a-z'-]+)|"
    r"\bhow (?:long|big|large|much) an?\s+(?P<a>(?:[a-z'-]+\s+){0,2}[a-z'-]+)", re.I)
#: where the noun phrase ends: a verb, a preposition or a clause word
_PHRASE_END = re.compile(r"\b(?:does|do|did|is|are|was|were|can|could|will|would|should|must|may|might|has|have|"
                         r"had|for|of|in|on|at|to|when|if|that|which|per|after|before|under|with|from|by|"
                         r"a|an|the|my|our|your|their)\b.*", re.I | re.S)


def measured_kind(question: str) -> tuple[str, ...]:
    """The head noun of what an English question asks the amount of and the word before it,
    lowercased: ("sick", "leave") for "How many days of paid sick leave …", ("sabbatical",) for
    "How long a sabbatical …". The word before the head says which kind of the thing is meant:
    documents about parental leave do not state a sick-leave allowance. Empty when the question
    asks no amount of a named thing."""
    m = _MEASURED_EN.search(question)
    if m is None:
        return ()
    phrase = _PHRASE_END.sub("", next(g for g in m.groups() if g)).split()
    return tuple(w.lower() for w in phrase[-2:])


def split_asks(question: str) -> list[str]:
    """The question's sub-questions: its sentences, and the comma clauses of one sentence that
    each ask something ("差旅住宿标准是多少，发票什么时候提交"). A clause that asks nothing
    ("For a two-year contract, how long ...") is the condition of the clause after it."""
    out: list[str] = []
    carried = ""  # a sentence that asks nothing ("My laptop got stolen.") sets the next one's scene
    for sentence in _SENTENCES.split(question):
        if not sentence.strip():
            continue
        pending, carried = carried, ""
        asks: list[str] = []
        for clause in _COMMA.split(sentence):
            pending = f"{pending}，{clause}" if pending and is_cjk(clause) else \
                (f"{pending}, {clause}" if pending else clause)
            if _ASK_WORD.search(clause):
                asks.append(pending)
                pending = ""
        if pending:
            if asks:
                asks[-1] += ("，" if is_cjk(pending) else ", ") + pending
            else:
                carried = pending
        out.extend(asks)
    if carried:
        if out:
            out[-1] += ("，" if is_cjk(carried) else ", ") + carried
        else:
            out.append(carried)
    return out


def scene(question: str) -> tuple[list[str], list[str]]:
    """(the clauses that ask nothing, the clauses that ask) of a question, when both kinds are
    there: the scene a person sets before asking ("家里水管爆了，物业多久要到？", "If I resign
    with holiday left, how is ...") and the question itself. Two empty lists for a question of
    one clause or of asking clauses only.

    >>> scene("家里水管爆了，物业多长时间内必须赶到？")
    (['家里水管爆了'], ['物业多长时间内必须赶到'])
    >>> scene("物业多长时间内必须赶到？")
    ([], [])
    """
    clauses = [c.strip() for sentence in _SENTENCES.split(question) for c in _COMMA.split(sentence) if c.strip()]
    quiet = [c for c in clauses if not _ASK_WORD.search(c)]
    if not quiet or len(quiet) == len(clauses):
        return [], []
    return quiet, [c for c in clauses if _ASK_WORD.search(c)]


def is_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3400-\u9fff]", text))
# an English auxiliary asks only where it opens its clause ("…, do I still get it"); inside one
# it states ("before the bonus is paid", "I can take leave")
_ASK_WORD = re.compile(r"多少|几|多长|多久|多[大高远重宽深厚快]|什么|啥|咋|哪|谁|怎么|如何|是否|吗|"
                       r"\b(?:how|what|which|who|whom|when|where|why)\b|^\s*(?:is|are|does|do|can|may)\b", re.I)


# -- can a sentence carry the answer? ---------------------------------------------------------------

_DATE_WORDS = re.compile(
    r"\d{4}\s*年|\d{1,2}\s*月\s*\d{1,2}\s*[日号]?|[一二三四五六七八九十〇零]+月|[一二三四五六七八九十〇零]+[日号]|"
    r"\d{1,2}[：:]\d{2}|[上下]午|凌晨|晚上|当天|今天|明天|昨天|星期|周[一二三四五六日末]|农历|春节|元旦|国庆|"
    r"\b(?:1[5-9]|20)\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d|"
    r"\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
    r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|yesterday)\b|"
    r"\b(?:spring|summer|autumn|fall|winter)\b|\b\d{1,2}(?::\d{2})?\s*(?:a\.?m\.?|p\.?m\.?)\b|"
    r"\b(?:day|days|week|weeks|month|months|year|years|century|decade)\b|天|周|年|月|日|季度|世纪|"
    # a time told by the event it is tied to, as rules tell it: "一致时成立", "之日起", "随时",
    # "期满后", "upon receipt", "before the trip", "as of the date such litigation is filed"
    r"时\s*(?:起|止|成立|生效|终止|届满|[。；;]|$)|之时|随时|的同时|届满|期满|(?:之|以)[前后]|\b(?:upon|prior to|until|"
    r"as soon as|at any time|immediately|(?:as of|as from|on|from|since)\s+(?:the\s+)?date)\b", re.I)
#: a time a rule ties to the pay cycle ("paid with the next payroll run", "随次月工资一并发放"):
#: as much an answer to "when" as a date is
PAY_CYCLE = re.compile(r"\b(?:with|in|on|through)\s+(?:the\s+)?(?:next|following|same)\s+(?:monthly\s+)?"
                       r"(?:payroll|pay\s*(?:run|day|date|cycle)|salary\s+payment)|\bon\s+(?:the\s+next\s+)?pay\s*day\b|"
                       r"[随与](?:次月|下月|当月|本月|下一个月)(?:的)?工资|工资发放日|发薪日", re.I)
#: a question for the value before a change ("修改前……", "what did it use to be"): of two versions
#: that disagree, the older one answers
ASKS_FORMER = re.compile(r"(?:修改|修订|修正|调整|变更)(?:之|以)?前|原来|原先|以前的?(?:规定|标准|版本|政策)|"
                         r"旧版|老版|之前的?(?:规定|标准|版本|政策)|"
                         r"\bused to\b|\buse to be\b|\bpreviously\b|\bformerly\b|\bbefore the (?:change|amendment|update|revision)\b|"
                         r"\b(?:the )?(?:old|previous|earlier|original|prior) (?:version|policy|rule|rate|limit|amount)\b",
                         re.I)
#: a role or office that answers "who" in rule text (由部门负责人审批, approved by the manager)
_ROLE = re.compile(r"由[^，。；]{1,20}(?:审批|批准|负责|办理|审核|决定|确定|担任|执导|主演)|负责人|担任|出任|当选|执导|主演|饰演|"
                   r"获得|夺得|率领|领衔|\b(?:approv\w* (?:by|of)|manager|director|president|officer|head|"
                   r"supervisor|chair\w*|minister|ceo|founder|author|written by|directed by|starring)\b|"
                   # a class of people answers "who may ..." in rule text
                   r"人员|职工|员工|劳动者|参保人|居民|学生|申请人|[\u3400-\u9fff]{1,4}者|"
                   r"\b(?:staff|employees?|workers?|members?|persons?|people|residents?|applicants?|students?|"
                   r"contractors?|visitors?|anyone|everyone|those|whoever|managers?|interns?)\b", re.I)
_ORG_WORDS = re.compile(
    r"[\u3400-\u9fff](?:公司|集团|银行|大学|学院|医院|协会|委员会|机关|机构|部门|部|局|厅|署|院|所|中心|政府|法院|检察院|队|俱乐部|"
    r"联盟|组织|基金会|党|处|科|办公室|平台|系统|窗口|网站|小程序)|APP|"
    r"\b(?:inc|ltd|llc|corp|company|group|bank|university|college|institute|committee|council|department|"
    r"agency|office|ministry|team|club|union|party|association|foundation|board|system|portal|website|"
    r"platform|app|hr|it)\b", re.I)
_PLACE_WORDS = re.compile(
    r"[\w\u3400-\u9fff](?:省|市|县|区|镇|乡|村|州|国|岛|山|河|湖|海|港|湾|路|街|道|馆|场|站|机场|中心|大厅|广场|"
    r"大楼|体育场|会议厅|窗口|柜台|网站|平台|系统)|在[\u3400-\u9fff]{2,}|于[\u3400-\u9fff]{2,}|"
    r"\b(?:in|at|from|near|to) [A-Z][a-z]+|\b(?:in|at|on|inside|outside|near) the \w+|"
    r"\b(?:city|country|state|province|county|street|road|office|building|online|website|portal|system|"
    r"platform|app|room|hall|desk|lot|floor|gate|entrance|area|site|campus|cent(?:re|er)|reception)\b", re.I)
_NAME_EN = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z'’\-]+(?:\s+[A-Z][a-z'’\-]+)*|(?<![A-Za-z])[A-Z]{2,}(?![A-Za-z])")
_LIST_MARK = re.compile(r"[、]|[,，;；].*[,，;；]|或者|以及|和|及|与|\b(?:and|or|including|such as|as well as)\b|"
                        r"[:：]\s*\S+", re.I)


#: how a sentence that says what to do reads (可以向……投诉, "may", "must", "requires approval"),
#: or what follows from an act ("results in a written warning", "is treated as gross misconduct")
_PROCEDURE = re.compile(r"可以向|投诉|举报|申请仲裁|提起诉讼|补办|办理|提交|申请|\b(?:may|can|must|will be|requires?|"
                        r"approval|submit\w*|appl(?:y|ies|ied)|results? in|leads? to|(?:is|are) treated as)\b", re.I)


def lists_items(sentence: str) -> bool:
    """Whether ``sentence`` names several items (、, "A, B and C", "Countries: India, Peru")."""
    return bool(_LIST_MARK.search(sentence))


def reads_as_procedure(sentence: str) -> bool:
    """Whether ``sentence`` says what to do or what may be done (an answer to 怎么办 / how do I),
    what follows from an act (to "what happens if"), or what a term means (an answer to 什么是 /
    what is meant by)."""
    return bool(_PROCEDURE.search(sentence) or _DEFINES.search(sentence))


#: the words a definition puts between its term and what the term means
_DEFINERS_EN, _DEFINERS_ZH = r"means|refers to|is defined as|shall mean|is understood as", r"是指|指的是|系指"
#: how a definition reads ("'Working day' means ...", "本办法所称X，是指……")
_DEFINES = re.compile(rf"\b(?:{_DEFINERS_EN})\b|{_DEFINERS_ZH}|所称[^，。]{{1,20}}[，,]\s*指", re.I)
#: the term a question asks the meaning of: "什么是X", "X是指什么", "何谓X", "What is meant by
#: X", "What does the policy mean by X", "define X" (not "what is the X of Y": that asks a value)
_ASKS_MEANING = (
    re.compile(r"(?:什么是|什么叫|何谓|何为)(?P<term>[\u3400-\u9fff“”\w]{2,20}?)[？?。]?$"),
    re.compile(r"^(?:请问)?(?P<term>[\u3400-\u9fff“”\w]{2,20}?)(?:是指什么|指的是什么|是什么意思|的(?:定义|含义)是什么|"
               r"的(?:定义|含义)|是什么)[？?。]?$"),
    re.compile(r"\bwhat (?:is|are) (?:meant by|the (?:meaning|definition) of) (?:an? |the )?[\"'‘“]?(?P<term>[\w' -]{2,40}?)[\"'’”]?\s*\??$",
               re.I),
    re.compile(r"\bwhat does (?:[\w' -]{1,40}? )?mean by (?:an? |the )?[\"'‘“]?(?P<term>[\w' -]{2,40}?)[\"'’”]?\s*\??$", re.I),
    re.compile(r"^(?:define|definition of) (?:an? |the )?[\"'‘“]?(?P<term>[\w' -]{2,40}?)[\"'’”]?\s*\??$", re.I),
)
#: a term's definer right after it ("保险金额是指", "'Working day' means", a glossary's "Working day:")
_DEFINED_BY = re.compile(rf"[\"'’”」]?\s*(?:(?:[，,:：]\s*|\s+|—\s*)?(?:{_DEFINERS_ZH}|指|{_DEFINERS_EN})|[:：—])", re.I)


@lru_cache(maxsize=4096)
def asked_meaning(question: str) -> str | None:
    """The term ``question`` asks the meaning of ("什么是保险金额" -> 保险金额), else None."""
    q = question.strip()
    for pattern in _ASKS_MEANING:
        if m := pattern.search(q):
            return m.group("term").strip(" “”\"'")
    return None


def defines(sentence: str, term: str) -> bool:
    """Whether ``sentence`` defines ``term`` itself: "保险金额是指……", "本法所称保险金额，是指……",
    "'Working day' means ……" do; "重复保险是指……保险金额总和……" defines another term."""
    low, key = sentence.lower(), term.lower()
    at = low.find(key)
    while at >= 0:
        before = low[:at]
        # the term starts the sentence, or follows what introduces a defined term (本法所称, a quote, a list mark)
        starts = not before.strip(" \"'‘“「(（-—*•") or re.search(r"所称\s*[“\"'「]?$|[“\"'‘「]$|[:：]\s*$", before)
        if starts and _DEFINED_BY.match(low, at + len(key)):
            return True
        at = low.find(key, at + 1)
    return False


def carries(answer_type: AnswerType, sentence: str, question: str = "") -> bool:
    """Whether ``sentence`` can state an answer of ``answer_type`` (see the module docstring),
    with what ``question`` itself says taken out first: the answer is not in the question, so
    "河南公布了2021年粮食总产量" has no number for "河南2021年的粮食总产量是多少".

    The tests are permissive on purpose: they rule out sentences that plainly cannot carry
    the answer (no date at all for a "when" question), never a sentence that might."""
    if sentence.rstrip().endswith(("？", "?")) or question and restates_question(sentence, question):
        return False  # a question states nothing
    if answer_type not in CONSTRAINING:
        return True
    sentence = unstamped(sentence)
    if answer_type == "sanction":  # the question's own 罚款 is what the sentence must state
        return _carries(answer_type, sentence)
    if answer_type == "number" and question:
        return _states_amount(sentence, question)
    # a name in the place of the role asked carries it, known to the dictionary or not (导演杨冬),
    # and so does a body named where the question's frame asks for one, although the question's
    # words make up its name ("市交通运输主管部门是本市停车管理的主管部门")
    return _carries(answer_type, _without(sentence, question) if question else sentence) \
        or bool(question) and answer_type in ("person", "organization") and fills_slot(sentence, question)


#: Chinese question words (谁都 / 谁也 is "anyone", no question); a sentence using the one its
#: question uses asks it again
#: ("……想知道使用了什么处理器", "以上就是……是什么处理器的全部内容") rather than answering it
_WH_ZH = re.compile(r"什么|哪[里儿个些家位种年天]|谁(?![都也])|多少(?!有些)|几(?![乎])|何时|为什么|怎么")


def subject_of(question: str) -> str:
    """The words a (Chinese) question part asks something of: what stands before its question
    word, up to the last 的, which the attribute asked follows ("第九届读书节的主会场设在哪里"
    -> "第九届读书节", "《心居》的主演有谁" -> "《心居》")."""
    m = _WH_ZH.search(question)
    head = question[:m.start()] if m else question
    return head.rsplit("的", 1)[0] if "的" in head else head


def restates_question(sentence: str, question: str) -> bool:
    """Whether ``sentence`` uses a question word of the (Chinese) ``question``: it restates
    the question (an embedded question, a page's "以上就是……是什么……" line), it does not
    answer it."""
    asked = _question_words(question)
    return bool(asked) and any(m.group(0) in asked for m in _WH_ZH.finditer(sentence))


@lru_cache(maxsize=4096)
def _question_words(question: str) -> frozenset[str]:
    # once per question: ``carries`` asks for every candidate sentence
    return frozenset(m.group(0) for m in _WH_ZH.finditer(question))


#: a question word that asks for an instance of the class noun after it (什么地方, 哪个国家)
_ASKS_INSTANCE = re.compile(r"什么|哪[个些家位种]")
_COPULA = frozenset({"是", "为", "了", "有"})
#: one-character words that do not modify the word after them, unlike 总 or 起 (总票房, 起售价):
#: particles and time units (2022年录取)
_NOT_MODIFIER = frozenset("的了在是为和与及也都将年月日号时")
_GAP = r"[^，。；！？,;!?\n]{1,%d}?"
#: the rest of a clause after a word, up to its punctuation
_GAP_WHOLE = r"[^，。；！？,;!?\n]{1,%d}"
_END = r"(?=[，。；！？,;!?]|$)"
#: what may stand between a word and the value it is said to have ("售价为98元", "增长达8.1%")
_LEAD = re.compile(r"^(?:是|为|达到?|约为?|仅为?|共计?|高达|超过|突破|升至|降至|增至|定为|[:：])?\s*")
#: the start of a value a frame holds, per answer type; a name is checked as a whole
_STARTS = {"number": re.compile(r"[\d零〇一二两三四五六七八九十百千万亿]"),
           "date": re.compile(r"[\d零〇一二三四五六七八九十]|今年|去年|明年|本月|上月|下月|当天|当日|次日")}

#: an aside in brackets, not part of a frame ("在莫斯科圆柱大厅（Hall of Columns）举行")
_ASIDE = re.compile(r"（[^（）]{1,40}）|\([^()]{1,40}\)")


@dataclass(frozen=True)
class _Frame:
    pattern: re.Pattern[str] | None
    answer_type: str
    #: only the words before the question word frame it: the value must follow them at once
    open_end: bool = False
    #: the role the question asks to fill, with the rest of its clause: a name right after the
    #: role fills it too (导演杨冬, 编剧为王某某)
    role: tuple[re.Pattern[str], re.Pattern[str]] | None = None
    #: "X是哪个部门" read backwards: the answer before the copula, the question's words after it
    #: ("市交通运输主管部门是本市停车管理的主管部门", "张某是该片的导演")
    inverse: re.Pattern[str] | None = None


def _role_patterns(role: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The role with a name right before it (、陆添导演的, 由张某执导), and with the rest of its
    clause after it (导演杨冬近日表示, 第一棒火炬手--罗致焕)."""
    return (re.compile(f"(?:^|(?<=[，、。；！？,;!?由和与及\\s]))([\\u4e00-\\u9fff]{{2,3}}?){re.escape(role)}"),
            re.compile(f"{re.escape(role)}({_GAP_WHOLE % 20})"))


def _role_filled(sentence: str, role: tuple[re.Pattern[str], re.Pattern[str]], question: str) -> bool:
    """Whether ``sentence`` puts a name the question does not give in the ``role``."""
    from agentic_rag.text.names import opens_with_chinese_name

    before, after = role
    return any(m.group(1) not in question and opens_with_chinese_name(m.group(1)) for m in before.finditer(sentence)) \
        or any(_leads_with_name(_LEAD.sub("", m.group(1).strip(), count=1).lstrip("-—–－:： "), question)
               for m in after.finditer(sentence))


def _leads_with_name(gap: str, question: str) -> bool:
    """Whether ``gap`` opens with a personal name the question does not give: a capitalised or
    dotted name, a Chinese name (杨冬近日表示), or a word the dictionary tags as one."""
    from agentic_rag.text.names import opens_with_chinese_name
    from agentic_rag.text.terms import segment, word_tag

    if _NAME_EN.match(gap) or _DOTTED_NAME.match(gap):
        return gap.split()[0] not in question
    first = next((t for t in segment(gap) if not t.isspace()), "")
    if first and first in question:
        return False
    return opens_with_chinese_name(gap) or len(first) >= 2 and bool(re.fullmatch(r"[\u3400-\u9fff]+", first)) \
        and (word_tag(first) or "").startswith("nr")


@lru_cache(maxsize=16384)
def fills_slot(sentence: str, question: str) -> bool:
    """Whether ``sentence`` says something in the place the (Chinese) ``question`` asks about:
    the words around its question word frame the answer ("……将在哪里举行" and "在伦敦威斯敏斯特
    教堂举行", "起售价是多少" and "起售价3499元", "谁执导" and "由许鞍华执导"), and what stands in
    the frame is new and an answer of the type asked (a place for 哪里, a value for 多少). The
    classic surface-pattern cue of question answering: a sentence that only mentions the
    question's words ("起售价比上一代上涨了200元") does not fill its frame. Only for the answer
    types a sentence can fail to carry (a place, a person, a value, a date, a name). Kept per
    (sentence, question): the candidates ask it once, ``carries`` again for a person."""
    # "什么是X" is filled by the sentence that defines X, not by one that only mentions X
    term = asked_meaning(question)
    if term is not None:
        return defines(sentence, term)
    if not is_cjk(question):
        agent = _agent_frame(question) or _role_frame(question)
        return agent is not None and agent.search(sentence) is not None
    frame = _frame(question)
    if frame is None:
        return False
    sentence = _ASIDE.sub("", sentence)
    if frame.role and _role_filled(sentence, frame.role, question):
        return True
    for m in frame.pattern.finditer(sentence) if frame.pattern is not None else ():
        gap = m.group("gap").strip()
        if not gap or gap in question:
            continue
        if frame.open_end:
            gap = _LEAD.sub("", gap, count=1)
            starts = _STARTS.get(frame.answer_type)
            if not gap or starts is not None and not starts.match(gap):
                continue
        if _carries(frame.answer_type, _without(gap, question)):
            return True
    for m in frame.inverse.finditer(sentence) if frame.inverse is not None else ():
        gap = m.group("gap").strip()
        if gap not in question and _without(gap, question).strip() and _carries(frame.answer_type, gap):
            return True
    return False


#: "Who must approve ...", "Who officially opened ...": the verb a "who" question asks the doer
#: of, after its modal or auxiliary and an adverb
_WHO_VERB = re.compile(r"^\s*who\s+(?:(?:has|have|had|needs?|is|are|was|were)\s+to\s+|"
                       r"(?:must|should|shall|can|could|will|would|may|might|does|do|did)\s+)?"
                       r"(?:[a-z]+ly\s+)?(?P<verb>[a-z]+)\b", re.I)
#: verbs that ask who someone is or has, not who does something
_NOT_DEED = frozenset("is are was were be been has have had get gets got".split())


@lru_cache(maxsize=4096)
def _agent_frame(question: str) -> re.Pattern[str] | None:
    """The frame of an English "who <verb>" question: the verb's passive with its agent ("must
    be approved by the requester's line manager", "was opened at 10am by the Mayor"), a
    few words apart at most; ``None`` for other questions."""
    from agentic_rag.text.terms import stem

    m = _WHO_VERB.match(question)
    if m is None or m.group("verb").lower() in _NOT_DEED:
        return None
    root = stem(m.group("verb").lower())
    if len(root) < 3:
        return None
    # the doer is named (a capital), owned ("the requester's") or a role ("their line manager")
    return re.compile(rf"(?i:\b{re.escape(root)}[a-z]*(?:\s+[\w'’,-]+){{0,5}}?\s+by\s+)"
                      rf"(?:(?:the|a|an|their|its|his|her|your|my|our)\s+)?"
                      rf"(?:[A-Z][\w'’-]*|[a-z][\w-]*['’]s\b|[a-z]+\s+(?:manager|team|officer|director|board|committee|"
                      rf"department|desk|head|lead|partner|owner|supervisor))")


#: "Who is the license steward of ...?", "Who was the first chair?": the role a "who is" question asks
#: the holder of, before what it is of
_WHO_IS = re.compile(r"^\s*who\s+(?:is|was|are|were)\s+(?:the|a|an)\s+(?P<role>[a-z][\w'’-]*(?:\s+[a-z][\w'’-]*){0,3}?)"
                     r"\s*(?:\b(?:of|for|in|at|on|to|with|by|who|that|under)\b|[?？]|$)", re.I)


@lru_cache(maxsize=4096)
def _role_frame(question: str) -> re.Pattern[str] | None:
    """The frame of an English "who is the <role>" question: a name said to be the role ("Mozilla
    Foundation is the license steward") or the role said to be a name ("the chair is Ana Ruiz");
    ``None`` for other questions."""
    m = _WHO_IS.match(question)
    if m is None:
        return None
    role = r"\s+".join(re.escape(w) for w in m.group("role").split())
    name = r"[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|of|de|van|von|and|&))*"
    return re.compile(rf"{name}\s+(?:is|was|are|were|has been|became|serves as|acts as)\s+(?:the\s+)?(?i:{role})\b|"
                      rf"(?i:\b{role})\s+(?:is|was|are|were)\s+{name}")


@lru_cache(maxsize=4096)
def _frame(question: str) -> _Frame | None:
    """The frame of a Chinese question's question word (once per question: ``fills_slot`` is
    asked for every candidate sentence), or ``None``."""
    if not is_cjk(question):
        return None
    from agentic_rag.text.terms import segment

    tokens = [t for t in segment(question.strip().rstrip("？?。！! ")) if not t.isspace()]
    at = next((i for i, t in enumerate(tokens) if _WH_ZH.match(t)), None)
    answer_type = analyze(question).answer_type
    if answer_type not in CONSTRAINING:
        return None  # "是什么类型的游戏": any sentence about the game fills "游戏……"
    # "《某剧》的导演", "谁是……第一棒火炬手": the role the question ends on, which a name fills
    # (该剧导演杨冬, 由王某主演、陆添导演的)
    end = tokens[-1] if tokens else ""
    ends_on_role = _Frame(None, answer_type, role=_role_patterns(end)) \
        if answer_type == "person" and len(end) >= 2 and _PERSON.search(end) else None
    if at is None:
        return ends_on_role
    before, after = tokens[:at], tokens[at + 1:]
    if _ASKS_INSTANCE.fullmatch(tokens[at]) and after:
        after = after[1:]  # 什么地方, 哪个国家: the class noun is what the answer is an instance of
    i = len(before) - 1
    copula = i >= 0 and before[i] in ("是", "为")
    if i >= 0 and before[i] in _COPULA:
        i -= 1
    left = before[i] if i >= 0 and before[i] not in _COPULA else None
    while left and i > 0 and len(before[i - 1]) == 1 and is_cjk(before[i - 1]) \
            and before[i - 1] not in _NOT_MODIFIER:
        i -= 1
        left = before[i] + left
    right = after[0] if after and not re.fullmatch(r"[的呢吗啊呀]|\W+", after[0]) else None
    if left and right:
        return _Frame(re.compile(f"{re.escape(left)}(?P<gap>{_GAP % 20}){re.escape(right)}"), answer_type)
    if left and len(left) >= 2:  # "起售价是多少": the value that follows the words
        # "编剧是谁": also the name right after the role, however the sentence goes on
        inverse = re.compile(f"(?:^|(?<=[，。；！？,;!?]))(?P<gap>{_GAP % 20})(?:是|为)[^，。；！？,;!?]{{0,20}}?"
                             f"{re.escape(left)}{_END}") if copula and not right else None
        return _Frame(re.compile(f"{re.escape(left)}(?P<gap>{_GAP % 12}){_END}"), answer_type, open_end=True,
                      role=_role_patterns(left) if answer_type == "person" and not right else None, inverse=inverse)
    if right and len(right) >= 2:  # "谁执导了……": the name that precedes the word
        return _Frame(re.compile(f"(?:^|[，。；！？,;!?由被])(?P<gap>{_GAP % 12}){re.escape(right)}"), answer_type)
    return ends_on_role


#: a question about a count or a sum ("交付量", "销量", "revenue") is not answered by a rate or
#: a period unless it asks for one ("同比增长多少", "how long")
_COUNT_HEAD = re.compile(r"(?:人数|数量|总数|次数|销量|产量|总产量|营收|收入|票房|产值|GDP|生产总值|金额|规模|吞吐量|交付量|"
                         r"净利润|利润|总额|人口|议席|席位)\s*(?:分别|各|都)?\s*(?:是|为|有)?\s*(?:多少)?\s*[？?]?\s*$|"
                         r"\b(?:revenue|sales|deliveries|population|attendance|turnover)\b", re.I)
_ASKS_RATE = re.compile(r"比例|比率|[^\s，,]率|百分|几成|增长|增速|增幅|下降|降幅|上涨|涨幅|占比|份额|"
                        r"percent|\brate\b|\bshare\b|growth|grow|increase|rise|fall|drop|decline|proportion", re.I)
_ASKS_PERIOD = re.compile(r"多久|多长|几年|几个月|多少年|多少个?月|多少天|几天|多少个?工作日|几个工作日|期限|时限|有效期|"
                          r"how long|how many (?:days|weeks|months|years|hours|minutes)|how soon|period|duration", re.I)
_ORDINAL = re.compile(r"第\s*[\d零〇一二两三四五六七八九十百千]+|\b\d+(?:st|nd|rd|th)\b|[上下]半年", re.I)
#: an ordinal and what it counts: 第一棒, 最后一棒, 第31任, "the 31st prime minister"
_COUNTED = re.compile(r"(第\s*[\d零〇一二两三四五六七八九十百千]+|最后一?|首)\s*([棒任届艘次期批轮位名座])|"
                      r"\b(\d+(?:st|nd|rd|th)|first|second|third|last)\s+([a-z]+)", re.I)


@lru_cache(maxsize=16384)
def ordinals(text: str) -> frozenset[tuple[str, str]]:
    """(ordinal, counted thing) pairs a text states ("第一棒" -> ("一", "棒"))."""
    out = set()
    for m in _COUNTED.finditer(text):
        num, what = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        num = re.sub(r"^第\s*|\s", "", num).lower()
        out.add(({"首": "一", "最后一": "最后"}.get(num, num), what.lower()))
    return frozenset(out)


#: a question for a share of something (报销比例是多少, 百分之几, "what percentage") ...
#: a sentence saying there is no such amount: the answer to "how long / how much" is "none"
NO_AMOUNT = re.compile(r"\bno (?:minimum|maximum|upper|lower|qualifying|waiting)\b(?P<what>(?: [a-z]+){0,3})|"
                       r"\bno (?:limit|cap)\b|\bnot (?:limited|capped)\b|不设(?:上限|下限|限制|门槛)|"
                       r"不受[^，。；]{0,8}限制|无(?:上限|下限|门槛)", re.I)
_NONE_OF_KIND = (("duration", re.compile(r"\b(?:length|period|service|time|notice|wait|days?|weeks?|months?|years?)\b")),
                 ("money", re.compile(r"\b(?:amount|fee|charge|cost|spend|payment|price|salary|pay)\b")))


def states_none(sentence: str, kinds: frozenset[str]) -> bool:
    """Whether ``sentence`` says there is no amount of the kind asked ("there is no minimum
    length of service" answers how long one must have worked, not how much a subsidy is)."""
    m = NO_AMOUNT.search(sentence)
    if not m:
        return False
    what = (m.group("what") or "").lower()
    said = {kind for kind, pattern in _NONE_OF_KIND if pattern.search(what)}
    return not said or not kinds or bool(said & kinds)


#: a question that asks how often: its answer is a period ("每日", "every week", "monthly")
_ASKS_FREQUENCY = re.compile(r"\bhow (?:often|frequently)\b|(?:多久|多长时间|隔多长时间)[^，,。？?]{0,12}一次|隔多久",
                             re.I)
_ASKS_SHARE = re.compile(r"比例|百分之几|百分比|几成|占比|\bpercentage\b|\bwhat percent\b|\bhow many percent\b", re.I)
#: ... unless it asks for other amounts too ("起付标准、支付比例和最高支付限额分别是多少")
_ASKS_OTHER_AMOUNT = re.compile(r"标准|限额|额度|金额|多少钱|多少元|天数|几天|多少天|期限|时限|多久|多长|人数|次数|"
                                r"\bhow (?:much|many|long)\b|\bamount\b|\blimit\b|\bcap\b|\bfee\b", re.I)
#: ... is answered by a share: a percentage, a per-mille, a fraction, 九成, a ratio
_SHARE_VALUE = re.compile(r"\d\s*[%％‰]|百分之|千分之|分之[一二三四五六七八九十\d]|[一二三四五六七八九]成(?![为功立员熟年长本])|"
                          r"\d+\s*[:：比]\s*\d+|个?百分点|\bper ?cent\b|\bpercentage points?\b", re.I)


#: a question that asks for a sum of money: what is paid, charged, fined or refunded
#: ("能拿多少钱", "每月要交多少……处理费", "how much does the company pay", "what is the fee");
#: "how much leave" and "how much notice" ask for other amounts
_ASKS_MONEY = re.compile(
    r"多少钱|几块钱|多少元|几元|多少费用|费用(?:是|为)?多少|罚(?:款|金)(?:是|为|金额)?多少|"
    r"(?:(?:[费钱款租价]|金(?!牌))[^，。；？?]*?|(?=[^，。；？?]*(?:[费钱款租价]|金(?!牌))))"
    r"(?<![提递移转招接吸验])[交缴付罚赔收](?:了|上|取|纳)?多少"
    r"(?![天日年月周次人个位项条岁号期份件])|"
    r"\bhow much (?:money\b|(?:do|does|did|will|would|can|could|should)\b(?! it take)|"
    r"(?:is|are|was) (?:the|a|an|my|our) (?:fee|fine|charge|price|cost|allowance|stipend|deposit|rent|salary|bonus|"
    r"payout|refund|reimbursement|compensation)s?\b)|"
    r"\bwhat (?:is|are|was|would be) the (?:(?:maximum|minimum|highest|lowest|largest|total|usual|standard|daily|weekly|"
    r"monthly|annual|yearly|hourly) )?(?:fee|fine|price|cost|charge)s?\b|\bhow much\b.{0,40}\bcost\b", re.I)
#: ... is answered by money, by a share or a multiple of a sum ("按工资的50%", "违法所得一倍以上
#: 五倍以下罚款"), by its absence ("免费", "free of charge") or by the whole sum (:func:`states_whole`)
_MONEY_LIKE = re.compile(r"\d\s*倍|[一二两三四五六七八九十]倍|免费|免收|不收取|不收费|不予收费|无需缴纳|不需缴纳|"
                         r"\bfree(?: of charge)?\b|\bat no (?:cost|charge)\b|\bno (?:fee|charge)s?\b|"
                         r"\bnot (?:reimbursed|refunded|charged|paid)\b", re.I)


#: a fine and the sum it is stated with: "处二百元以下罚款", "罚款五千元", "并处违法所得一倍以上三倍以下的罚金",
#: "a fine of up to £500", "fined EUR 200"
_FINE = re.compile(r"(?:(?:并?处以?|可以?处)[^，。；,;：:]{0,24}?罚(?:款|金)|罚(?:款|金)[^，。；,;：:]{0,16}|"
                   r"\b(?:a |an )?(?:fine|penalty) of\b[^,.;]{0,30}|\bfined\b[^,.;]{0,30})", re.I)


#: a whole sum stated in words: "提取账户全部余额", "全额报销", "refunded in full"
_WHOLE_AMOUNT = re.compile(r"全部(?:余额|金额|费用|款项|存款|本金|利息|工资|收入|损失)|全额|"
                           r"\bin full\b|\bthe (?:full|whole|entire) (?:amount|cost|balance|sum|fee|price)\b", re.I)


#: the kinds of value a whole sum does not give: "未及时全额支付" says nothing of how many days
_NOT_WHOLE_KINDS = frozenset({"duration", "date", "count", "percent"})


def states_whole(sentence: str, kinds: frozenset[str] = frozenset()) -> bool:
    """Whether ``sentence`` states a whole sum in words, which answers "how much" as a figure
    would ("可以提取本人账户全部余额" for 能提取多少, "travel home is refunded in full"); never
    for a question that asks a period, a date, a count or a share (``kinds``).

    >>> states_whole("可以提取本人住房公积金账户全部余额"), states_whole("需要提交全部材料")
    (True, False)
    >>> states_whole("医疗费用全额报销", frozenset({"duration"}))
    False
    """
    return not kinds & _NOT_WHOLE_KINDS and bool(_WHOLE_AMOUNT.search(sentence))


def asks_money(question: str) -> bool:
    """Whether ``question`` asks for a sum of money (what is paid, charged, fined or refunded).

    >>> asks_money("每户每月要交多少生活垃圾处理费？"), asks_money("How much does it cost?")
    (True, True)
    >>> asks_money("How much leave do I get?"), asks_money("这所中学今年招收了多少名新生？")
    (False, False)
    """
    return bool(_ASKS_MONEY.search(question))


def unasked_kind(question: str, kind: str) -> bool:
    """Whether a value of ``kind`` cannot answer ``question``: a question about a count or a
    sum (交付量, 营收, revenue) is not answered by a rate or a period it does not ask for, and
    one about a length of time (服务期是几年, "how long") not by a count of times or things
    ("自最后一次领取补贴之日起") unless it asks for one too."""
    if kind == "count":
        return bool(_ASKS_PERIOD.search(question)) and not _ASKS_COUNT.search(question) \
            and asked_count_unit(question) is None
    return bool(_COUNT_HEAD.search(question)) and (kind == "percent" and not _ASKS_RATE.search(question)
                                                  or kind == "duration" and not _ASKS_PERIOD.search(question))


#: a question that asks for a count as well as (or instead of) a length of time
_ASKS_COUNT = re.compile(r"几次|多少次|几个|多少个(?!月|工作日)|多少人|几人|多少名|几名|多少家|几家|"
                         r"how many (?!days|weeks|months|years|hours|minutes)|how often|number of", re.I)


_FRACTION = re.compile(r"分之|/")


@lru_cache(maxsize=16384)
def _states_amount(sentence: str, question: str) -> bool:
    """Whether ``sentence`` states an amount that can answer the "how much / how many"
    ``question``: a value the question does not state itself, not a year, a date or an ordinal
    (第二季度); for a count or a sum (交付量, revenue), not a rate or a period it does not ask for;
    for a share (报销比例), a share: "九十日内提出" states no 报销比例."""
    own = _without(sentence, question)  # what the sentence says beyond the question's words
    if _ASKS_SHARE.search(question) and not _ASKS_OTHER_AMOUNT.search(question):
        return bool(_SHARE_VALUE.search(own))
    if asks_money(question):  # "每月十日前报送" states no 生活垃圾处理费
        if (measures := rate_measures(question)) and not measures & rate_measures(sentence):
            return False  # a fine of 五千元以上 is no 物业费 per square metre
        if not ASKS_PENALTY.search(question):  # a fee is not answered by the fine for not paying it
            own = _FINE.sub(" ", own)
        elif not _FINE.search(sentence):
            return False  # "罚款多少" is answered by a fine, not by a fee waived or a share of places
        return any(q.kind == "money" for q in extract_quantities(own)) or bool(_SHARE_VALUE.search(own)) \
            or bool(_MONEY_LIKE.search(own)) or states_none(own, frozenset({"money"})) or states_whole(own)
    kinds = analyze(question).kinds
    if states_none(own, kinds):
        return True  # "there is no minimum length of service": none is the amount
    if asked_count_unit(question) is None and states_whole(own, kinds):
        return True  # "账户全部余额" is how much can be drawn
    if _ASKS_FREQUENCY.search(question) and rate_periods(own) - rate_periods(question):
        return True  # "多久至少收运一次" is answered by "每日至少收运一次", "how often" by "monthly"
    # a clause a sentence refers to ("as set out in Section 4.3", "违反本条例第十八条") is a label,
    # no amount
    rest = _ORDINAL.sub(" ", _DATE_EXPR.sub(" ", CROSS_REFERENCE.sub(" ", sentence)))
    stated = extract_quantities(rest)
    found = [q for q in stated if q.kind != "date" and q.raw and q.raw not in question]
    unit = asked_count_unit(question)
    if unit is not None:  # "有多少人" is not answered by "一辆大巴", nor by "19岁" or "10公里"
        # a fraction of them is ("经到会人员三分之二以上同意" for "需要多少人同意")
        found = [q for q in found if q.kind == "count" and counts_in(q.unit, unit) or q.kind == "number" and not q.unit
                 or q.kind == "percent" and _FRACTION.search(q.raw)]
    found = [q for q in found if not unasked_kind(question, q.kind)]
    if found:
        return True
    for q in stated:
        if q.raw:
            rest = rest.replace(q.raw, " ")
    if unit is not None:  # "来自31个省" counts provinces, not the students asked about
        rest = _OTHER_COUNT.sub(" ", rest)
    # what the quantity reader could not read: a bare year names an edition ("2022浙江省第二届
    # 龙舟公开赛"), it is no amount
    return _carries("number", _without(_BARE_YEAR.sub(" ", rest), question))


#: a 19xx/20xx not followed by a measure word: a year, whether or not 年 follows
_BARE_YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?![\d.,%％]|\s*[万亿千百个支名人位家所辆件台吨元次场只条项块])")


#: a number counting something named after it ("31个省", "3所学校"): a count, of that thing
_OTHER_COUNT = re.compile(r"\d[\d.,]*\s*(?:多|余)?\s*[\u3400-\u9fff]")


def names_new(sentence: str, question: str, answer_type: str = "") -> bool:
    """Whether ``sentence`` names someone or something the question does not (a proper name,
    not just a role or a place word): the likelier answer to who / where / which body. For a
    person (or the team a "who won" asks about), a title in 《》 or a phrase in quotation marks
    (scare quotes: “没有网感”) names no one."""
    return _has_name(_without(sentence, question), person=answer_type == "person")


#: a name given in quotation marks or title marks: how text writes what a thing is called
#: (吉祥物“冰墩墩”, 《流浪地球2》, the "Dragon" capsule)
QUOTED_NAME = re.compile(r"“([^”]{1,20})”|《([^》]{1,30})》|「([^」]{1,20})」|‘([^’]{1,20})’|\"([^\"]{1,30})\"")


def quotes_new_name(sentence: str, question: str) -> bool:
    """Whether ``sentence`` gives, in quotation or title marks, a name the question does not
    contain: the form in which Chinese text states what something is called (叫什么, 名称).
    (English quotes more often give the title of a work, which is no answer to "the name of
    the band".) A work (哪部电影, 哪本书, 哪首歌) is named in title marks: a phrase in quotation
    marks (“史上质量最佳”) is none."""
    work = bool(_ASKS_WORK.search(question))
    return any(_WORDY.search(name) and name.strip() not in question
               for m in QUOTED_NAME.finditer(sentence) for name in ((m.group(2),) if work else m.groups()) if name)


#: a question for a work, which is named in title marks (《》)
_ASKS_WORK = re.compile(r"哪一?部(?![门分署委])|哪本|哪首")


#: a name has letters or characters: a countdown in quotation marks (“5、4、3、2、1”) is none
_WORDY = re.compile(r"[^\W\d_]")


@lru_cache(maxsize=16384)
def _without(sentence: str, question: str) -> str:
    """``sentence`` with the question's own words and numbers blanked out."""
    out = sentence
    for m in QUOTED_NAME.finditer(question):  # a title the question gives is one word: 《山海谣》
        out = out.replace(m.group(0), " ")
    for word in _blanked_words(question):
        if re.fullmatch(r"[\u3400-\u9fff]+", word):
            out = out.replace(word, " ")
        else:
            out = re.sub(rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])", " ", out, flags=re.I)
    return out


@lru_cache(maxsize=4096)
def _blanked_words(question: str) -> tuple[str, ...]:
    """The question's words :func:`_without` blanks, longest first (asked once per question, used
    for every sentence): not the unit right after its question word ("how many days": the
    sentence's "26 working days" is the answer, not the question's)."""
    from agentic_rag.text.terms import segment

    words = sorted({w for w in segment(question) if len(w) >= 2 or w.isdigit()}, key=len, reverse=True)
    return tuple(w for w in words if not (_unit_word(w) and re.search(
        rf"(?:how many|多少个?|几个?)\s*{re.escape(w)}", question, re.I)))


@lru_cache(maxsize=4096)
def _unit_word(word: str) -> bool:
    """Whether ``word`` is the unit of an amount (days, 工作日, hours): after a number the quantity
    reader reads it as one."""
    if word.isdigit():
        return False
    probes = (f"2 {word}",) if word.isascii() else (f"2个{word}", f"2{word}")
    return any(q.raw.endswith(word) for p in probes for q in extract_quantities(p))


#: dates and times, which state no amount
_DATE_EXPR = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?"
                        r"(?:\s+\d{4})?|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|"
                        r"\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?|\d{1,2}\s*月\s*\d{1,2}\s*[日号]|"
                        r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\b(?:1[5-9]|20)\d{2}\b|\d{1,2}[：:]\d{2}", re.I)


def new_quantity_kinds(sentence: str, question: str) -> frozenset[str]:
    """Kinds of the quantities ``sentence`` states that ``question`` does not name itself
    (dates not counted as amounts: a "how much" answer needs more than the year asked about).
    A count of other things than the question counts ("一架客机" for "有多少人") is of kind
    ``other_count``: it states a value, but not the one asked."""
    return _new_kinds(unstamped(sentence), question)


#: the date stamp a search result or a feed puts before an excerpt ("Sep 8, 2022 ...",
#: "7 days ago ..."): when the page was found, not what the excerpt says
_STAMP = re.compile(rf"(?:\b{MONTH}\.?\s+\d{{1,2}},\s+\d{{4}}"
                    r"|\b\d{1,2}\s+(?:days?|hours?|minutes?|weeks?)\s+ago)\s*(?:\.{3}|…)")


def unstamped(sentence: str) -> str:
    """``sentence`` without the date stamps of search-result excerpts in it."""
    return _STAMP.sub(" ", sentence) if "..." in sentence or "…" in sentence else sentence


#: where a question asks for a count: the counted unit follows (多少人, 几次, how many people)
_HOW_MANY = re.compile(r"多少|几(?![乎个月天年])|\bhow many\b", re.I)


@lru_cache(maxsize=4096)
def asked_count_unit(question: str) -> str | None:
    """The unit a "how many" question counts in (人 for 多少人 / 几名 / "how many people", 次
    for 几次), read by the same quantity reader the evidence goes through, with a number in
    place of the question word; None when it names none (多少, 多少钱)."""
    probe = _HOW_MANY.sub(lambda m: "2 " if m.group(0).isascii() else "2", question)
    units = {q.unit for q in extract_quantities(probe) if q.kind == "count" and q.raw.startswith("2")}
    if not units and (_COUNTS_PEOPLE.search(question) or _counts_people_noun(question)):
        return "人"
    return units.pop() if len(units) == 1 else None


#: a question that asks how many people without a measure word: 报名人数, 运动员数量, 参赛者总数
#: (a noun for people ends in 员, 者, 生, 手, 客, 民, 工, 人 ...)
_PEOPLE_END = "员者生手客民工人师兵众"
_COUNTS_PEOPLE = re.compile(rf"人数|[\u4e00-\u9fff][{_PEOPLE_END}]的?(?:数量|数目|总数)")
#: a count of people in person-times (接待观众21万人次) counts the people asked about
_SAME_COUNT = {"人次": "人"}


def counts_in(unit: str, asked: str) -> bool:
    """Whether a count in ``unit`` answers a question counting in ``asked`` (21万人次 answers
    多少观众, which counts people)."""
    return _SAME_COUNT.get(unit, unit) == _SAME_COUNT.get(asked, asked)


def _counts_people_noun(question: str) -> bool:
    """Whether "多少 / 几" asks a number of people by a noun for them, with no measure word
    (来了多少观众, 有多少志愿者): the word right after it ends like one (众, 者, 员, 客 ...)."""
    from agentic_rag.text.terms import segment

    tokens = [t for t in segment(question) if not t.isspace()]
    return any(t in ("多少", "几") and i + 1 < len(tokens) and len(tokens[i + 1]) >= 2
               and re.fullmatch(r"[\u4e00-\u9fff]+", tokens[i + 1]) and tokens[i + 1][-1] in _PEOPLE_END
               for i, t in enumerate(tokens))


@lru_cache(maxsize=16384)
def _new_kinds(sentence: str, question: str) -> frozenset[str]:
    rest = _without(sentence, question) if question else sentence
    unit = asked_count_unit(question) if question else None
    kinds = {"other_count" if q.kind == "count" and unit is not None and not counts_in(q.unit, unit)
             else "age" if q.unit == "岁" else q.kind
             for q in extract_quantities(rest)}
    if CLOCK_TIME.search(rest):
        kinds.add("time")
    return frozenset(kinds)


#: a time zone's name is a time, not a place or a name ("北京时间8日", "当地时间19日")
_CLOCK_ZONE = re.compile(r"(?:北京|当地|美东|美西|东部|西部|中部|太平洋|格林尼治|格林威治|莫斯科|东京|伦敦|巴黎|"
                         r"欧洲中部|香港|台北|首尔|悉尼)时间")


#: a sentence stating a penalty: a fine, a warning, an order, a revoked licence, liability, dismissal
_SANCTION = re.compile(
    r"罚款|罚金|处罚|处分|警告|责令|拘留|吊销|没收|暂扣|扣留|追究|通报批评|记过|降级|撤职|开除|赔偿|"
    r"(?:并?处|可以?处)[^，。；]{0,12}[元倍]|承担[^，。；]{0,10}责任|"
    r"\b(?:fined?|fines|penalt(?:y|ies)|disciplinary|dismiss(?:al|ed)?|sanctions?|warnings?|suspen(?:ded|sion)|"
    r"revoked?|liable|prosecut(?:ed|ion)|forfeit(?:ed|s)?)\b", re.I)


#: English "one" that counts nothing: "one of the best sources", "one another", "no one"
_NOT_A_COUNT = re.compile(r"\b(?:no )?one(?= of\b| another\b)|\bno one\b", re.I)


@lru_cache(maxsize=16384)
def _carries(answer_type: str, sentence: str) -> bool:
    if answer_type == "sanction":
        return bool(_SANCTION.search(sentence))
    if answer_type == "date":
        return bool(_DATE_WORDS.search(sentence) or CLOCK_TIME.search(sentence) or PAY_CYCLE.search(sentence)) \
            or any(q.kind in ("date", "duration") for q in extract_quantities(sentence))
    if answer_type == "number":
        # a year or a date is no amount: "2021年" does not answer "how much in 2021"
        rest = _NOT_A_COUNT.sub(" ", _DATE_EXPR.sub(" ", sentence))
        return bool(re.search(r"\d", rest)) or any(q.kind not in ("date",) for q in extract_quantities(rest)) \
            or bool(re.search(r"[零〇一二两三四五六七八九十百千万亿]+余?[个次人名位项元倍成场届家辆件台吨斤米只块]", rest)) \
            or bool(re.search(r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                              r"forty|fifty|hundred|thousand|million|billion|dozen|half|once|twice)\b", rest, re.I))
    sentence = _CLOCK_ZONE.sub(" ", sentence)  # "北京时间8日" says when, not where
    names = _has_name(sentence)
    if answer_type == "name":
        return names
    if answer_type == "person":
        return names or bool(_ROLE.search(sentence))
    if answer_type == "organization":
        return names or bool(_ORG_WORDS.search(sentence)) or bool(_ROLE.search(sentence))
    return names or bool(_PLACE_WORDS.search(sentence))  # place


#: a transliterated name with a middle dot, or a name in title or quotation marks; the marks
#: must hold a word of their own, not only the blanks where the question's words were taken
#: out ("《 》" of "《人世间》的编剧是谁")
_DOTTED_NAME = re.compile(r"[\u3400-\u9fff][·・•][\u3400-\u9fff]")
_MARKED_NAME = re.compile(r"《\s*[^》\s][^》]*》|“(?=[^”]*[^”\s])[^”]{2,12}”|"
                          r"‘(?=[^’]*[^’\s])[^’]{2,12}’|「(?=[^」]*[^」\s])[^」]{2,12}」")


#: a reference to a part of a document ("Appendix A", "Section 6.1", "Schedule 2"): capitalised,
#: but it names no one
_PART_REF = re.compile(r"\b(?:Appendix|Annex|Schedule|Section|Clause|Article|Chapter|Paragraph|Part)\s+"
                       r"(?:[A-Z]{1,2}|[IVX]+|\d+(?:\.\d+)*[a-z]?)\b(?:\.\d+)*")


def _has_name(sentence: str, *, person: bool = False) -> bool:
    """A proper name: a capitalised word not opening the sentence, an all-caps acronym, a
    transliterated name with a middle dot (凯尔·内斯), a quoted or 《titled》 name, a Chinese
    personal, place or organisation name in jieba's dictionary, or a word of three or more
    characters it does not list (an unknown name: its characters are kept together).
    ``person``: not the names written in marks (titles of works, quoted phrases). A reference
    to a part of the document ("under Section 5", "listed in Appendix A") is no name."""
    sentence = _PART_REF.sub(" ", sentence)
    if _NAME_EN.search(sentence.strip()) or _DOTTED_NAME.search(sentence) \
            or not person and _MARKED_NAME.search(sentence):
        return True
    if person:
        sentence = _MARKED_NAME.sub(" ", sentence)
    from agentic_rag.text.terms import segment

    return any(len(tok) >= 2 and re.fullmatch(r"[\u3400-\u9fff]+", tok) and is_proper_name(tok)
               for tok in segment(sentence))


def is_proper_name(word: str) -> bool:
    """Whether one word is a proper name: capitalised (English); a personal, place or
    organisation name in jieba's dictionary, or a word of three or more characters it does not
    list (Chinese: an unknown name)."""
    if not is_cjk(word):
        return word[:1].isupper()
    from agentic_rag.text.terms import word_tag

    tag = word_tag(word)
    return tag is not None and tag.startswith(("nr", "ns", "nt", "nz")) or len(word) >= 3 and tag is None
