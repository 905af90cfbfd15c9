"""Trains ChronoQL's reader head and exports it to ONNX (models/reader.onnx + models/reader.json).

The head reads what `chronoql train-reader` prepared with the product's own code: the encoder's
word states of each gold paragraph and question, the word features, and the gold answer spans.
With --joint-layers K the states are those of a middle layer, and the encoder's top K layers
(copied from its ONNX file and checked against it) are fine-tuned with the head over the
question's and the passage's words together; they are exported as part of the head.
It is trained on the `train` split, its epoch is chosen on `tune`, and it is scored on every
split given (the figures go into reader.json). With --ablation it also trains the variants that
leave one part out, and prints what each part adds.

Needs PyTorch (Debian: python3-torch, with libopenblas0-pthread for speed), NumPy and the onnx
package (Debian: python3-onnx).
"""
import argparse
import json
import math
import os
import random
import re
import sys
import time
import unicodedata

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from encoder_layers import check_layers, load_layers

MASKED = -1e4


# --- data -----------------------------------------------------------------------------------

class Split:
    """One prepared split: per item, views into the float32 files."""

    def __init__(self, directory, name):
        meta = json.load(open(f"{directory}/{name}.json", encoding="utf-8"))
        self.meta = meta
        self.dimension = meta["dimension"]
        self.word_features = len(meta["wordFeatures"])
        self.question_features = len(meta["questionFeatures"])
        self.passages = meta["passages"]
        d = self.dimension
        passage_states = np.fromfile(f"{directory}/{name}.passages.f32", dtype=np.float32)
        question_states = np.fromfile(f"{directory}/{name}.questions.f32", dtype=np.float32)
        features = np.fromfile(f"{directory}/{name}.features.f32", dtype=np.float32)
        question_features = np.fromfile(f"{directory}/{name}.qfeatures.f32", dtype=np.float32).reshape(-1, self.question_features)
        starts = np.cumsum([0] + [len(p["words"]) for p in self.passages])
        self.passage_states = [passage_states[starts[i] * d:starts[i + 1] * d].reshape(-1, d) for i in range(len(self.passages))]
        self.items = []
        q_at = 0
        f_at = 0
        for n, item in enumerate(meta["items"]):
            words = len(self.passages[item["passage"]]["words"])
            self.items.append({
                "passage": item["passage"],
                "question": question_states[q_at * d:(q_at + item["questionWords"]) * d].reshape(-1, d),
                "features": features[f_at * self.word_features:(f_at + words) * self.word_features].reshape(-1, self.word_features),
                "question_features": question_features[n],
                "gold": item["gold"],
                "answers": item["answers"],
            })
            q_at += item["questionWords"]
            f_at += words
        assert q_at * d == question_states.size and f_at * self.word_features == features.size, f"{name}: sizes do not match the index"


def batches(split, items, size, shuffle, rng):
    order = sorted(range(len(items)), key=lambda i: len(split.passages[items[i]["passage"]]["words"]))
    groups = [order[i:i + size] for i in range(0, len(order), size)]
    if shuffle:
        rng.shuffle(groups)
    for group in groups:
        yield [items[i] for i in group]


def tensors(split, batch):
    b = len(batch)
    lp = max(len(split.passages[item["passage"]]["words"]) for item in batch)
    lq = max(item["question"].shape[0] for item in batch)
    d = split.dimension
    passage = np.zeros((b, lp, d), dtype=np.float32)
    features = np.zeros((b, lp, split.word_features), dtype=np.float32)
    question = np.zeros((b, lq, d), dtype=np.float32)
    for r, item in enumerate(batch):
        states = split.passage_states[item["passage"]]
        passage[r, :states.shape[0]] = states
        features[r, :states.shape[0]] = item["features"]
        question[r, :item["question"].shape[0]] = item["question"]
    return (
        torch.from_numpy(passage),
        torch.from_numpy(features),
        torch.tensor([len(split.passages[item["passage"]]["words"]) for item in batch], dtype=torch.int64),
        torch.from_numpy(question),
        torch.tensor([item["question"].shape[0] for item in batch], dtype=torch.int64),
        torch.from_numpy(np.stack([item["question_features"] for item in batch])),
    )


# --- model ----------------------------------------------------------------------------------

def run_rnn(rnn, x, lengths, packed):
    """Packed, each sequence is read without its padding (exact, for the exported model); unpacked
    (2.5x faster to train), the few padding words of a length-sorted batch reach the backward pass."""
    # Zero start states sized from the batch, so the exported model takes any batch size.
    start = x.new_zeros(rnn.num_layers * 2, x.shape[0], rnn.hidden_size)
    if not packed:
        return rnn(x, (start, start))[0]
    out, _ = rnn(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False), (start, start))
    out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


class ReaderHead(nn.Module):
    """Question-aligned word states + word features -> BiLSTM -> start/end scores against the question summary."""

    def __init__(self, dimension, word_features, question_features, hidden=128, attention=128, layers=1, dropout=0.3,
                 align=True, features=True, passage_rnn=True, width=256):
        super().__init__()
        self.use_align, self.use_features, self.use_rnn = align, features, passage_rnn
        self.packed = False
        self.align = nn.Linear(dimension, attention)
        self.narrow = nn.Linear(dimension + (dimension if align else 0) + (word_features if features else 0), width)
        if passage_rnn:
            self.passage_rnn = nn.LSTM(width, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                                       dropout=dropout if layers > 1 else 0.0)
        else:
            self.passage_proj = nn.Sequential(nn.ReLU(), nn.Linear(width, 2 * hidden), nn.ReLU(), nn.Linear(2 * hidden, 2 * hidden))
        self.question_rnn = nn.LSTM(dimension, hidden, bidirectional=True, batch_first=True)
        self.question_pool = nn.Linear(2 * hidden, 1)
        self.question_kind = nn.Linear(question_features, 2 * hidden)
        self.start = nn.Linear(2 * hidden, 2 * hidden)
        self.end = nn.Linear(2 * hidden, 2 * hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(self, passage, passage_features, passage_lengths, question, question_lengths, question_features):
        passage_mask = torch.arange(passage.shape[1])[None, :] < passage_lengths[:, None]
        question_mask = torch.arange(question.shape[1])[None, :] < question_lengths[:, None]
        parts = [passage]
        if self.use_align:
            scores = torch.relu(self.align(passage)) @ torch.relu(self.align(question)).transpose(1, 2)
            scores = scores.masked_fill(~question_mask[:, None, :], MASKED)
            parts.append(torch.softmax(scores, dim=-1) @ question)
        if self.use_features:
            parts.append(passage_features)
        x = self.narrow(self.dropout(torch.cat(parts, dim=-1)))
        words = run_rnn(self.passage_rnn, x, passage_lengths, self.packed) if self.use_rnn else self.passage_proj(x)
        asked = run_rnn(self.question_rnn, self.dropout(question), question_lengths, self.packed)
        weights = torch.softmax(self.question_pool(asked).squeeze(-1).masked_fill(~question_mask, MASKED), dim=-1)
        summary = (weights[:, :, None] * asked).sum(dim=1) + self.question_kind(question_features)
        words = self.dropout(words)
        start = (words * self.start(summary)[:, None, :]).sum(-1).masked_fill(~passage_mask, MASKED)
        end = (words * self.end(summary)[:, None, :]).sum(-1).masked_fill(~passage_mask, MASKED)
        return start, end


class JointReader(nn.Module):
    """The encoder's top layers, fine-tuned over the question's and the passage's words together
    (each read alone by the lower layers, so a passage's states stay independent of the question
    and are cached), then the head. Its inputs and outputs are the head's, so serving runs either."""

    def __init__(self, layers, head):
        super().__init__()
        self.layers = layers
        self.segment = nn.Parameter(torch.zeros(2, head.align.in_features))
        self.head = head

    @property
    def packed(self):
        return self.head.packed

    @packed.setter
    def packed(self, value):
        self.head.packed = value

    def forward(self, passage, passage_features, passage_lengths, question, question_lengths, question_features):
        lq = question.shape[1]
        mask = torch.cat([torch.arange(lq)[None, :] < question_lengths[:, None],
                          torch.arange(passage.shape[1])[None, :] < passage_lengths[:, None]], dim=1)
        x = torch.cat([question + self.segment[0], passage + self.segment[1]], dim=1)
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(x[:, lq:], passage_features, passage_lengths, x[:, :lq], question_lengths, question_features)


def span_loss(start, end, batch):
    """-log p of the gold starts plus -log p of the gold ends (each summed over the answer's occurrences)."""
    start_log = F.log_softmax(start, dim=-1)
    end_log = F.log_softmax(end, dim=-1)
    losses = []
    for r, item in enumerate(batch):
        starts = torch.tensor(sorted({s for s, _ in item["gold"]}))
        ends = torch.tensor(sorted({e for _, e in item["gold"]}))
        losses.append(-torch.logsumexp(start_log[r, starts], 0) - torch.logsumexp(end_log[r, ends], 0))
    return torch.stack(losses).mean()


# --- scoring (SQuAD's EM / F1, as src/qa/answerMetrics.ts computes them) -------------------

def normalize(text):
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(" " if unicodedata.category(c)[0] in "PS" else c for c in text)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def f1(prediction, answers):
    def one(gold):
        p, g = normalize(prediction).split(), normalize(gold).split()
        if not p or not g:
            return float(p == g)
        common = 0
        counts = {}
        for t in g:
            counts[t] = counts.get(t, 0) + 1
        for t in p:
            if counts.get(t, 0) > 0:
                common += 1
                counts[t] -= 1
        if common == 0:
            return 0.0
        precision, recall = common / len(p), common / len(g)
        return 2 * precision * recall / (precision + recall)
    return max(one(a) for a in answers)


def best_span(passage, start, end, max_words):
    """The span with the highest start + end score inside one sentence, on words: as src/qa/reader/spanReader.ts decodes."""
    n = len(passage["words"])
    best = None
    for i in range(n):
        if not passage["isWord"][i]:
            continue
        for j in range(i, min(n, i + max_words)):
            if passage["sentences"][j] != passage["sentences"][i]:
                break
            if not passage["isWord"][j]:
                continue
            score = start[i] + end[j]
            if best is None or score > best[0]:
                best = (score, i, j)
    if best is None:
        return ""
    _, i, j = best
    return "".join((passage["spaces"][k] if k > i else "") + passage["words"][k] for k in range(i, j + 1))


def evaluate(model, split, max_words):
    """EM and F1 of the exact (packed) model, as the exported one reads."""
    model.eval()
    model.packed = True
    em = f1_sum = 0.0
    with torch.no_grad():
        for batch in batches(split, split.items, 64, False, None):
            start, end = model(*tensors(split, batch))
            for r, item in enumerate(batch):
                passage = split.passages[item["passage"]]
                n = len(passage["words"])
                prediction = best_span(passage, start[r, :n].tolist(), end[r, :n].tolist(), max_words)
                em += float(any(normalize(prediction) == normalize(a) for a in item["answers"]))
                f1_sum += f1(prediction, item["answers"])
    model.packed = False
    n = max(1, len(split.items))
    return {"questions": len(split.items), "exactMatch": round(100 * em / n, 2), "f1": round(100 * f1_sum / n, 2)}


# --- training ------------------------------------------------------------------------------

def train(train_split, tune_split, options, variant, log):
    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    model = ReaderHead(train_split.dimension, train_split.word_features, train_split.question_features,
                       hidden=options.hidden, layers=options.layers, dropout=options.dropout, **variant)
    trainable = [item for item in train_split.items if item["gold"]][:options.train_limit or None]
    steps_total = options.epochs * math.ceil(len(trainable) / options.batch)
    schedules = []
    if options.joint_layers > 0:
        model = JointReader(encoder_top(train_split.meta, options, log), model)
        # The pretrained layers take small steps (BERT's fine-tuning rate, decaying to zero); the new head its own rate.
        layers = torch.optim.AdamW(list(model.layers.parameters()) + [model.segment], lr=options.encoder_lr, weight_decay=0.01)
        schedules.append(torch.optim.lr_scheduler.LambdaLR(layers, lambda step: max(0.0, 1 - step / steps_total)))
        optimizers = [torch.optim.Adamax(model.head.parameters(), lr=options.lr), layers]
    else:
        optimizers = [torch.optim.Adamax(model.parameters(), lr=options.lr)]
    best = (-1.0, None, 0)
    max_words = train_split.meta["maxSpanWords"]
    for epoch in range(1, options.epochs + 1):
        model.train()
        started, total, steps = time.time(), 0.0, 0
        for batch in batches(train_split, trainable, options.batch, True, rng):
            start, end = model(*tensors(train_split, batch))
            loss = span_loss(start, end, batch)
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 10.0)
            for optimizer in optimizers:
                optimizer.step()
            for schedule in schedules:
                schedule.step()
            total += loss.item()
            steps += 1
        scores = evaluate(model, tune_split, max_words)
        log(f"  epoch {epoch}: loss {total / max(1, steps):.3f}, tune EM {scores['exactMatch']} F1 {scores['f1']} ({time.time() - started:.0f} s)")
        if scores["f1"] > best[0]:
            best = (scores["f1"], {k: v.clone() for k, v in model.state_dict().items()}, epoch)
    model.load_state_dict(best[1])
    model.eval()
    return model, best[2]


def encoder_top(meta, options, log):
    """The encoder's layers above the prepared word layer, checked against the ONNX encoder's own output."""
    match = re.fullmatch(r"/encoder/layer\.(\d+)/output/LayerNorm/Add_1_output_0", meta.get("wordLayer") or "")
    if not match:
        sys.exit(f"--joint-layers {options.joint_layers}: the data was prepared with word states from {meta.get('wordLayer')!r}, not a middle layer")
    first = int(match.group(1)) + 1
    # The lower layers' states come from the served (int8) encoder either way; the copies start from
    # its weights, or from another file of the same encoder (the full-precision one).
    layers = load_layers(options.start_encoder or meta["encoderPath"], first, first + options.joint_layers - 1, options.layer_dropout)
    cosine, difference = check_layers(layers, f"{options.data}/encoder-check.json")
    log(f"  layers {first}-{first + options.joint_layers - 1} against the ONNX encoder: lowest cosine {cosine:.4f}, largest difference {difference:.4f}")
    if cosine < 0.99:
        sys.exit("the copied layers do not reproduce the ONNX encoder's output")
    return layers


def export(model, split, path):
    model.packed = True
    batch = split.items[:2]
    inputs = tensors(split, batch)
    names = ["passage", "passage_features", "passage_lengths", "question", "question_lengths", "question_features"]
    axes = {"passage": {0: "batch", 1: "words"}, "passage_features": {0: "batch", 1: "words"}, "passage_lengths": {0: "batch"},
            "question": {0: "batch", 1: "question_words"}, "question_lengths": {0: "batch"}, "question_features": {0: "batch"},
            "start_logits": {0: "batch", 1: "words"}, "end_logits": {0: "batch", 1: "words"}}
    torch.onnx.export(model, inputs, path, input_names=names, output_names=["start_logits", "end_logits"], dynamic_axes=axes, opset_version=14)
    store_weights_as_half(path)


def store_weights_as_half(path, at_least=1024):
    """Halves the file (the fine-tuned layers make it 19 MB in float32): every large weight is stored
    as float16 and cast back to float32 by a node that onnxruntime folds away when it loads the
    model, so the head computes in float32 as trained (the read answers are the same)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(path)
    graph = model.graph
    casts = []
    for weight in list(graph.initializer):
        if weight.data_type != TensorProto.FLOAT or np.prod(weight.dims) < at_least:
            continue
        half = numpy_helper.from_array(numpy_helper.to_array(weight).astype(np.float16), weight.name + "_half")
        graph.initializer.remove(weight)
        graph.initializer.append(half)
        casts.append(helper.make_node("Cast", [half.name], [weight.name], to=TensorProto.FLOAT, name=weight.name + "_to_float"))
    for node in reversed(casts):
        graph.node.insert(0, node)
    onnx.save(model, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="directory written by `chronoql train-reader` (train, tune and held-out splits)")
    parser.add_argument("--out", required=True, help="directory for reader.onnx and reader.json")
    parser.add_argument("--report", help="also score these splits (comma-separated), e.g. held-out", default="held-out")
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--dropout", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=20261124)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-limit", type=int, default=0, help="train on the first N questions only (quick comparisons)")
    parser.add_argument("--joint-layers", type=int, default=0, help="fine-tune this many of the encoder's top layers over question and passage together")
    parser.add_argument("--start-encoder", help="the ONNX encoder file whose top layers the fine-tune starts from (default: the one the data was prepared with)")
    parser.add_argument("--encoder-lr", type=float, default=2e-4)
    parser.add_argument("--layer-dropout", type=float, default=0.1)
    parser.add_argument("--ablation", action="store_true", help="also train without alignment, without word features and without the BiLSTM")
    options = parser.parse_args()
    if options.start_encoder and options.joint_layers == 0:
        parser.error("--start-encoder needs --joint-layers: without them no encoder layer is fine-tuned")
    torch.set_num_threads(options.threads)
    log = lambda message: print(message, file=sys.stderr, flush=True)
    train_split, tune_split = Split(options.data, "train"), Split(options.data, "tune")
    reported = {name: Split(options.data, name) for name in options.report.split(",") if name}
    variants = {"full": {}}
    if options.ablation:
        variants.update({"no word features": {"features": False}, "no question alignment": {"align": False},
                         "no BiLSTM (per-word head)": {"passage_rnn": False}})
    results = {}
    for name, variant in variants.items():
        log(f"training the {name} reader")
        model, epoch = train(train_split, tune_split, options, variant, log)
        max_words = train_split.meta["maxSpanWords"]
        results[name] = {"epoch": epoch, "tune": evaluate(model, tune_split, max_words),
                         **{split: evaluate(model, data, max_words) for split, data in reported.items()}}
        log(f"  {name}: {json.dumps(results[name])}")
        if name == "full":
            torch.save(model.state_dict(), f"{options.data}/reader.pt")
            export(model, tune_split, f"{options.out}/reader.onnx")
            settings = {k: getattr(options, k) for k in ["epochs", "batch", "hidden", "layers", "dropout", "lr", "seed", "joint_layers", "encoder_lr", "layer_dropout"]}
            if options.start_encoder:
                settings["start_encoder"] = os.path.basename(options.start_encoder)
            info = {"encoder": train_split.meta["encoder"], **({"wordLayer": train_split.meta["wordLayer"]} if options.joint_layers else {}),
                    "wordFeatures": train_split.meta["wordFeatures"],
                    "questionFeatures": train_split.meta["questionFeatures"],
                    "provenance": {"trainedOn": f"{len(train_split.items)} questions (train split)",
                                   "chosenOn": f"{len(tune_split.items)} questions (tune split)", "settings": settings,
                                   "scores": results[name]}}
            json.dump(info, open(f"{options.out}/reader.json", "w", encoding="utf-8"), indent=2)
            open(f"{options.out}/reader.json", "a").write("\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
