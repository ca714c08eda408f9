"""Every stopword and question-word list of the engine, in one place, each named for its role.

The lists differ on purpose: what the index may drop is not what makes a question out of scope.
"""

from __future__ import annotations

import json
from importlib import resources

import Stemmer

_STEMMER = Stemmer.Stemmer("english")

#: dropped by the index tokenizer's search mode (:mod:`agentic_rag.text.tokenize`)
INDEX_ZH = frozenset(
    "的 了 和 与 及 或 是 在 也 等 为 以 之 其 而 被 把 这 那 就 都 着 个 并 从 向 于 则 即 但 若 "
    "所 将 已 吗 呢 吧 啊 呀 么 哪 谁 什么 怎么 怎样 如何 哪些 哪个 是否 是不是 有没有 请问 一下 "
    "我 你 他 她 它 我们 你们 他们 她们 它们 该 此 这个 那个 这些 那些 以及 或者 并且 而且 因为 所以 "
    "如果 虽然 但是 可以 能否 需要 要 会 有 没有".split()
)
INDEX_EN = frozenset(
    "a an the of to in on at for by with from as into onto about than then and or nor but if "
    "is are was were be been being am do does did done have has had having it its it's this "
    "that these those there here which who whom whose what when where why how i me my we our "
    "you your he him his she her they them their not no so such can could shall should will "
    "would may might must also any all each other some".split()
)

#: words that carry no subject matter: question words, particles, pronouns, modal verbs
QUESTION_ZH = frozenset(
    "的 了 是 在 和 与 及 以及 或 或者 等 吗 呢 吧 啊 呀 么 嘛 什么 多少 几 几个 几天 几年 哪些 哪个 哪里 哪 "
    "怎么 怎么样 怎样 如何 为什么 为何 是否 能否 可否 能不能 可不可以 是不是 有没有 能 可以 会 要 想 "
    "需要 需 应 应当 应该 必须 得 有 没有 我 我们 你 你们 他 她 它 他们 咱 自己 本人 这 那 这个 那个 "
    "这些 那些 一个 请问 请 问 一下 告诉 知道 呢 都 也 还 就 才 又 再 最 很 多 少 多长 多久 多大 "
    "多高 多远 谁 啥 咋 嗯 哦 按照 根据 依据 按 对 对于 给 被 把 让 从 到 向 由 为 其 之 所 "
    "里 中 上 下 时 后 前 内 吗？ 呗 哈 啦 百分之几 几成 几个月 几天 多少天 多少年 哪几个 哪几 哪类 哪种 "
    "什么样 多长时间 多少次 多少个 怎么办 还是 这么 那么 一般 算不算 是不是 能不能 会不会 的话 "
    "时候 什么时候 哪儿 哪里 分别 各自 各 以及 哪一年 哪年 哪一天 哪天 几月 几号 几点 哪部 哪一部 哪本 哪首 哪款 "
    "以后 之后 以前 之前 一共 总共 共计 这份 这项 这条 那份 那项 那条 这场 那场 这次 那次 本次 "
    "每个 每一个 各个".split()
)
#: interjections and courtesies: how a person talks, not what about (never a name either)
INTERJECTIONS_EN = frozenset("oops hi hello hey thanks thank sorry ok okay um uh hmm ah oh wow yeah".split())
QUESTION_EN = frozenset(
    "a an the of to in on at by for from with about as am is are was were be been being do does did "
    "what which who whom whose when where why how much many long often is it its this that these "
    "those i me my we our you your he she they them their can could may might must shall should "
    "will would there here and or not no any some if then than so please tell know get got under "
    "per into out up down over after before within just also really get gets got getting go goes "
    "going went have has had having happen happens happened happening fast quickly soon "
    "able allowed like want wants need needs one ones thing things way ways still yet ever "
    "two three four five six seven eight nine ten once kind kinds type types sort sorts "
    "count counts qualify qualifies considered regarded deemed myself yourself ourselves yourselves "
    "themselves himself herself itself".split()
) | INTERJECTIONS_EN
#: generic words of rule texts and the words that name an answer's kind (deadline, 日期): they help
#: ranking but a question is not out of scope for lack of them
SOFT_ZH = frozenset(
    "规定 标准 要求 政策 办法 内容 情况 问题 方面 相关 有关 关于 具体 时间 条件 流程 方式 途径 渠道 手续 "
    "步骤 办理 享受 执行 适用 范围 现在 目前 最新 现行 文件 通知 条款 说 讲 写 现行 一般 最高 最低 "
    "期限 时限 比例 金额 额度 费用 多少钱 日期 地点 地方 截止".split()
)
#: general-purpose stopwords (data/stopwords_iso.json, from stopwords-iso): what any text may say
#: whatever it is about ("more", "last", "new", "mean", "这次", "人家"). A question word in them
#: ranks evidence like a generic rule word, but a question is not out of scope for lacking it.
_ISO = json.loads(resources.files("agentic_rag").joinpath("data/stopwords_iso.json").read_text("utf-8"))
GENERIC_EN = frozenset(_STEMMER.stemWord(w.lower()) for w in _ISO["en"]) | frozenset(w.lower() for w in _ISO["en"])
GENERIC_ZH = frozenset(_ISO["zh"])
SOFT_EN = frozenset(
    _STEMMER.stemWord(w) for w in
    "rule rules policy policies requirement requirements standard process procedure time "
    "current currently latest say says apply applies eligible need needed required maximum "
    "minimum limit amount rate period deadline percentage date location venue "
    # the people a policy covers, named generally: a policy may say "employees", "you" or "the
    # traveller" for them
    "staff employee employees personnel worker workers colleague colleagues".split()
)



#: question scaffolding that says nothing about the documents: kept out of the sufficiency
#: rules' coverage (:mod:`agentic_rag.agents.sufficiency`)
SCAFFOLD = frozenset(
    "多少 几 几个 多久 哪里 哪儿 哪 规定 怎么办 怎么样 如何 是什么 有哪些 吗 呢 请问 可以 能 "
    "what which how much many long when where who whom does do rule rules".split())

#: never the first word of an English proper name at a sentence start (:mod:`agentic_rag.text.names`)
NAME_DROP_EN = frozenset({"who", "what", "when", "where", "which", "why", "how", "whose", "whom", "is", "are",
                   "was", "were", "do", "does", "did", "can", "could", "will", "would", "should",
                   "has", "have", "had", "in", "on", "at", "the", "a", "an", "if", "for", "of", "and",
                   "or", "both", "between", "from", "by", "as", "to", "with", "according", "under",
                   "after", "before", "during", "since", "about", "per", "name", "list", "tell",
                   "give", "find", "it", "this", "that", "there", "these", "those", "please",
                   # sentence starters of passages ("She was born ...", "Also in 1990 ...")
                   "he", "she", "his", "her", "hers", "its", "they", "their", "we", "our", "you",
                   "also", "other", "however", "although", "while", "despite", "later", "then",
                   "here", "following", "today", "currently", "originally",
                   "some", "many", "most", "each", "every", "all", "one", "two", "three",
                   "within", "without", "i", "my", "me",
                   # conjunctions opening a condition ("Once an employee has claimed ...")
                   "once", "unless", "until", "because", "whenever", "whether", "though", "so"}) | INTERJECTIONS_EN

#: filler of Chinese questions, removed from the Router's normalized query
FILLERS_ZH = ("请问", "怎么样", "怎么", "怎样", "如何", "是不是", "能不能", "可不可以", "吗", "呢", "啊", "呀", "吧")

#: not content words of an English multi-hop question (what a bridge must cover)
HOP_EN = frozenset("""a an the of to in on at for by with from as into about than and or but if is are
was were be been being do does did have has had it its this that these those there which who whom
whose what when where why how not no so such can could shall should will would may might must also
any all each other some both same first last most more less many much one two three name
named called known located based""".split())

#: generic words never named as what the documents are missing (the Reasoner's gap phrase)
GAP_ZH = frozenset("最高 最低 最多 最少 一般 目前 现在 最新 现行 具体 规定 标准 要求".split())

#: words of change and degree, not of the matter two conflicting statements are about
NOT_MATTER = frozenset(
    "调整 提高 降低 提升 下调 上调 增加 减少 改为 变更 修改 达到 不超过 不低于 超过 低于 高于 最高 最低 "
    "以上 以下 以内 之内 原 现 新 旧 统一 执行 规定 应 应当 需 需要 可 可以 按 按照 给予 予以 "
    "确定 明确 起 止 自 至 为 是 由 从 不得 须 必须 一律 相应 分别 其中 年度 每年 每次 每月 "
    "per cent percent up to at least at most no more than less increase increased reduce reduced "
    "raise raised change changed set shall must may be will".split()
)
