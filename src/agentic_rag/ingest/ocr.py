"""OCR of a scanned page, offline: RapidOCR on ONNX Runtime with the PP-OCRv4 detection and
recognition models that the ``rapidocr-onnxruntime`` wheel itself ships (the ``ocr`` extra).
Nothing is downloaded at run time: the engine is pointed at the model files inside the
installed package, and a missing file is an error, never a fetch.

Only pages without a text layer reach this module (``pdf.py``); Chinese and English are read by
the same models.
"""

from __future__ import annotations

import threading
from pathlib import Path

from agentic_rag.errors import IngestError

_ENGINE = None
_LOCK = threading.Lock()
_MODELS = {"det_model_path": "ch_PP-OCRv4_det_infer.onnx", "rec_model_path": "ch_PP-OCRv4_rec_infer.onnx",
           "cls_model_path": "ch_ppocr_mobile_v2.0_cls_infer.onnx"}


def _engine(path: str):
    global _ENGINE
    with _LOCK:
        if _ENGINE is not None:
            return _ENGINE
        try:
            import rapidocr_onnxruntime
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:
            raise IngestError(path, "scanned page (no text layer) and OCR is not installed: "
                                    "pip install 'agentic-rag[ocr]', or set ingest.ocr = false") from exc
        models = Path(rapidocr_onnxruntime.__file__).parent / "models"
        files = {key: models / name for key, name in _MODELS.items()}
        missing = [str(f) for f in files.values() if not f.is_file()]
        if missing:
            raise IngestError(path, f"OCR model files missing from the installed package: {', '.join(missing)}")
        _ENGINE = RapidOCR(**{k: str(v) for k, v in files.items()}, use_cls=False)
        return _ENGINE


#: one recognized line: its box in PDF points (x0, top, x1, bottom), its text, its font size
OcrLine = tuple[float, float, float, float, str, float]


def recognize(image, scale: float, path: str) -> list[OcrLine]:
    """The text lines of a page image, boxes scaled back to PDF points (``scale`` = pixels per
    point). Font size is read from the line height; OCR knows no weight."""
    import numpy as np

    engine = _engine(path)
    try:
        result, _ = engine(np.asarray(image.convert("RGB")))
    except Exception as exc:  # onnxruntime/opencv errors on a damaged image
        raise IngestError(path, f"OCR failed on a scanned page: {exc}") from exc
    lines: list[OcrLine] = []
    for quad, text, _score in result or ():
        text = " ".join(str(text).split())
        if not text:
            continue
        xs = [pt[0] / scale for pt in quad]
        ys = [pt[1] / scale for pt in quad]
        x0, y0, x1, y1 = min(xs), min(ys), max(xs), max(ys)
        lines.append((x0, y0, x1, y1, text, round((y1 - y0) * 0.8 * 2) / 2))
    return lines
