"""ts.torch_handler.text_handler: the base of text handlers (a vocabulary-free
surface: subclasses bring their own tokenizer; torchtext is not in Debian)."""
import re
import unicodedata
from abc import ABC

from .base_handler import BaseHandler

CONTRACTION_MAP = {"ain't": "is not", "can't": "cannot", "won't": "will not", "n't": " not"}
CLEANUP_REGEX = re.compile("<.*?>")


class TextHandler(BaseHandler, ABC):
    def initialize(self, context):
        super().initialize(context)
        self.initialized = True

    def _expand_contractions(self, text):
        for word, expanded in CONTRACTION_MAP.items():
            text = text.replace(word, expanded)
        return text

    def _remove_accented_characters(self, text):
        return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("utf-8", "ignore")

    def _remove_html_tags(self, text):
        return re.sub(CLEANUP_REGEX, "", text)

    def _remove_puncutation(self, *args, **kwargs):
        return self._remove_punctuation(*args, **kwargs)

    def _remove_punctuation(self, text):
        return re.sub(r"[^\w\s]", "", text)

    def _tokenize(self, text):
        return text.split()
