"""``python -m agentic_rag.eval SET ...``: the same command as ``arag eval SET ...``."""

from agentic_rag.cli import eval_

if __name__ == "__main__":
    eval_.main(prog_name="python -m agentic_rag.eval")
