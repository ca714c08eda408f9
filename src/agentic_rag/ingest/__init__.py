"""Ingestion: files and folders into documents, clause chunks, metadata and graph edges.

``ingest_paths`` is the entry point; ``parse_document`` shows how one file will be chunked
without touching a store.
"""

from agentic_rag.ingest.chunking import chunk_document
from agentic_rag.ingest.pipeline import (
    FileResult,
    IngestReport,
    doc_id_for_path,
    doc_id_for_record,
    ingest_paths,
    parse_document,
)

__all__ = ["FileResult", "IngestReport", "chunk_document", "doc_id_for_path", "doc_id_for_record",
           "ingest_paths", "parse_document"]
