"""``arag mcp`` driven by the official SDK's stdio client: the three tools over a real index."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client


def _payload(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _session(index) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    env.update({"ARAG_EMBEDDER__PROVIDER": "none", "ARAG_LLM__PROVIDER": "none"})
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentic_rag.cli", "mcp", "--index", str(index)],
                                   env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            assert tools == {"search", "ask", "get_document"}
            found = _payload(await session.call_tool("search", {"query": "高温津贴 标准", "k": 3}))
            assert 1 <= len(found["results"]) <= 3
            top = found["results"][0]
            assert top["chunk_id"].startswith(top["doc_id"]) and top["text"]
            answer = _payload(await session.call_tool("ask", {"question": "夏天的高温补贴一个月多少钱？"}))
            assert answer["status"] == "answered" and answer["citations"][0]["index"] == 1
            doc = _payload(await session.call_tool("get_document", {"doc_id": top["doc_id"]}))
            assert doc["doc_id"] == top["doc_id"] and doc["clauses"] and doc["text"]
            missing = await session.call_tool("get_document", {"doc_id": "no-such-doc"})
            assert missing.is_error and "no-such-doc" in missing.content[0].text


def test_mcp_tools_over_stdio(index_copy):
    asyncio.run(asyncio.wait_for(_session(index_copy("mcp")), timeout=120))
