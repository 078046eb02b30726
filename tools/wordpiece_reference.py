#!/usr/bin/python3
"""Reference WordPiece (BERT) tokenizer for inferd's src/pipeline/wordpiece_tokenizer.cc.

A line-for-line port of Hugging Face transformers' BertTokenizer (BasicTokenizer +
WordpieceTokenizer, transformers 4.3x, Apache-2.0), which is not packaged in
Debian, using Python's own unicodedata.

  wordpiece_reference.py fixtures      write tests/fixtures/pipeline/wordpiece_{vocab,cases}.txt
  wordpiece_reference.py tokenize VOCAB [--cased] < texts.txt   print one line of pieces per text
"""
import os
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_whitespace(ch):
    if ch in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(ch) == "Zs"


def _is_control(ch):
    if ch in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(ch).startswith("C")


def _is_punctuation(ch):
    cp = ord(ch)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(ch).startswith("P")


def _is_chinese_char(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F) or (0x2B820 <= cp <= 0x2CEAF)
            or (0xF900 <= cp <= 0xFAFF) or (0x2F800 <= cp <= 0x2FA1F))


def basic_tokenize(text, lowercase=True, strip_accents=True):
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD or _is_control(ch):
            continue
        out.append(" " if _is_whitespace(ch) else ch)
    text = "".join(out)
    text = "".join(" %s " % ch if _is_chinese_char(ord(ch)) else ch for ch in text)
    text = unicodedata.normalize("NFC", text)
    tokens = []
    for token in text.split():
        if lowercase:
            token = token.lower()
        if strip_accents:
            token = "".join(c for c in unicodedata.normalize("NFD", token) if unicodedata.category(c) != "Mn")
        word = []
        for ch in token:
            if _is_punctuation(ch):
                if word:
                    tokens.append("".join(word))
                    word = []
                tokens.append(ch)
            else:
                word.append(ch)
        if word:
            tokens.append("".join(word))
    return " ".join(tokens).split()


def wordpiece(words, vocab, unk="[UNK]", max_chars=100):
    out = []
    for token in words:
        chars = list(token)
        if len(chars) > max_chars:
            out.append(unk)
            continue
        start, pieces, bad = 0, [], False
        while start < len(chars):
            end, cur = len(chars), None
            while start < end:
                sub = "".join(chars[start:end])
                if start > 0:
                    sub = "##" + sub
                if sub in vocab:
                    cur = sub
                    break
                end -= 1
            if cur is None:
                bad = True
                break
            pieces.append(cur)
            start = end
        out.extend([unk] if bad else pieces)
    return out


def load_vocab(path):
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            vocab.setdefault(line.rstrip("\n").rstrip("\r"), i)
    return vocab


TEXTS = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "unaffable unbelievable rethinking",
    "Café déjà vu: naïve façade, résumé and ÉCOLE",
    "Don't stop-believing... (really?) [yes] {no} #hash @at 50% $5",
    "中文字符 mixed with English 和 日本語",
    "Straße ΣΊΣΥΦΟΣ İstanbul",
    "tabs\tand\nnew lines\r\nand   many    spaces",
    "control\x00chars\x07and\ufffdreplacement\u200bzero-width",
    "emoji 😀 and symbols ™ © ½ → ∞",
    "„quotes“ «guillemets» ‘single’ — dash – en",
    "a" * 120 + " short",
    "running runner runs ran",
    "",
    "   ",
    "Ünïcödé ÀÉÎÕÜ àéîõü Ññ Çç",
    "Ｆｕｌｌｗｉｄｔｈ ｌｅｔｔｅｒｓ",
    "x̧ combining e\u0301 decomposed",
]


def cmd_fixtures():
    out_dir = os.path.join(ROOT, "tests", "fixtures", "pipeline")
    # A toy vocab made from the texts: whole words, a few word-piece stems and
    # suffixes, and single characters, leaving some characters out so [UNK] happens.
    words = []
    for t in TEXTS:
        words += basic_tokenize(t)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    common = ["the", "quick", "brown", "fox", "over", "hello", "world", "un", "##aff", "##able", "##believ",
              "re", "##think", "##ing", "run", "##ner", "##s", "ran", "cafe", "deja", "vu", "naive", "facade",
              "resume", "ecole", "don", "t", "stop", "believ", "really", "yes", "no", "hash", "at", "and",
              "mixed", "with", "english", "tabs", "new", "lines", "many", "spaces", "control", "chars",
              "zero", "width", "short", "emoji", "symbols", "quotes", "single", "dash", "en", "combining",
              "decomposed", "strasse", "istanbul", "full", "##width", "letters"]
    vocab += common
    chars = sorted({c for w in words for c in w})
    skip = {"😀", "∞", "日"}
    for c in chars:
        if c in skip:
            continue
        if c not in vocab:
            vocab.append(c)
        if "##" + c not in vocab:
            vocab.append("##" + c)
    with open(os.path.join(out_dir, "wordpiece_vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    v = load_vocab(os.path.join(out_dir, "wordpiece_vocab.txt"))
    lines = ["# lowercase<TAB>text (escaped)<TAB>pieces (space separated); tools/wordpiece_reference.py fixtures"]
    for cased in (False, True):
        for t in TEXTS:
            pieces = wordpiece(basic_tokenize(t, lowercase=not cased, strip_accents=not cased), v)
            esc = t.encode("unicode_escape").decode("ascii")
            lines.append("%d\t%s\t%s" % (0 if cased else 1, esc, " ".join(pieces)))
    with open(os.path.join(out_dir, "wordpiece_cases.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", len(vocab), "tokens and", len(lines) - 1, "cases to", out_dir)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "fixtures":
        return cmd_fixtures()
    if len(sys.argv) >= 3 and sys.argv[1] == "tokenize":
        vocab = load_vocab(sys.argv[2])
        cased = "--cased" in sys.argv
        for line in sys.stdin:
            print(" ".join(wordpiece(basic_tokenize(line.rstrip("\n"), not cased, not cased), vocab)))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main() or 0)
