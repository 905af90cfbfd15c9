"""The reader encoder's top layers as PyTorch modules, with the weights of the ONNX model it serves.

The encoder (e5-small-v2, BERT's shape: post-LayerNorm layers, 12 heads, GELU) is published as a
dynamically quantised ONNX graph: each weight matrix is int8 (in x out) with a scale and a zero
point per output column, read by a MatMulInteger node named after its place in the model
(`/encoder/layer.10/attention/self/query/MatMul_quant`). Biases and LayerNorms keep BERT's
parameter names. The reader fine-tunes copies of the top layers, starting from these weights.
"""
import json
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MASKED = -1e4
LAYER_NORM_EPSILON = 1e-12
HEADS = 12

MATRICES = {
    "query": "attention/self/query",
    "key": "attention/self/key",
    "value": "attention/self/value",
    "attention_out": "attention/output/dense",
    "intermediate": "intermediate/dense",
    "output": "output/dense",
}
BIASES = {
    "query": "attention.self.query.bias",
    "key": "attention.self.key.bias",
    "value": "attention.self.value.bias",
    "attention_out": "attention.output.dense.bias",
    "intermediate": "intermediate.dense.bias",
    "output": "output.dense.bias",
}
NORMS = {"attention_norm": "attention.output.LayerNorm", "output_norm": "output.LayerNorm"}


class EncoderLayer(nn.Module):
    """One BERT layer: self-attention and a GELU feed-forward, each followed by residual + LayerNorm."""

    def __init__(self, dimension, intermediate, dropout):
        super().__init__()
        self.query = nn.Linear(dimension, dimension)
        self.key = nn.Linear(dimension, dimension)
        self.value = nn.Linear(dimension, dimension)
        self.attention_out = nn.Linear(dimension, dimension)
        self.attention_norm = nn.LayerNorm(dimension, eps=LAYER_NORM_EPSILON)
        self.intermediate = nn.Linear(dimension, intermediate)
        self.output = nn.Linear(intermediate, dimension)
        self.output_norm = nn.LayerNorm(dimension, eps=LAYER_NORM_EPSILON)
        self.dropout = nn.Dropout(dropout)
        self.scale = 1 / math.sqrt(dimension // HEADS)

    def forward(self, x, mask):
        b, n, d = x.shape
        split = lambda t: t.view(b, n, HEADS, d // HEADS).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = (q @ k.transpose(-1, -2)) * self.scale
        scores = scores.masked_fill(~mask[:, None, None, :], MASKED)
        attended = (self.dropout(torch.softmax(scores, dim=-1)) @ v).transpose(1, 2).reshape(b, n, d)
        x = self.attention_norm(x + self.dropout(self.attention_out(attended)))
        return self.output_norm(x + self.dropout(self.output(F.gelu(self.intermediate(x)))))


def load_layers(onnx_path, first, last, dropout):
    """Layers first..last (inclusive) of the ONNX encoder, dequantised into EncoderLayer modules."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(onnx_path).graph
    values = {init.name: init for init in graph.initializer}
    array = lambda name: numpy_helper.to_array(values[name]).astype(np.float32)
    weight_of = {node.name: node.input[1] for node in graph.node if node.op_type in ("MatMulInteger", "MatMul")}
    layers = []
    for number in range(first, last + 1):
        def matrix(place):
            name = weight_of.get(f"/encoder/layer.{number}/{place}/MatMul_quant") or weight_of[f"/encoder/layer.{number}/{place}/MatMul"]
            if not name.endswith("_quantized"):
                return array(name)
            base = name[: -len("_quantized")]
            return (array(name) - array(base + "_zero_point")) * array(base + "_scale")

        query = matrix(MATRICES["query"])
        layer = EncoderLayer(query.shape[0], matrix(MATRICES["intermediate"]).shape[1], dropout)
        with torch.no_grad():
            for module, place in MATRICES.items():
                getattr(layer, module).weight.copy_(torch.from_numpy(matrix(place).T.copy()))
                getattr(layer, module).bias.copy_(torch.from_numpy(array(f"encoder.layer.{number}.{BIASES[module]}")))
            for module, name in NORMS.items():
                getattr(layer, module).weight.copy_(torch.from_numpy(array(f"encoder.layer.{number}.{name}.weight")))
                getattr(layer, module).bias.copy_(torch.from_numpy(array(f"encoder.layer.{number}.{name}.bias")))
        layers.append(layer)
    return nn.ModuleList(layers)


def check_layers(layers, check_path):
    """How close these layers' output is to the ONNX encoder's on one text (its word pieces): the
    lowest cosine of a piece's two states and the largest difference of one value. The served
    encoder quantises each matrix's input too, so they differ a little."""
    check = json.load(open(check_path, encoding="utf-8"))
    n = check["pieces"]
    x = torch.tensor(check["from"], dtype=torch.float32).view(1, n, -1)
    expected = torch.tensor(check["to"], dtype=torch.float32).view(1, n, -1)
    mask = torch.ones(1, n, dtype=torch.bool)
    was_training = layers.training
    layers.eval()
    with torch.no_grad():
        for layer in layers:
            x = layer(x, mask)
    layers.train(was_training)
    return float(F.cosine_similarity(x[0], expected[0], dim=-1).min()), float((x - expected).abs().max())
