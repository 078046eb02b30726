#!/usr/bin/python3
"""Reference tensors for inferd's image pre-processing (src/pipeline/).

The reference is torchvision's own transform on a PIL image:
    Resize(resize) -> CenterCrop(crop) -> ToTensor() -> Normalize(mean, std)
(PIL bilinear with antialias), with EXIF orientation applied first
(ImageOps.exif_transpose), since inferd honours it.

Sub-commands (run with Debian's /usr/bin/python3, which has torch + torchvision):
  examples   write examples/images/ (sample inputs, from images Debian packages ship)
  fixtures   write tests/fixtures/pipeline/ (small images + expected tensors for the unit tests)
  bench      time PIL + torchvision on the same images (thread CPU time, median of 5),
             to set beside `inferd_preprocess_dump --repeat N`
  compare    run inferd's C++ preprocessing (build-*/src/pipeline/inferd_preprocess_dump)
             on images and print the mean / max absolute difference against torchvision,
             and, with --model, whether the model's top-1 agrees.
"""
import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
from PIL import Image, ImageOps
from torchvision import transforms

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]

SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
GRACE_HOPPER = "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"


def reference_tensor(path, resize=0, crop=0, width=0, height=0, color="rgb", invert=False,
                     mean=None, std=None):
    """torchvision's tensor for one image file, [C, H, W] float32."""
    img = ImageOps.exif_transpose(Image.open(path))
    img = img.convert("L" if color == "grayscale" else "RGB")
    steps = []
    if width and height:
        steps.append(transforms.Resize((height, width)))
    elif resize:
        steps.append(transforms.Resize(resize))
    if crop:
        steps.append(transforms.CenterCrop(crop))
    if invert:
        steps.append(transforms.Lambda(ImageOps.invert))
    steps.append(transforms.ToTensor())
    if mean or std:
        steps.append(transforms.Normalize(mean or [0.0], std or [1.0]))
    t = transforms.Compose(steps)(img)
    if color == "bgr":
        t = t.flip(0)
    return t.contiguous()


# ---------------------------------------------------------------- examples

def cmd_examples(args):
    out = os.path.join(ROOT, "examples", "images")
    os.makedirs(out, exist_ok=True)
    cat = Image.open(os.path.join(SKIMAGE_DATA, "chelsea.png")).convert("RGB")   # 451x300, CC0
    coffee = Image.open(os.path.join(SKIMAGE_DATA, "coffee.png")).convert("RGB")  # 600x400, CC0
    astronaut = Image.open(os.path.join(SKIMAGE_DATA, "astronaut.png")).convert("RGB")  # NASA, PD
    cat.save(os.path.join(out, "cat.jpg"), quality=90)
    cat.save(os.path.join(out, "cat.png"))
    cat.save(os.path.join(out, "cat.webp"), quality=90)
    coffee.save(os.path.join(out, "coffee.jpg"), quality=90)
    astronaut.save(os.path.join(out, "astronaut.jpg"), quality=90)
    shutil.copyfile(GRACE_HOPPER, os.path.join(out, "grace_hopper.jpg"))  # US Navy, PD
    # Stored rotated 90 degrees with EXIF orientation 6 ("rotate 90 CW to view"):
    # viewers and inferd show it upright.
    exif = Image.Exif()
    exif[0x0112] = 6
    cat.transpose(Image.Transpose.ROTATE_90).save(
        os.path.join(out, "cat_exif_rotated.jpg"), quality=90, exif=exif.tobytes())
    print("wrote", sorted(os.listdir(out)))


# ---------------------------------------------------------------- fixtures

FIXTURE_CASES = [
    # name, image, params, max_abs tolerance
    ("rgb_png", "scene_64x48.png", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("odd_png", "scene_61x47.png", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("portrait_png", "portrait_37x70.png", dict(resize=24, crop=20, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("upscale_png", "tiny_20x15.png", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("pad_png", "scene_64x48.png", dict(resize=24, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("exact_size_png", "scene_64x48.png", dict(width=30, height=20), 1e-6),
    ("no_resize_png", "scene_64x48.png", dict(crop=40), 1e-6),
    ("rgb_jpeg", "scene_64x48.jpg", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("exif_jpeg", "exif6_48x64.jpg", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("webp", "scene_64x48_lossless.webp", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("bmp", "scene_64x48.bmp", dict(resize=32, crop=28, mean=IMAGENET_MEAN, std=IMAGENET_STD), 1e-6),
    ("gray_from_rgb", "scene_64x48.png", dict(resize=32, crop=28, color="grayscale", mean=[0.5], std=[0.5]), 1e-6),
    ("digit_invert", "digit_8x8.png", dict(color="grayscale", invert=True), 1e-6),
    ("bgr_png", "scene_64x48.png", dict(resize=32, crop=28, color="bgr"), 1e-6),
    ("gray_jpeg", "scene_64x48.jpg", dict(resize=32, crop=28, color="grayscale"), 1e-6),
    ("rgba_png", "scene_rgba.png", dict(resize=32, crop=28), 1e-6),
    ("palette_png", "scene_palette.png", dict(resize=32, crop=28), 1e-6),
    ("gray_alpha_png", "scene_la.png", dict(resize=32, crop=28), 1e-6),
    ("gray_source_jpeg", "scene_gray.jpg", dict(resize=32, crop=28), 1e-6),
    ("progressive_jpeg", "scene_progressive.jpg", dict(resize=32, crop=28), 1e-6),
    # big enough that only part of the JPEG is decoded (rows and iMCU columns around the crop)
    ("partial_landscape_jpeg", "scene_203x121.jpg", dict(resize=64, crop=28), 1e-6),
    ("partial_portrait_jpeg", "scene_121x203.jpg", dict(resize=64, crop=28), 1e-6),
] + [("exif%d_jpeg" % o, "exif%d_24x18.jpg" % o, dict(resize=12, crop=10), 1e-6) for o in range(1, 9)]


def synthetic_scene(w, h, seed):
    """A photo-like image: a downscaled crop of a real photo plus a little noise."""
    rng = np.random.default_rng(seed)
    src = Image.open(GRACE_HOPPER).convert("RGB")
    left = int(rng.integers(0, src.width // 3))
    top = int(rng.integers(0, src.height // 3))
    crop = src.crop((left, top, left + src.width // 2, top + src.height // 2)).resize((w, h), Image.LANCZOS)
    a = np.asarray(crop).astype(np.int16) + rng.integers(-6, 7, size=(h, w, 3))
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def cmd_fixtures(args):
    out = os.path.join(ROOT, "tests", "fixtures", "pipeline")
    os.makedirs(out, exist_ok=True)
    scene = synthetic_scene(64, 48, 1)
    scene.save(os.path.join(out, "scene_64x48.png"))
    scene.save(os.path.join(out, "scene_64x48.jpg"), quality=92)
    scene.save(os.path.join(out, "scene_64x48_lossless.webp"), lossless=True)
    scene.save(os.path.join(out, "scene_64x48.bmp"))
    rgba = scene.copy()
    rgba.putalpha(Image.fromarray((np.arange(64 * 48).reshape(48, 64) % 256).astype(np.uint8)))
    rgba.save(os.path.join(out, "scene_rgba.png"))
    scene.convert("P", palette=Image.ADAPTIVE).save(os.path.join(out, "scene_palette.png"))
    rgba.convert("LA").save(os.path.join(out, "scene_la.png"))
    scene.convert("L").save(os.path.join(out, "scene_gray.jpg"), quality=92)
    scene.save(os.path.join(out, "scene_progressive.jpg"), quality=92, progressive=True)
    synthetic_scene(61, 47, 2).save(os.path.join(out, "scene_61x47.png"))
    synthetic_scene(203, 121, 7).save(os.path.join(out, "scene_203x121.jpg"), quality=92)
    synthetic_scene(121, 203, 8).save(os.path.join(out, "scene_121x203.jpg"), quality=92)
    synthetic_scene(37, 70, 3).save(os.path.join(out, "portrait_37x70.png"))
    synthetic_scene(20, 15, 4).save(os.path.join(out, "tiny_20x15.png"))
    exif = Image.Exif()
    exif[0x0112] = 6
    synthetic_scene(64, 48, 5).transpose(Image.Transpose.ROTATE_90).save(
        os.path.join(out, "exif6_48x64.jpg"), quality=92, exif=exif.tobytes())
    small = synthetic_scene(24, 18, 6)
    for o in range(1, 9):  # stored so that exif_transpose turns it back upright
        stored = {1: small, 2: small.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
                  3: small.transpose(Image.Transpose.ROTATE_180),
                  4: small.transpose(Image.Transpose.FLIP_TOP_BOTTOM),
                  5: small.transpose(Image.Transpose.TRANSPOSE),
                  6: small.transpose(Image.Transpose.ROTATE_90),
                  7: small.transpose(Image.Transpose.TRANSVERSE),
                  8: small.transpose(Image.Transpose.ROTATE_270)}[o]
        exif = Image.Exif()
        exif[0x0112] = o
        stored.save(os.path.join(out, "exif%d_24x18.jpg" % o), quality=92, exif=exif.tobytes())
    digit = np.zeros((8, 8), np.uint8)
    digit[1:7, 3:5] = 200
    digit[1, 2] = 120
    digit[6, 1:7] = 255
    Image.fromarray(digit, "L").save(os.path.join(out, "digit_8x8.png"))

    lines = ["# name image key=value...  (written by tools/pipeline_reference.py fixtures)"]
    for name, image, params, tol in FIXTURE_CASES:
        t = reference_tensor(os.path.join(out, image), **params)
        t.numpy().astype("<f4").tofile(os.path.join(out, name + ".f32"))
        fields = [name, image, "shape=" + ",".join(str(d) for d in t.shape), "max_abs=%g" % tol]
        for k, v in params.items():
            if isinstance(v, list):
                v = ",".join(repr(float(x)) for x in v)
            elif isinstance(v, bool):
                v = int(v)
            fields.append("%s=%s" % (k, v))
        lines.append(" ".join(fields))
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", len(FIXTURE_CASES), "cases to", out)


# ---------------------------------------------------------------- compare

def find_dump_tool():
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d, "src", "pipeline", "inferd_preprocess_dump")
        if d.startswith("build") and os.access(p, os.X_OK):
            return p
    sys.exit("inferd_preprocess_dump not built (cmake --build BUILD --target inferd_preprocess_dump)")


def cmd_compare(args):
    tool = args.tool or find_dump_tool()
    images = args.images or [os.path.join(ROOT, "examples", "images", f)
                             for f in sorted(os.listdir(os.path.join(ROOT, "examples", "images")))
                             if f.lower().endswith((".jpg", ".jpeg", ".png", ".webp", ".bmp"))]
    model = torch.jit.load(args.model).eval() if args.model else None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in images:
            out = os.path.join(tmp, "t.f32")
            subprocess.run([tool, "--resize", str(args.resize), "--crop", str(args.crop),
                            "--mean", ",".join(map(str, IMAGENET_MEAN)),
                            "--std", ",".join(map(str, IMAGENET_STD)), "--out", out, path], check=True)
            ours = torch.from_numpy(np.fromfile(out, "<f4").reshape(3, args.crop, args.crop))
            ref = reference_tensor(path, resize=args.resize, crop=args.crop, mean=IMAGENET_MEAN, std=IMAGENET_STD)
            diff = (ours - ref).abs()
            row = [os.path.basename(path), float(diff.mean()), float(diff.max()),
                   int((diff > 1e-6).sum())]
            if model is not None:
                with torch.no_grad():
                    lo, lr = model(ours[None]), model(ref[None])
                po, pr = lo.softmax(1), lr.softmax(1)
                row += [int(lo.argmax()), int(lr.argmax()), float((po - pr).abs().max())]
            rows.append(row)
    hdr = "%-24s %12s %12s %10s" % ("image", "mean|diff|", "max|diff|", "n>1e-6")
    if model is not None:
        hdr += " %6s %6s %12s" % ("top1", "ref", "max|dprob|")
    print(hdr)
    ok = True
    for r in rows:
        line = "%-24s %12.3g %12.3g %10d" % tuple(r[:4])
        if model is not None:
            line += " %6d %6d %12.3g" % tuple(r[4:])
            ok &= r[4] == r[5]
        print(line)
    print("overall mean |diff|: %.3g" % (sum(r[1] for r in rows) / len(rows)))
    return 0 if ok else 1


def cmd_bench(args):
    import time
    torch.set_num_threads(1)
    t = transforms.Compose([transforms.Resize(args.resize), transforms.CenterCrop(args.crop), transforms.ToTensor(),
                            transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])
    images = args.images or [os.path.join(ROOT, "examples", "images", f)
                             for f in sorted(os.listdir(os.path.join(ROOT, "examples", "images")))]
    for path in images:
        data = open(path, "rb").read()
        cpu = []
        for _ in range(5):
            start = time.thread_time()
            for _ in range(args.repeat):
                t(ImageOps.exif_transpose(Image.open(io.BytesIO(data))).convert("RGB"))
            cpu.append((time.thread_time() - start) / args.repeat * 1e6)
        print("%s: %.0f us CPU per image (PIL + torchvision, median of 5)" % (path, sorted(cpu)[2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("examples")
    sub.add_parser("fixtures")
    c = sub.add_parser("compare")
    c.add_argument("images", nargs="*")
    c.add_argument("--tool")
    c.add_argument("--resize", type=int, default=256)
    c.add_argument("--crop", type=int, default=224)
    c.add_argument("--model", help="TorchScript classifier to compare top-1 with")
    b = sub.add_parser("bench")
    b.add_argument("images", nargs="*")
    b.add_argument("--resize", type=int, default=256)
    b.add_argument("--crop", type=int, default=224)
    b.add_argument("--repeat", type=int, default=100)
    args = ap.parse_args()
    return {"examples": cmd_examples, "fixtures": cmd_fixtures, "compare": cmd_compare,
            "bench": cmd_bench}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main() or 0)
