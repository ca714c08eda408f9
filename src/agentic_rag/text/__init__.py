"""Text analysis shared by ingest, the store and the agents: one home for each idea.

- :mod:`~agentic_rag.text.language` — the one language detector
- :mod:`~agentic_rag.text.tokenize` — index tokenization (jieba dictionary, Snowball), the term dictionary
- :mod:`~agentic_rag.text.terms` — content terms of a question and how a text covers them
- :mod:`~agentic_rag.text.sentences` — sentence splitting, headings, labels
- :mod:`~agentic_rag.text.stopwords` — every stopword and question-word list, each with its role
- :mod:`~agentic_rag.text.numerals` — Chinese numerals and full-width digits
- :mod:`~agentic_rag.text.dates` — dates in Chinese and English
- :mod:`~agentic_rag.text.quantities` — numbers with units, money, percentages, durations, dates
- :mod:`~agentic_rag.text.similarity` — character-gram overlap
- :mod:`~agentic_rag.text.names` — proper names in English text
- :mod:`~agentic_rag.text.clauses` — clause labels, cross-references, penalties' items, amending instruments
"""
