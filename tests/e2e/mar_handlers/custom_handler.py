"""A custom TorchServe handler as users write them: a BaseHandler subclass with
its own preprocess/postprocess. JSON {"x": [4 floats]} in, {"y": [...], "argmax": i}
out. Test hooks: {"die": true} ends the process, {"hang": true} never answers,
{"raise": true} raises, {"created": true} answers 201 with an X-Handler header."""
import os
import time

import torch

from ts.torch_handler.base_handler import BaseHandler
from ts.utils.util import PredictionException


class CustomHandler(BaseHandler):
    def preprocess(self, data):
        rows = []
        for idx, row in enumerate(data):
            body = row.get("data") or row.get("body")
            if isinstance(body, dict) and body.get("die"):
                os._exit(3)
            if isinstance(body, dict) and body.get("hang"):
                time.sleep(3600)
            if isinstance(body, dict) and body.get("created"):
                self.context.set_response_status(201, "Created", idx)
                self.context.set_response_header(idx, "X-Handler", "custom %d" % idx)
                self.context.set_response_header(idx, "Content-Length", "1")  # the server's own
            if isinstance(body, dict) and body.get("raise"):
                raise ValueError("asked to raise")
            if not isinstance(body, dict) or len(body.get("x") or []) != 4:
                raise PredictionException('the body needs "x": a list of 4 numbers', 400)
            rows.append(torch.tensor(body["x"], dtype=torch.float32))
        return torch.stack(rows)

    def postprocess(self, data):
        return [{"y": [round(v, 6) for v in row.tolist()], "argmax": int(row.argmax()),
                 "batch": len(data)} for row in data]
