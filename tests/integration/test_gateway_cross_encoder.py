"""The optional user-supplied ONNX cross-encoder for local rerank.

No cross-encoder ships offline, so this builds a tiny stand-in on disk: an
ONNX graph whose logit is the sum of the pair's token ids (masked), and a
word-level tokenizer.json where "warranty" has a large id. It proves the
plumbing (files found, pairs tokenised, inputs fed by name, logits read,
receipt labelled), not ranking quality.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from grounded.auth.principal import Principal
from grounded.db import Database
from grounded.errors import ConfigError
from grounded.gateway import Gateway, GatewaySettings, GatewayStore
from grounded.gateway.registry import build_providers
from tests.conftest import make_tenant

pytestmark = pytest.mark.integration

onnx = pytest.importorskip("onnx", reason="onnx builds the stand-in model (test extra)")


def build_model(directory: Path) -> None:
    from onnx import TensorProto, helper
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {"[UNK]": 0, "[PAD]": 1, "the": 2, "warranty": 50, "office": 3, "is": 4, "closed": 5}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(directory / "tokenizer.json"))
    graph = helper.make_graph(
        [
            helper.make_node("Mul", ["input_ids", "attention_mask"], ["masked"]),
            helper.make_node("Cast", ["masked"], ["as_float"], to=TensorProto.FLOAT),
            helper.make_node("ReduceSum", ["as_float", "axes"], ["logits"], keepdims=1),
        ],
        "stand_in_cross_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["n", "t"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["n", "t"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 1])],
        initializer=[helper.make_tensor("axes", TensorProto.INT64, [1], [1])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(directory / "model.onnx"))


def test_local_rerank_uses_a_configured_onnx_cross_encoder(
    tmp_path: Path, database: Database, owner: psycopg.Connection[tuple[object, ...]]
) -> None:
    build_model(tmp_path)
    settings = GatewaySettings.model_validate(
        {"routes": {"rerank": ["local"]}, "local": {"rerank_onnx_path": str(tmp_path)}}
    )
    gateway = Gateway(settings, GatewayStore(database), build_providers(settings))
    tenant = Principal(kind="user", id=uuid.uuid4(), tenant_id=make_tenant(owner, "ce"))
    result = gateway.rerank(tenant, "the warranty", ["the office is closed", "the warranty"])
    assert result.value.order() == [1, 0]
    assert result.receipt.model == f"local/onnx-cross-encoder:{tmp_path.name}"
    assert not result.receipt.fallback


def test_a_bad_cross_encoder_path_is_a_config_error(tmp_path: Path) -> None:
    settings = GatewaySettings.model_validate({"local": {"rerank_onnx_path": str(tmp_path)}})
    with pytest.raises(ConfigError, match=r"model\.onnx and tokenizer\.json"):
        build_providers(settings)
