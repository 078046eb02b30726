#!/usr/bin/python3
"""The Python half of `inferd optimize` (docs/OPTIMIZE.md): exports one TorchScript file to
ONNX and writes an int8 copy of the export. Run by the inferd binary, never on the request path;
Debian's python3-torch (1.13) for the export, python3-onnx for the int8 rewrite.

  /usr/bin/python3 tools/optimize_export.py --model-pt DIR/m/1/model.pt --spec JSON \\
      --onnx OUT.onnx --int8 OUT.int8.onnx --result RESULT.json

--spec is the model's config as inferd parsed it: {"inputs": [{"name", "datatype", "dims"}],
"outputs": [names], "text": bool, "variable_dim": N}. The files are written where the caller
says (it renames them into place); RESULT.json says what was written or why not:

  {"onnx": {"ok": true, "opset": 17, "output_names": [...]} | {"ok": false, "reason": "..."},
   "int8": {"ok": true, "quantized": 3, "left": 1, "notes": [...]} | {"ok": false, "reason": "..."}}

Export: torch.onnx.export of the loaded module (traced and scripted alike) on example inputs of
batch 2 (floats seeded normal, integers ones: a valid token id, segment id and "attend" mask), the
config's input names, a dynamic batch axis on every input and output and a dynamic axis for every
-1 dim of the config (one shared `sequence` axis for a text model, whose tokenizer gives all
inputs the same length). Output names: the config's, in order; a dict output's keys; output0,
output1, ... when the config lists none (what the onnxruntime backend answers then).

int8 (dynamic quantization of the weights of matrix products, the scheme ONNX Runtime's
`quantize_dynamic` applies to MatMul, here to Gemm too): for every MatMul whose second input and
every Gemm whose B is a constant 2-D float tensor, the weight is quantized to int8, symmetric
(zero point 0), one scale per output column (or per tensor with --per-tensor); the activation is
quantized per call by DynamicQuantizeLinear (uint8, asymmetric, over the tensor's range), the
product is MatMulInteger in int32, cast to float and multiplied by activation scale x weight
scale, then the bias is added (Gemm's C, or the Add that follows a MatMul). Each product has its
own DynamicQuantizeLinear and scale Mul, which is the pattern ONNX Runtime's graph optimizer fuses
into one DynamicQuantizeMatMul (MatMulIntegerToFloat first, with the bias when the Add's second
input is the constant). Convolutions stay fp32 (dynamic int8 of convolutions is not what this
pass does; static int8 needs calibration).
"""

import argparse
import json
import os
import sys
import traceback

OPSET = 17  # LayerNormalization as one op; the highest torch 1.13 exports

TORCH_DTYPES = {
    "BOOL": "bool", "UINT8": "uint8", "INT8": "int8", "INT16": "int16", "INT32": "int32",
    "INT64": "int64", "FP16": "float16", "BF16": "bfloat16", "FP32": "float32", "FP64": "float64",
}


def reason_of(error):
    """One line a user can act on: the exception's type and the first line of its message,
    without the exporter's standard plea for a pull request; for an error raised inside the
    TorchScript interpreter, whose first line says only that, its last line (what was raised)."""
    lines = [l.strip() for l in str(error).strip().splitlines() if l.strip()]
    text = lines[0] if lines else ""
    if len(lines) > 1 and "failed in the TorchScript interpreter" in text:
        text = lines[-1]
    for tail in (" Please feel free to request support", " Please open a bug"):
        if tail in text:
            text = text[:text.index(tail)]
    text = text.strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


# ------------------------------------------------------------------ export

def example_inputs(torch, spec):
    gen = torch.Generator().manual_seed(37)
    args = []
    for i in spec["inputs"]:
        shape = [2] + [spec["variable_dim"] if d < 0 else d for d in i["dims"]]
        dtype = getattr(torch, TORCH_DTYPES[i["datatype"]])
        if dtype.is_floating_point:
            args.append(torch.randn(shape, generator=gen).to(dtype))
        else:
            args.append(torch.ones(shape, dtype=dtype))
    return tuple(args)


def output_names(result, spec):
    if isinstance(result, dict):
        return list(result.keys())
    count = len(result) if isinstance(result, (tuple, list)) else 1
    if spec["outputs"]:
        if len(spec["outputs"]) != count:
            raise ValueError(f"the model returns {count} output(s), config.yaml lists "
                             f"{len(spec['outputs'])}")
        return list(spec["outputs"])
    return [f"output{i}" for i in range(count)]


def dynamic_axes(spec, outputs):
    axes = {}
    for n, i in enumerate(spec["inputs"]):
        a = {0: "batch"}
        for k, d in enumerate(i["dims"]):
            if d < 0:
                a[k + 1] = "sequence" if spec["text"] else f"{i['name']}_dim{k + 1}"
        axes[i["name"]] = a
    for o in outputs:
        axes[o] = {0: "batch"}
    return axes


def export(torch, model_pt, spec, path):
    module = torch.jit.load(model_pt, map_location="cpu").eval()
    args = example_inputs(torch, spec)
    with torch.no_grad():
        names = output_names(module(*args), spec)
        axes = dynamic_axes(spec, names)
        torch.onnx.export(module, args, path, input_names=[i["name"] for i in spec["inputs"]],
                          output_names=names, opset_version=OPSET, dynamic_axes=axes,
                          do_constant_folding=True)
    return {"ok": True, "opset": OPSET, "output_names": names}


# ------------------------------------------------------------------ int8

class Int8Rewrite:
    """Rewrites the products with constant weights of one ONNX graph (the top-level graph;
    subgraphs of If and Loop are left as they are)."""

    def __init__(self, onnx, numpy, model, per_tensor):
        self.onnx, self.np, self.model, self.per_tensor = onnx, numpy, model, per_tensor
        self.graph = model.graph
        self.inits = {t.name: t for t in self.graph.initializer}
        self.constants = {}  # output name -> the Constant node's tensor
        for node in self.graph.node:
            if node.op_type == "Constant" and len(node.output) == 1:
                for a in node.attribute:
                    if a.name == "value":
                        self.constants[node.output[0]] = a.t
        self.consumers = {}
        for node in self.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.new_inits = []
        self.quantized = 0
        self.notes = []
        self.used = set()

    def constant(self, name):
        t = self.inits.get(name) or self.constants.get(name)
        if t is None:
            return None
        return self.onnx.numpy_helper.to_array(t)

    def fresh(self, base):
        name = base
        n = 0
        existing = self.used
        while name in existing:
            n += 1
            name = f"{base}_{n}"
        existing.add(name)
        return name

    def weight(self, w, base):
        """int8 weight [K, N] and its scale ([N] per column, or a scalar), as initializers."""
        np = self.np
        w = w.astype(np.float32)
        if self.per_tensor:
            scale = np.array(max(float(np.abs(w).max()), 1e-12) / 127.0, dtype=np.float32)
        else:
            scale = (np.maximum(np.abs(w).max(axis=0), 1e-12) / 127.0).astype(np.float32)
        q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
        qname, sname = self.fresh(base + "_int8"), self.fresh(base + "_scale")
        self.new_inits.append(self.onnx.numpy_helper.from_array(q, qname))
        self.new_inits.append(self.onnx.numpy_helper.from_array(scale, sname))
        return qname, sname

    def product(self, x, w, base, out, bias=None, extra_scale=1.0):
        """Nodes computing out = x @ w (+ bias) through int8."""
        helper, np = self.onnx.helper, self.np
        qname, sname = self.weight(w, base)
        if extra_scale != 1.0:  # Gemm's alpha
            i = [t.name for t in self.new_inits].index(sname)
            s = self.onnx.numpy_helper.to_array(self.new_inits[i]) * np.float32(extra_scale)
            self.new_inits[i] = self.onnx.numpy_helper.from_array(s.astype(np.float32), sname)
        xq, xs, xz = (self.fresh(base + s) for s in ("_x_int8", "_x_scale", "_x_zero"))
        acc, accf, scale = (self.fresh(base + s) for s in ("_int32", "_int32_float", "_scales"))
        nodes = [
            helper.make_node("DynamicQuantizeLinear", [x], [xq, xs, xz], self.fresh(base + "_quant")),
            helper.make_node("MatMulInteger", [xq, qname, xz], [acc], self.fresh(base + "_matmul")),
            helper.make_node("Cast", [acc], [accf], self.fresh(base + "_cast"),
                             to=self.onnx.TensorProto.FLOAT),
            helper.make_node("Mul", [xs, sname], [scale], self.fresh(base + "_scales_mul")),
        ]
        if bias is None:
            nodes.append(helper.make_node("Mul", [accf, scale], [out], self.fresh(base + "_rescale")))
        else:
            mid = self.fresh(base + "_rescaled")
            nodes.append(helper.make_node("Mul", [accf, scale], [mid], self.fresh(base + "_rescale")))
            nodes.append(helper.make_node("Add", [mid, bias], [out], self.fresh(base + "_bias")))
        return nodes

    def rewrite(self):
        for node in self.graph.node:
            self.used.update(node.output)
            self.used.update(node.input)
            self.used.add(node.name)
        self.used.update(self.inits)
        new_nodes = []
        left = {}
        for index, node in enumerate(self.graph.node):
            base = node.name or f"{node.op_type.lower()}_{index}"
            replaced = None
            if node.op_type == "MatMul":
                w = self.constant(node.input[1])
                if w is not None and w.ndim == 2 and w.dtype.kind == "f":
                    replaced = self.product(node.input[0], w, base, node.output[0])
                    self.order_bias_add(node.output[0], w.shape[1])
                else:
                    left["MatMul of two activations"] = left.get("MatMul of two activations", 0) + 1
            elif node.op_type == "Gemm":
                replaced = self.gemm(node, base, left)
            elif node.op_type in ("Conv", "ConvTranspose"):
                left["Conv"] = left.get("Conv", 0) + 1
            if replaced is None:
                new_nodes.append(node)
            else:
                new_nodes.extend(replaced)
                self.quantized += 1
        self.notes = [f"{n} {what}" for what, n in left.items()]
        return new_nodes, sum(left.values())

    def gemm(self, node, base, left):
        attrs = {a.name: self.onnx.helper.get_attribute_value(a) for a in node.attribute}
        w = self.constant(node.input[1])
        if w is None or w.ndim != 2 or w.dtype.kind != "f" or attrs.get("transA", 0):
            left["Gemm of activations or with transA"] = left.get(
                "Gemm of activations or with transA", 0) + 1
            return None
        if attrs.get("transB", 0):
            w = w.T
        bias = None
        if len(node.input) > 2 and node.input[2]:
            c = self.constant(node.input[2])
            beta = float(attrs.get("beta", 1.0))
            if c is None or c.size not in (1, w.shape[1]):
                left["Gemm with a computed C"] = left.get("Gemm with a computed C", 0) + 1
                return None
            c = (c.reshape(-1) * beta).astype(self.np.float32)
            if c.size == 1:
                c = self.np.full((w.shape[1],), c[0], dtype=self.np.float32)
            bias = self.fresh(base + "_bias_value")
            self.new_inits.append(self.onnx.numpy_helper.from_array(c, bias))
        return self.product(node.input[0], w, base, node.output[0], bias,
                            float(attrs.get("alpha", 1.0)))

    def order_bias_add(self, output, columns):
        """torch exports a 3-D Linear as MatMul then Add(bias, product): putting the constant
        second lets ONNX Runtime fold the bias into its fused kernel."""
        users = self.consumers.get(output, [])
        if len(users) != 1 or users[0].op_type != "Add":
            return
        add = users[0]
        if add.input[0] != output:
            other = self.constant(add.input[0])
            if other is not None and other.ndim == 1 and other.size == columns:
                add.input[0], add.input[1] = add.input[1], add.input[0]

    def apply(self):
        new_nodes, left = self.rewrite()
        if self.quantized == 0:
            return 0, left
        still_used = set()
        for node in new_nodes:
            still_used.update(node.input)
        still_used.update(o.name for o in self.graph.output)
        kept = [t for t in self.graph.initializer if t.name in still_used]
        del self.graph.node[:]
        self.graph.node.extend(new_nodes)
        del self.graph.initializer[:]
        self.graph.initializer.extend(kept + self.new_inits)
        # MatMulInteger and DynamicQuantizeLinear are in the default domain from opset 10/11.
        return self.quantized, left


def quantize(onnx_path, path, per_tensor):
    try:
        import numpy
        import onnx
        import onnx.numpy_helper  # noqa: F401
    except ImportError as e:
        return {"ok": False, "reason": f"python3-onnx is not installed ({e}); "
                                       "scripts/setup.sh installs it"}
    model = onnx.load(onnx_path)
    rewrite = Int8Rewrite(onnx, numpy, model, per_tensor)
    quantized, left = rewrite.apply()
    if quantized == 0:
        return {"ok": False, "reason": "no MatMul or Gemm with constant weights to quantize"
                + (f" ({'; '.join(rewrite.notes)})" if rewrite.notes else "")}
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return {"ok": True, "quantized": quantized, "left": left, "notes": rewrite.notes,
            "scheme": "per-tensor" if per_tensor else "per-column"}


# ------------------------------------------------------------------ main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-pt", required=True)
    parser.add_argument("--spec", required=True, help="the config's inputs and outputs (JSON)")
    parser.add_argument("--onnx", required=True, help="where to write the export")
    parser.add_argument("--int8", help="where to write the int8 copy (none: not made)")
    parser.add_argument("--per-tensor", action="store_true", help="one weight scale per tensor")
    parser.add_argument("--result", required=True, help="where to write what happened (JSON)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    spec = json.loads(args.spec)
    result = {}
    try:
        import torch
        torch.set_num_threads(max(1, args.threads))
        result["onnx"] = export(torch, args.model_pt, spec, args.onnx)
    except Exception as e:  # any failure is the candidate's verdict, not this tool's
        result["onnx"] = {"ok": False, "reason": reason_of(e)}
        traceback.print_exc(file=sys.stderr)
    if args.int8:
        if not result["onnx"]["ok"]:
            result["int8"] = {"ok": False, "reason": "no ONNX export to quantize"}
        else:
            try:
                result["int8"] = quantize(args.onnx, args.int8, args.per_tensor)
            except Exception as e:
                result["int8"] = {"ok": False, "reason": reason_of(e)}
                traceback.print_exc(file=sys.stderr)
    with open(args.result, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
