#!/usr/bin/python3
"""Seed corpora for the fuzz targets of tests/fuzz/ (tests/fuzz/<target>/corpus/seed-*).

Each target's input layout is described at the top of its tests/fuzz/*_fuzz.cc.
Seeds are small valid (and a few nearly valid) inputs from which libFuzzer
mutates; the images come from tests/fixtures/ (tools/make_unusual_images.py,
tools/pipeline_reference.py fixtures). Re-running rewrites the seed-* files only
(inputs found by fuzzing, without that prefix, are left alone).

  /usr/bin/python3 tools/make_fuzz_seeds.py
"""
import base64
import glob
import json
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "tests", "fuzz")
IMAGES = sorted(p for p in glob.glob(os.path.join(ROOT, "tests", "fixtures", "images", "*"))
                if not p.endswith(".rgb"))
PIPELINE = os.path.join(ROOT, "tests", "fixtures", "pipeline")
SMALL_FIXTURES = [os.path.join(PIPELINE, n) for n in (
    "scene_64x48.jpg", "scene_64x48.png", "scene_64x48.bmp", "scene_64x48_lossless.webp",
    "exif6_24x18.jpg", "digit_8x8.png", "scene_progressive.jpg", "scene_gray.jpg")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def v2(inputs, **top):
    doc = dict(top)
    doc["inputs"] = inputs
    return json.dumps(doc).encode()


def bytes_elements(items):
    return b"".join(struct.pack("<I", len(b)) + b for b in items)


def v2_json_seeds():
    return [
        v2([{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1.5, -2, 3e10, 0]}]),
        v2([{"name": "x", "shape": [2, 2], "datatype": "INT64",
             "data": [[1, -9223372036854775808], [9223372036854775807, 0]]}],
           id="r1", parameters={"priority": 2, "timeout": 100000}),
        v2([{"name": "a", "shape": [1, 3], "datatype": "UINT8", "data": [0, 255, 7]},
            {"name": "b", "shape": [1, 2], "datatype": "BOOL", "data": [True, False]}],
           outputs=[{"name": "a", "parameters": {"binary_data": True}}, {"name": "b"}]),
        v2([{"name": "t", "shape": [1, 2], "datatype": "BYTES", "data": ["hello", "w\u00f6rld"]}]),
        v2([{"name": "h", "shape": [1, 3], "datatype": "FP16", "data": [0.5, "NaN", "-Infinity"]},
            {"name": "g", "shape": [1, 1], "datatype": "BF16", "data": [1e38]},
            {"name": "d", "shape": [1, 1], "datatype": "FP64", "data": ["Infinity"]}]),
        v2([{"name": "i", "shape": [1, 4], "datatype": "INT8", "data": [-128, 127, 0, 1]},
            {"name": "j", "shape": [1, 2], "datatype": "INT16", "data": [-32768, 32767]},
            {"name": "k", "shape": [1, 2], "datatype": "INT32", "data": [2.0, -2147483648]}]),
        v2([{"name": "z", "shape": [1, 0, 5], "datatype": "FP32", "data": []}]),
        v2([{"name": "x", "shape": [3], "datatype": "FP32", "data": [[1], [2], [3]]}],
           parameters={"binary_data_output": True}),
    ]


def v2_binary_seeds():
    seeds = []
    fp = struct.pack("<4f", 1, 2, 3, 4)
    head = v2([{"name": "x", "shape": [1, 4], "datatype": "FP32",
                "parameters": {"binary_data_size": len(fp)}}])
    seeds.append(b"%d\n" % len(head) + head + fp)
    el = bytes_elements([b"cat", b"", b"\xff\x00"])
    head = v2([{"name": "s", "shape": [1, 3], "datatype": "BYTES",
                "parameters": {"binary_data_size": len(el)}},
               {"name": "y", "shape": [1, 2], "datatype": "INT64", "data": [1, 2]}],
              outputs=[{"name": "s", "parameters": {"binary_data": True}}])
    seeds.append(b"%d\n" % len(head) + head + el)
    a, b = struct.pack("<3d", 1, 2, 3), bytes([1, 0, 1])
    head = v2([{"name": "a", "shape": [1, 3], "datatype": "FP64",
                "parameters": {"binary_data_size": len(a)}},
               {"name": "b", "shape": [1, 3], "datatype": "BOOL",
                "parameters": {"binary_data_size": len(b)}}])
    seeds.append(b"%d\n" % len(head) + head + a + b)
    return seeds


def torchserve_seeds():
    # First byte: config index (0 one FP32 input, 1 two inputs, 2 image [1,8,8],
    # 3.. one per datatype BOOL UINT8 INT8 INT16 INT32 INT64 FP16 BF16 FP64 BYTES).
    return [
        b"\x00[1.0, 2.0, 3.0]",
        b"\x00[[1.0, 2.0], [3.0, 4.0]]",
        b'\x00{"data": [5, 6]}',
        b'\x01{"a": [[1, 2, 3, 4]], "b": [7]}',
        b"\x02" + json.dumps([[[0.5] * 8] * 8]).encode(),
        b"\x03[[true, false]]",
        b"\x08[[2147483647, -1]]",
        b'\x09{"body": [[9223372036854775807]]}',
        b'\x0a[["NaN", 1.5]]',
        b'\x0c[["a", "b\\u0000"]]',
    ]


def payload_seeds():
    boundary = b"XyZ"
    jpeg = read(SMALL_FIXTURES[0])[:300]
    multipart = (b"--XyZ\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nabc\r\n"
                 b"--XyZ\r\nContent-Disposition: form-data; name=\"data\"; filename=\"a.jpg\"\r\n"
                 b"Content-Type: image/jpeg\r\n\r\n" + jpeg + b"\r\n--XyZ--\r\n")
    return [
        b"multipart/form-data; boundary=" + boundary + b"\n" + multipart,
        b'multipart/form-data; boundary="XyZ"\n--XyZ\r\n\r\nbare part\r\n--XyZ--',
        b"application/json\n" + json.dumps({"b64": base64.b64encode(jpeg).decode()}).encode(),
        b"application/json\n" + json.dumps({"data": base64.urlsafe_b64encode(b"hi?>").decode()
                                            .rstrip("=")}).encode(),
        b'application/json; charset=utf-8\n{"text": "Hello, world"}',
        b"image/jpeg\n" + jpeg,
        b"text/plain\nplain text",
    ]


def http_seeds():
    return [
        b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n",
        b"POST /predictions/resnet18 HTTP/1.1\r\nHost: x\r\nContent-Type: image/jpeg\r\n"
        b"Content-Length: 4\r\nX-Request-Timeout-Ms: 100\r\n\r\n\xff\xd8\xff\xe0",
        b"POST /v2/models/m/versions/2/infer?x=1&y=%20z+w HTTP/1.1\r\nHost: x\r\n"
        b"Inference-Header-Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"4\r\n{}ab\r\n0\r\n\r\n",
        b"PUT /models/a%2Fb%00c HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n",
        b"DELETE /models/m/1 HTTP/1.1\r\nConnection: close\r\n\r\n",
        b"GET /v2/models/%FF%FE/ready HTTP/1.1\r\n\r\n",
        b"POST /models?url=x&initial_workers=1 HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    ]


def text_seeds():
    # First byte: bit 0 set = truncate long texts, clear = refuse them. 0x1E separates items.
    return [
        b"\x01Hello, world! How are you?",
        b"\x00short",
        b"\x01caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80 emoji",
        b"\x01one\x1etwo items\x1ethree",
        b"\x00" + b"word " * 40,
        b"\x01\x00\xef\xbf\xbd control\x07chars\ttab",
        b"\x01unbelievably antidisestablishmentarianism " + b"x" * 120,
        b"\x01",
    ]


def config_seeds():
    seeds = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "model-store", "*", "config.yaml"))):
        seeds.append(read(path))
    seeds.append(b"backend: torchscript\nmax_batch_size: 4\ninputs:\n"
                 b"  - {name: input_ids, datatype: INT64, shape: [-1], pad_value: 0}\n"
                 b"  - {name: attention_mask, datatype: INT64, shape: [-1]}\n"
                 b"preprocess: {kind: text, tokenizer: wordpiece, vocab: vocab.txt, max_length: 64,"
                 b" truncation: false}\npostprocess: {kind: sigmoid, threshold: 0.25}\n")
    seeds.append(b"inputs: [{name: x, datatype: FP32, shape: [3, 8, 8]}]\n"
                 b"instances: {count: 2, threads: 1}\nmax_queue_size: 2147483648\n"
                 b"preprocess: {kind: image, width: 8, height: 8, color: bgr, invert: true,"
                 b" scale: 0.5, max_pixels: 1000}\n")
    return seeds


def images_for(ext):
    return [read(p) for p in IMAGES + SMALL_FIXTURES if p.endswith(ext)]


def write(target, seeds):
    d = os.path.join(FUZZ, target, "corpus")
    os.makedirs(d, exist_ok=True)
    for old in glob.glob(os.path.join(d, "seed-*")):
        os.remove(old)
    for i, s in enumerate(seeds):
        with open(os.path.join(d, "seed-%02d" % i), "wb") as f:
            f.write(s)
    return len(seeds)


def main():
    all_images = [read(p) for p in IMAGES + SMALL_FIXTURES]
    jpegs = images_for(".jpg")
    targets = {
        "v2_json": v2_json_seeds(),
        "v2_binary": v2_binary_seeds(),
        "torchserve_json": torchserve_seeds(),
        "http_head": http_seeds(),
        "payload": payload_seeds(),
        "image_probe": all_images,
        "decode_jpeg": jpegs,
        "decode_png": images_for(".png"),
        "decode_bmp": images_for(".bmp"),
        "decode_webp": images_for(".webp"),
        # First byte: the transform (0 resize+crop, 1 exact size BF16, 2 grayscale).
        "image_preprocess": [bytes([i % 3]) + img for i, img in enumerate(all_images)],
        "wordpiece": text_seeds(),
        "sentencepiece": text_seeds(),
        "config_yaml": config_seeds(),
    }
    for target, seeds in targets.items():
        print(f"{target}: {write(target, seeds)} seeds")


if __name__ == "__main__":
    main()
