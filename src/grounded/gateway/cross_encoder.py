"""An optional, user-supplied cross-encoder for local rerank (ONNX + tokenizer.json).

No cross-encoder ships in a package (MODELS.md), so this loads one the
operator placed on disk: a directory holding ``model.onnx`` (inputs
input_ids / attention_mask / optional token_type_ids; output logits of shape
(n, 1) or (n,)) and a Hugging Face ``tokenizer.json``. Nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from grounded.errors import ConfigError
from grounded.gateway.types import Ranking


class CrossEncoder:
    def __init__(self, directory: str, *, threads: int, max_length: int = 512) -> None:
        root = Path(directory)
        model, tokenizer = root / "model.onnx", root / "tokenizer.json"
        if not model.is_file() or not tokenizer.is_file():
            raise ConfigError(
                f"gateway.local.rerank_onnx_path: {root} must hold model.onnx and tokenizer.json"
            )
        import onnxruntime

        try:
            from tokenizers import Tokenizer
        except ImportError as exc:  # shipped with the audio extra (faster-whisper)
            raise ConfigError(
                "gateway.local.rerank_onnx_path needs the 'tokenizers' package: "
                "pip install tokenizers (or the grounded[audio] extra)"
            ) from exc

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        self._session: Any = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer: Any = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(max_length)
        self._tokenizer.enable_padding()
        self.model_id = f"local/onnx-cross-encoder:{root.name}"

    def score(self, query: str, passages: Sequence[str]) -> Ranking:
        if not passages:
            return Ranking(scores=())
        encoded = self._tokenizer.encode_batch([(query, p) for p in passages])
        feeds = {
            "input_ids": np.asarray([e.ids for e in encoded], dtype=np.int64),
            "attention_mask": np.asarray([e.attention_mask for e in encoded], dtype=np.int64),
            "token_type_ids": np.asarray([e.type_ids for e in encoded], dtype=np.int64),
        }
        logits = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        scores = np.asarray(logits, dtype=np.float64).reshape(len(passages), -1)[:, -1]
        return Ranking(scores=tuple(float(s) for s in scores))
