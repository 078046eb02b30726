"""ts.torch_handler.base_handler: the BaseHandler custom handlers subclass.

Loads the archive's model in initialize (TorchScript, or an eager model from
its modelFile and state dict), on the CPU with one torch thread (the worker
runs inside one core of inferd's plan).
"""
import abc
import importlib
import logging
import os
import time

import torch

from ..utils.util import list_classes_from_module, load_label_mapping

logger = logging.getLogger(__name__)


class BaseHandler(abc.ABC):
    def __init__(self):
        self.model = None
        self.mapping = None
        self.device = None
        self.initialized = False
        self.context = None
        self.model_pt_path = None
        self.manifest = None
        self.map_location = None
        self.explain = False
        self.target = 0
        self.model_yaml_config = {}

    def initialize(self, context):
        properties = context.system_properties
        self.model_yaml_config = getattr(context, "model_yaml_config", None) or {}
        self.map_location = "cpu"
        self.device = torch.device("cpu")
        self.manifest = context.manifest
        model_dir = properties.get("model_dir")
        model = (self.manifest or {}).get("model", {})
        serialized_file = model.get("serializedFile")
        self.model_pt_path = os.path.join(model_dir, serialized_file) if serialized_file else None
        model_file = model.get("modelFile", "")
        if model_file:
            self.model = self._load_pickled_model(model_dir, model_file, self.model_pt_path)
            self.model.to(self.device)
            self.model.eval()
        elif self.model_pt_path and self.model_pt_path.endswith((".pt", ".pth")):
            self.model = self._load_torchscript_model(self.model_pt_path)
            self.model.eval()
        self.mapping = load_label_mapping(os.path.join(model_dir, "index_to_name.json"))
        self.initialized = True

    def _load_torchscript_model(self, model_pt_path):
        return torch.jit.load(model_pt_path, map_location=self.device)

    def _load_pickled_model(self, model_dir, model_file, model_pt_path):
        if not os.path.isfile(os.path.join(model_dir, model_file)):
            raise RuntimeError("Missing the model.py file")
        module = importlib.import_module(model_file.split(".")[0])
        classes = list_classes_from_module(module)
        if len(classes) != 1:
            raise ValueError("Expected only one class as model definition. {}".format(classes))
        model = classes[0]()
        if model_pt_path:
            model.load_state_dict(torch.load(model_pt_path, map_location=self.device))
        return model

    def preprocess(self, data):
        return torch.as_tensor(data, device=self.device)

    def inference(self, data, *args, **kwargs):
        with torch.inference_mode():
            return self.model(data.to(self.device), *args, **kwargs)

    def postprocess(self, data):
        return data.tolist()

    def handle(self, data, context):
        start = time.time()
        self.context = context
        output = self.postprocess(self.inference(self.preprocess(data)))
        context.metrics.add_time("HandlerTime", round((time.time() - start) * 1000, 2), None, "ms")
        return output

    def get_device(self):
        return self.device
