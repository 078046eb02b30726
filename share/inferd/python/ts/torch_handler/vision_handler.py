"""ts.torch_handler.vision_handler: images in (bytes, base64 text or a list)."""
import base64
import io
from abc import ABC

import torch
from PIL import Image

from .base_handler import BaseHandler


class VisionHandler(BaseHandler, ABC):
    image_processing = None

    def initialize(self, context):
        super().initialize(context)
        if not context.system_properties.get("limit_max_image_pixels"):
            Image.MAX_IMAGE_PIXELS = None

    def preprocess(self, data):
        images = []
        for row in data:
            image = row.get("data") or row.get("body")
            if isinstance(image, str):
                image = base64.b64decode(image)
            if isinstance(image, (bytearray, bytes)):
                image = Image.open(io.BytesIO(image))
                image = self.image_processing(image)
            else:
                image = torch.FloatTensor(image)
            images.append(image)
        return torch.stack(images).to(self.device)
