"""ts.torch_handler.image_classifier: resize 256, crop 224, ImageNet
normalisation, softmax, top 5 through index_to_name.json. inferd runs this
natively when the archive's model is TorchScript (docs/TORCHSERVE.md); this
Python copy serves the archives it cannot (an eager model with a modelFile)."""
import torch
import torch.nn.functional as F
from torchvision import transforms

from ..utils.util import map_class_to_label
from .vision_handler import VisionHandler


class ImageClassifier(VisionHandler):
    topk = 5
    image_processing = transforms.Compose([
        transforms.Resize(256),
        transforms.CenterCrop(224),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])

    def set_max_result_classes(self, topk):
        self.topk = topk

    def get_max_result_classes(self):
        return self.topk

    def postprocess(self, data):
        ps = F.softmax(data, dim=1)
        probs, classes = torch.topk(ps, self.topk, dim=1)
        return map_class_to_label(probs.tolist(), self.mapping, classes.tolist())
