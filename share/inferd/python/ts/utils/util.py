"""ts.utils.util: the helpers handlers import."""
import inspect
import itertools
import json
import logging
import os

logger = logging.getLogger(__name__)


def list_classes_from_module(module, parent_class=None):
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ == module.__name__]
    if parent_class is not None:
        classes = [c for c in classes if issubclass(c, parent_class)]
    return classes


def load_label_mapping(mapping_file_path):
    """index_to_name.json as {"0": "label"}; a list value gives its last element."""
    if not os.path.isfile(mapping_file_path):
        logger.warning("%r is missing: answers carry class indices", mapping_file_path)
        return None
    with open(mapping_file_path) as f:
        mapping = json.load(f)
    if not isinstance(mapping, dict):
        raise Exception('index->name JSON mapping should be in "class": "label" format.')
    if isinstance(mapping.get("object_type_names"), list):
        return {str(k): v for k, v in enumerate(mapping["object_type_names"])}
    out = {}
    for key, value in mapping.items():
        if isinstance(value, list):
            value = value[-1]
        if not isinstance(value, str):
            raise Exception("labels in index->name mapping must be either str or List[str]")
        out[key] = value
    return out


def map_class_to_label(probs, mapping=None, lbl_classes=None):
    """[[p, ...], ...] (and their classes) -> [{label: p, ...}, ...] per item."""
    if not isinstance(probs, list):
        raise Exception("Convert classes to list before doing mapping")
    if mapping is not None and not isinstance(mapping, dict):
        raise Exception("Mapping must be a dict")
    if lbl_classes is None:
        lbl_classes = itertools.repeat(range(len(probs[0])), len(probs))
    return [
        {(mapping[str(c)] if mapping is not None else str(c)): p for c, p in zip(classes, row)}
        for classes, row in zip(lbl_classes, probs)
    ]


def get_yaml_config(yaml_file_path):
    import yaml
    with open(yaml_file_path) as f:
        return yaml.safe_load(f)


class PredictionException(Exception):
    def __init__(self, message, error_code=500):
        self.message = message
        self.error_code = error_code
        super().__init__(message)
