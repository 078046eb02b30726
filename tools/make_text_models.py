#!/usr/bin/python3
"""Transformer text models for inferd's tests and benchmarks, made with Debian's python3-torch and
python3-sentencepiece from text a Debian package ships: the package descriptions (short and long)
of /var/lib/dpkg/status, each labelled with its package's Section.

  --test-store DIR (make_models.py calls build() for its test store):
    text_classifier  DeBERTa-style encoder (2 layers, d=64) trained here to tell a package's
                     section from its description; SentencePiece (unigram, 2000 pieces) trained
                     on the same descriptions. held_out.json: the held-out texts and accuracy.
    bert_tiny        BERT-style encoder (2 layers, d=64, nn.TransformerEncoder), WordPiece vocab
                     built here from the descriptions; random seeded weights.
  --bench DIR (benchmarks only, never the test store):
    deberta_small    DeBERTa-style, 4 layers, d=256, SentencePiece 8000 (the issue's small encoder)
    deberta_base     DeBERTa-style, 12 layers, d=768, SentencePiece 8000
    bert_small       BERT-style, 4 layers, d=256, WordPiece
    bert_base        BERT-style, 12 layers, d=768 (bert-base), WordPiece padded to 30522 entries
    bert_traced_small, bert_traced_base
                     BERT written op by op as Hugging Face's is (separate Q/K/V projections,
                     -10000 additive mask, erf GELU, post-LayerNorm), 4 x 256 and 12 x 768,
                     WordPiece as bert_base, **traced** (torch.jit.trace): the held-out traced
                     encoder of issue 37, which `inferd optimize` exports to ONNX (the scripted
                     nn.TransformerEncoder does not export with torch 1.13)
    texts/           64 real descriptions of mixed lengths, one file each (wrk, inferd bench)
    peer/            each SentencePiece model as ../shared/peers/fastapi_torch/text_app.py wants
                     it: <name>.pt, <name>.spm.model, <name>.labels.txt

Every model's forward(input_ids, attention_mask) -> logits [N, C] (INT64 inputs, mask 1 for real
tokens); its config.yaml pads variable lengths with pad_value 0 (the tokenizers' pad id).
Deterministic for one status file (fixed seeds, one thread).
"""

import argparse
import hashlib
import json
import math
import os
import re
import sys

STATUS = "/var/lib/dpkg/status"
MAX_LENGTH = 256  # text_app.py's MAX_LENGTH default
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def log(msg):
    print(f"make_text_models: {msg}", flush=True)


# ------------------------------------------------------------------ corpus

def read_corpus(path=STATUS):
    """[(package, section, description)] from a dpkg status file: the short description, then the
    long one with its ' .' paragraph marks as blank lines."""
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        blocks = f.read().split("\n\n")
    for block in blocks:
        fields, key = {}, None
        for line in block.split("\n"):
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + ("" if line.strip() == "." else line.strip())
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" in fields and "Section" in fields and "Description" in fields:
            section = fields["Section"].split("/")[-1]
            out.append((fields["Package"], section, fields["Description"].strip()))
    out.sort()
    return out


def labelled(corpus, min_count=25):
    """The sections with at least min_count packages (the labels, sorted) and the examples of
    those sections."""
    counts = {}
    for _, s, _ in corpus:
        counts[s] = counts.get(s, 0) + 1
    labels = sorted(s for s, n in counts.items() if n >= min_count)
    return labels, [(p, labels.index(s), d) for p, s, d in corpus if s in labels]


def held_out(package):
    """One package in five, by a hash of its name (stable across machines)."""
    return int(hashlib.sha256(package.encode()).hexdigest(), 16) % 5 == 0


# ------------------------------------------------------------------ tokenizers

def train_sentencepiece(texts, prefix, vocab_size):
    import sentencepiece as spm
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_prefix=prefix, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, pad_id=0, unk_id=1, bos_id=2, eos_id=3,
        num_threads=1, minloglevel=2, hard_vocab_limit=False, input_sentence_size=0)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def build_wordpiece_vocab(texts, size, pad_to=0):
    """A WordPiece vocabulary: the specials, every character seen (as itself and as '##c'), then
    the most frequent lower-cased words of the texts (BERT's basic split: whitespace and
    punctuation) up to `size`; [unusedN] entries up to `pad_to`, as BERT's vocab.txt has."""
    import unicodedata
    words, chars = {}, set()
    for t in texts:
        for w in re.findall(r"\w+|[^\w\s]", t.lower()):
            w = "".join(c for c in unicodedata.normalize("NFD", w)
                        if unicodedata.category(c) != "Mn")
            if not w:
                continue
            words[w] = words.get(w, 0) + 1
            chars.update(w)
    vocab = list(SPECIALS)
    for c in sorted(chars):
        vocab += [c, "##" + c]
    seen = set(vocab)
    for w, _ in sorted(words.items(), key=lambda kv: (-kv[1], kv[0])):
        if len(vocab) >= size:
            break
        if w not in seen:
            vocab.append(w)
            seen.add(w)
    i = 0
    while len(vocab) < pad_to:
        vocab.append(f"[unused{i}]")
        i += 1
    return vocab


# ------------------------------------------------------------------ models

def modules():
    import torch
    from torch import Tensor, nn

    class DisentangledAttention(nn.Module):
        """DeBERTa's attention: content-to-content plus content-to-position and
        position-to-content terms over relative distances clipped to +-span."""

        def __init__(self, d: int, heads: int, span: int):
            super().__init__()
            self.heads, self.dh, self.span = heads, d // heads, span
            self.qkv = nn.Linear(d, 3 * d)
            self.pos_q = nn.Linear(d, d)
            self.pos_k = nn.Linear(d, d)
            self.out = nn.Linear(d, d)
            self.scale = 1.0 / math.sqrt(3 * self.dh)

        def forward(self, x: Tensor, rel: Tensor, key_mask: Tensor) -> Tensor:
            n, length, d = x.shape
            qkv = self.qkv(x).view(n, length, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            pk = self.pos_k(rel).view(-1, self.heads, self.dh).transpose(0, 1)  # [H, 2S, dh]
            pq = self.pos_q(rel).view(-1, self.heads, self.dh).transpose(0, 1)
            pos = torch.arange(length, device=x.device)
            idx = (pos.view(1, -1) - pos.view(-1, 1)).clamp(-self.span, self.span - 1) + self.span
            c2p = torch.gather(torch.matmul(q, pk.transpose(-1, -2).unsqueeze(0)), 3,
                               idx.expand(n, self.heads, length, length))
            p2c = torch.gather(torch.matmul(k, pq.transpose(-1, -2).unsqueeze(0)), 3,
                               idx.expand(n, self.heads, length, length)).transpose(-1, -2)
            scores = (torch.matmul(q, k.transpose(-1, -2)) + c2p + p2c) * self.scale
            scores = scores.masked_fill(key_mask.view(n, 1, 1, length), float("-inf"))
            attn = torch.softmax(scores, -1)
            y = torch.matmul(attn, v).transpose(1, 2).reshape(n, length, d)
            return self.out(y)

    class DebertaLayer(nn.Module):
        def __init__(self, d: int, heads: int, ff: int, span: int):
            super().__init__()
            self.attn = DisentangledAttention(d, heads, span)
            self.norm1 = nn.LayerNorm(d)
            self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
            self.norm2 = nn.LayerNorm(d)

        def forward(self, x: Tensor, rel: Tensor, key_mask: Tensor) -> Tensor:
            x = self.norm1(x + self.attn(x, rel, key_mask))
            return self.norm2(x + self.ff(x))

    class DebertaStyle(nn.Module):
        """Token embeddings (no absolute positions), layers of disentangled attention sharing one
        relative-position table, a pooler on the first token and a classifier."""

        def __init__(self, vocab: int, d: int, layers: int, heads: int, classes: int,
                     span: int = 128):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.norm = nn.LayerNorm(d)
            self.rel = nn.Parameter(torch.randn(2 * span, d) * 0.02)
            self.layers = nn.ModuleList([DebertaLayer(d, heads, 4 * d, span)
                                         for _ in range(layers)])
            self.pool = nn.Linear(d, d)
            self.classify = nn.Linear(d, classes)

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            x = self.norm(self.embed(input_ids))
            key_mask = attention_mask == 0
            for layer in self.layers:
                x = layer(x, self.rel, key_mask)
            return self.classify(torch.tanh(self.pool(x[:, 0])))

    class BertStyle(nn.Module):
        """BERT: token + position + segment embeddings, nn.TransformerEncoder (post-norm, GELU;
        the layers libtorch 1.13's native fast path serves in eval), a tanh pooler on [CLS] and a
        classifier."""

        def __init__(self, vocab: int, d: int, layers: int, heads: int, classes: int,
                     max_positions: int = 512):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.position = nn.Embedding(max_positions, d)
            self.segment = nn.Embedding(2, d)
            self.norm = nn.LayerNorm(d)
            layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0, activation="gelu",
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=True)
            self.pool = nn.Linear(d, d)
            self.classify = nn.Linear(d, classes)

        def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
            positions = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
            x = self.embed(input_ids) + self.position(positions) + self.segment.weight[0]
            x = self.norm(x)
            # The first token ([CLS]) always counts: a row without a real token (a warm-up on
            # zeros) would leave the fast path's nested tensor empty.
            padding = attention_mask == 0
            padding[:, 0] = False
            x = self.encoder(x, src_key_padding_mask=padding)
            return self.classify(torch.tanh(self.pool(x[:, 0])))

    return DebertaStyle, BertStyle


def traced_bert_module():
    """HfBert: BERT op by op as Hugging Face's modeling_bert writes it, for torch.jit.trace."""
    import math
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads, self.dh = heads, d // heads
            self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def split(self, x):
            n, length, _ = x.shape
            return x.view(n, length, self.heads, self.dh).permute(0, 2, 1, 3)

        def forward(self, x, additive_mask):
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + additive_mask
            ctx = torch.matmul(torch.softmax(scores, -1), v).permute(0, 2, 1, 3)
            ctx = ctx.reshape(x.shape[0], x.shape[1], -1)
            x = self.ln1(x + self.o(ctx))
            return self.ln2(x + self.ff2(nn.functional.gelu(self.ff1(x))))

    class HfBert(nn.Module):
        def __init__(self, vocab, d, layers, heads, classes, max_positions=512):
            super().__init__()
            self.word, self.position = nn.Embedding(vocab, d), nn.Embedding(max_positions, d)
            self.segment = nn.Embedding(2, d)
            self.norm = nn.LayerNorm(d)
            self.layers = nn.ModuleList([Layer(d, heads) for _ in range(layers)])
            self.pool, self.classify = nn.Linear(d, d), nn.Linear(d, classes)

        def forward(self, input_ids, attention_mask):
            positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
            x = self.word(input_ids) + self.position(positions)
            x = self.norm(x + self.segment(torch.zeros_like(input_ids)))
            additive = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
            for layer in self.layers:
                x = layer(x, additive)
            return self.classify(torch.tanh(self.pool(x[:, 0])))

    return HfBert


def trace(model):
    """torch.jit.trace on two padded rows: shapes stay dynamic (sizes are traced ops)."""
    import torch
    ids = torch.randint(1, 1000, (2, 16), generator=torch.Generator().manual_seed(0))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 12:] = 0
    with torch.no_grad():
        return torch.jit.trace(model.eval(), (ids, mask))


def init_weights(model, seed):
    """Seeded weights with BERT's initializer scale (std 0.02), so that a random deep encoder's
    logits stay spread rather than saturated."""
    import torch
    torch.manual_seed(seed)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            torch.nn.init.normal_(p, std=0.02)
        elif name.endswith("bias"):
            torch.nn.init.zeros_(p)


def script(model):
    import torch
    return torch.jit.script(model.eval())


# ------------------------------------------------------------------ store

def config_yaml(name, about, tokenizer, vocab_file, classes, max_batch_size=16):
    return f"""# {name}: {about}
# Written by tools/make_text_models.py.
backend: torchscript
max_batch_size: {max_batch_size}
dynamic_batching: {{max_queue_delay_us: 2000}}
max_queue_size: 256
inputs:
  - {{name: input_ids, datatype: INT64, shape: [-1], pad_value: 0}}
  - {{name: attention_mask, datatype: INT64, shape: [-1], pad_value: 0}}
outputs: [{{name: logits, datatype: FP32, shape: [{classes}]}}]
preprocess: {{kind: text, tokenizer: {tokenizer}, vocab: {vocab_file}, max_length: {MAX_LENGTH}}}
postprocess: {{kind: topk, k: 5, labels: labels.txt}}
"""


def write_model(store, name, module, about, tokenizer, vocab_file, labels):
    d = os.path.join(store, name)
    os.makedirs(os.path.join(d, "1"), exist_ok=True)
    module.save(os.path.join(d, "1", "model.pt"))
    with open(os.path.join(d, "labels.txt"), "w") as f:
        f.write("\n".join(labels) + "\n")
    with open(os.path.join(d, "config.yaml"), "w") as f:
        f.write(config_yaml(name, about, tokenizer, vocab_file, len(labels)))
    log(f"{name} written")
    return d


def spm_encode(sp, text, max_length=MAX_LENGTH):
    """text_app.py's encode: <s> pieces </s>, cut to max_length."""
    ids = sp.encode(text)[:max_length - 2]
    return [sp.bos_id()] + ids + [sp.eos_id()]


def train_classifier(model, sp, train, epochs, seed):
    """Adam on batches of 32 descriptions (cut to 64 tokens while training)."""
    import torch
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    order = list(range(len(train)))
    model.train()
    for epoch in range(epochs):
        g = torch.Generator().manual_seed(seed + epoch)
        order = torch.randperm(len(train), generator=g).tolist()
        for b in range(0, len(order), 32):
            rows = [spm_encode(sp, train[i][2], 64) for i in order[b:b + 32]]
            length = max(len(r) for r in rows)
            ids = torch.tensor([r + [0] * (length - len(r)) for r in rows])
            mask = (ids != 0).long()
            mask[:, 0] = 1
            target = torch.tensor([train[i][1] for i in order[b:b + 32]])
            loss = torch.nn.functional.cross_entropy(model(ids, mask), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()


def build(store, force=False):
    """The test store's text models (see the module doc)."""
    import torch
    import model_stamps

    digest = hashlib.sha256(open(__file__, "rb").read()).hexdigest()
    names = ["text_classifier", "bert_tiny"]
    if not force and all(model_stamps.is_fresh(os.path.join(store, n), digest) for n in names):
        return
    torch.set_num_threads(1)
    DebertaStyle, BertStyle = modules()
    labels, examples = labelled(read_corpus())
    train = [e for e in examples if not held_out(e[0])]
    test = [e for e in examples if held_out(e[0])]
    texts = [d for _, _, d in examples]

    d = os.path.join(store, "text_classifier")
    os.makedirs(d, exist_ok=True)
    sp = train_sentencepiece(texts, os.path.join(d, "tokenizer"), 2000)
    model = DebertaStyle(sp.get_piece_size(), 64, 2, 2, len(labels), span=64)
    init_weights(model, 0)
    train_classifier(model, sp, train, epochs=12, seed=0)
    correct = 0
    with torch.no_grad():
        for _, label, text in test:
            ids = torch.tensor([spm_encode(sp, text)])
            correct += int(model(ids, torch.ones_like(ids)).argmax()) == label
    write_model(store, "text_classifier", script(model),
                "a package's Debian section from its description (trained here)",
                "sentencepiece", "tokenizer.model", labels)
    with open(os.path.join(d, "held_out.json"), "w") as f:
        json.dump({"accuracy": correct / max(1, len(test)), "labels": labels,
                   "majority": max(sum(e[1] == i for e in test) for i in range(len(labels)))
                   / max(1, len(test)),
                   "texts": [t for _, _, t in test], "answers": [l for _, l, _ in test]}, f)
    log(f"text_classifier: held-out accuracy {correct}/{len(test)} over {len(labels)} sections")
    model_stamps.mark_fresh(d, digest)

    d = os.path.join(store, "bert_tiny")
    os.makedirs(d, exist_ok=True)
    vocab = build_wordpiece_vocab(texts, 3000)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    model = BertStyle(len(vocab), 64, 2, 2, len(labels))
    init_weights(model, 1)
    write_model(store, "bert_tiny", script(model), "BERT-style encoder, random seeded weights",
                "wordpiece", "vocab.txt", labels)
    model_stamps.mark_fresh(d, digest)


def mixed_texts(examples, n=64):
    """n descriptions spread over the length range: every k-th of them sorted by length, then
    shuffled by a hash so that consecutive requests differ."""
    by_length = sorted((t for _, _, t in examples), key=lambda t: (len(t), t))
    step = len(by_length) / n
    picked = [by_length[int(i * step)] for i in range(n)]
    return sorted(picked, key=lambda t: hashlib.sha256(t.encode()).hexdigest())


def build_bench(out):
    """The benchmark models (see the module doc); minutes for the base-sized ones."""
    import shutil
    import torch
    torch.set_num_threads(2)
    DebertaStyle, BertStyle = modules()
    labels, examples = labelled(read_corpus())
    texts = [d for _, _, d in examples]
    os.makedirs(os.path.join(out, "peer"), exist_ok=True)
    spm_dir = os.path.join(out, "spm8k")
    os.makedirs(spm_dir, exist_ok=True)
    sp = train_sentencepiece(texts, os.path.join(spm_dir, "tokenizer"), 8000)
    vocab = build_wordpiece_vocab(texts, 8000, pad_to=30522)
    for name, d, layers, heads in [("deberta_small", 256, 4, 4), ("deberta_base", 768, 12, 12)]:
        model = DebertaStyle(sp.get_piece_size(), d, layers, heads, len(labels))
        init_weights(model, 2)
        m = script(model)
        md = write_model(out, name, m, f"DeBERTa-style {layers} x {d}, random weights",
                         "sentencepiece", "tokenizer.model", labels)
        shutil.copy(os.path.join(spm_dir, "tokenizer.model"), md)
        m.save(os.path.join(out, "peer", name + ".pt"))
        shutil.copy(os.path.join(spm_dir, "tokenizer.model"),
                    os.path.join(out, "peer", name + ".spm.model"))
        with open(os.path.join(out, "peer", name + ".labels.txt"), "w") as f:
            f.write("\n".join(labels))
    for name, d, layers, heads in [("bert_small", 256, 4, 4), ("bert_base", 768, 12, 12)]:
        model = BertStyle(len(vocab), d, layers, heads, len(labels))
        init_weights(model, 3)
        md = write_model(out, name, script(model), f"BERT-style {layers} x {d}, random weights",
                         "wordpiece", "vocab.txt", labels)
        with open(os.path.join(md, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
    HfBert = traced_bert_module()
    for name, d, layers, heads in [("bert_traced_small", 256, 4, 4),
                                   ("bert_traced_base", 768, 12, 12)]:
        model = HfBert(len(vocab), d, layers, heads, len(labels))
        init_weights(model, 4)
        md = write_model(out, name, trace(model), f"BERT op by op, {layers} x {d}, traced",
                         "wordpiece", "vocab.txt", labels)
        with open(os.path.join(md, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
    tdir = os.path.join(out, "texts")
    os.makedirs(tdir, exist_ok=True)
    for i, t in enumerate(mixed_texts(examples)):
        with open(os.path.join(tdir, f"{i:02d}.txt"), "w") as f:
            f.write(t)
    lengths = sorted(len(spm_encode(sp, t)) for t in mixed_texts(examples))
    log(f"texts/: 64 descriptions of {lengths[0]}-{lengths[-1]} tokens "
        f"(median {lengths[32]}, SentencePiece 8k)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--test-store", help="write the test store's text models here")
    parser.add_argument("--bench", help="write the benchmark models here")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if args.test_store:
        build(args.test_store, args.force)
    if args.bench:
        build_bench(args.bench)
    if not args.test_store and not args.bench:
        parser.error("give --test-store DIR and/or --bench DIR")


if __name__ == "__main__":
    main()
