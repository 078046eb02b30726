#!/usr/bin/python3
"""Reference for inferd's SentencePiece tokenization (src/pipeline/sentencepiece_tokenizer.cc).

  sentencepiece_reference.py fixtures
      trains a tiny unigram model with python3-sentencepiece on a few sentences and writes
      tests/fixtures/pipeline/spm_test.model and spm_cases.txt (text, ids from
      SentencePieceProcessor.encode), which the unit test compares against the C++ side.
  sentencepiece_reference.py encode MODEL < texts.txt     print the ids of each line
"""
import io
import os
import sys

import sentencepiece as spm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wordpiece_reference import TEXTS  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of a thousand miles begins with a single step.",
    "To be, or not to be, that is the question.",
    "All that glitters is not gold; all who wander are not lost.",
    "Café, naïve, façade and résumé are borrowed words.",
    "Numbers like 42, 3.14 and 1,000,000 appear in text too.",
    "中文字符 和 日本語 の テキスト",
    "Don't stop believing, hold on to that feeling.",
] * 20


def cmd_fixtures():
    out_dir = os.path.join(ROOT, "tests", "fixtures", "pipeline")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=model, vocab_size=100,
                                   model_type="unigram", character_coverage=1.0, pad_id=3,
                                   normalization_rule_name="identity",  # keeps the model a few KB
                                   num_threads=1, minloglevel=2)
    path = os.path.join(out_dir, "spm_test.model")
    with open(path, "wb") as f:
        f.write(model.getvalue())
    sp = spm.SentencePieceProcessor(model_file=path)
    lines = ["# text (unicode_escape)<TAB>ids; bos=%d eos=%d pad=%d unk=%d; tools/sentencepiece_reference.py fixtures"
             % (sp.bos_id(), sp.eos_id(), sp.pad_id(), sp.unk_id())]
    for t in TEXTS + CORPUS[:8]:
        ids = sp.encode(t)
        lines.append("%s\t%s" % (t.encode("unicode_escape").decode("ascii"), " ".join(map(str, ids))))
    with open(os.path.join(out_dir, "spm_cases.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", path, "(%d bytes) and" % len(model.getvalue()), len(lines) - 1, "cases")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "fixtures":
        return cmd_fixtures()
    if len(sys.argv) >= 3 and sys.argv[1] == "encode":
        sp = spm.SentencePieceProcessor(model_file=sys.argv[2])
        for line in sys.stdin:
            print(" ".join(map(str, sp.encode(line.rstrip("\n")))))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main() or 0)
