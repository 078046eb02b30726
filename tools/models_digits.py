"""digits_cnn: a small CNN trained on scikit-learn's 8x8 digits, for make_models.py.

The exact input transform, which the server's image pipeline reproduces:
sklearn pixels p in 0..16 are stored as 8-bit grayscale PNG values
v = round(p * 255 / 16) (white strokes on black), and the model is trained on
v / 255 exactly, laid out [1, 8, 8] (CHW). So `preprocess: {kind: image,
color: grayscale, width: 8, height: 8, scale: 1/255}` with no mean/std, fed the
PNGs under samples/, gives the training inputs bit for bit (up to float
rounding of the division).
"""

import json
import os

SEED = 0
SPLIT_SEED = 42
TEST_FRACTION = 0.25
EPOCHS = 40


def load_split():
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    pixels = np.round(digits.data.reshape(-1, 8, 8) * 255.0 / 16.0).astype(np.uint8)
    labels = digits.target.astype(np.int64)
    train_idx, test_idx = train_test_split(
        np.arange(len(labels)), test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=labels)
    return pixels, labels, np.sort(train_idx), np.sort(test_idx)


def make_net():
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                      # 32 x 4 x 4
        nn.Flatten(),
        nn.Linear(32 * 4 * 4, 64), nn.ReLU(),
        nn.Linear(64, 10),
    )


def to_input(pixels):
    import torch

    return torch.from_numpy(pixels.astype("float32") / 255.0).unsqueeze(1)  # N x 1 x 8 x 8


def build(model_dir, log):
    import numpy as np
    import torch
    from PIL import Image

    # One thread: the net is tiny, and a team of spinning OpenMP threads on a
    # busy machine made training 20x slower (60 s instead of 3 s).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return train_and_save(model_dir, log)
    finally:
        torch.set_num_threads(threads)


def train_and_save(model_dir, log):
    import numpy as np
    import torch
    from PIL import Image

    torch.manual_seed(SEED)
    pixels, labels, train_idx, test_idx = load_split()
    x_train, y_train = to_input(pixels[train_idx]), torch.from_numpy(labels[train_idx])
    x_test, y_test = to_input(pixels[test_idx]), torch.from_numpy(labels[test_idx])

    net = make_net()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, EPOCHS)
    gen = torch.Generator().manual_seed(SEED)
    for _ in range(EPOCHS):
        net.train()
        order = torch.randperm(len(x_train), generator=gen)
        for i in range(0, len(order), 64):
            batch = order[i:i + 64]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(x_train[batch]), y_train[batch])
            loss.backward()
            opt.step()
        sched.step()
    net.eval()
    with torch.no_grad():
        logits = net(x_test)
    predictions = logits.argmax(1)
    accuracy = (predictions == y_test).float().mean().item()
    log(f"digits_cnn: test accuracy {accuracy:.4f} on {len(test_idx)} held-out images")

    version_dir = os.path.join(model_dir, "1")
    os.makedirs(version_dir, exist_ok=True)
    traced = torch.jit.trace(net, x_test[:1])
    traced.save(os.path.join(version_dir, "model.pt"))

    with open(os.path.join(model_dir, "accuracy.json"), "w") as f:
        json.dump({"test_accuracy": round(accuracy, 6), "test_size": int(len(test_idx)),
                   "train_size": int(len(train_idx)), "split_seed": SPLIT_SEED,
                   "train_seed": SEED, "epochs": EPOCHS,
                   "input": "PNG value / 255, [1, 8, 8]"}, f, indent=1)
        f.write("\n")

    samples_dir = os.path.join(model_dir, "samples")
    os.makedirs(samples_dir, exist_ok=True)
    files = []
    for n, idx in enumerate(test_idx):
        name = f"{n:04d}_{labels[idx]}.png"
        Image.fromarray(pixels[idx], mode="L").save(os.path.join(samples_dir, name))
        files.append(name)
    test_set = {
        "description": "digits_cnn held-out test set: 8x8 grayscale PNG values (0..255), "
                       "their labels, and the logits PyTorch computes for PNG value / 255",
        "files": files,
        "labels": [int(labels[i]) for i in test_idx],
        "images": [pixels[i].reshape(-1).tolist() for i in test_idx],
        "predictions": [int(p) for p in predictions],
        "logits": [[round(float(v), 5) for v in row] for row in logits],
        "test_accuracy": round(accuracy, 6),
    }
    with open(os.path.join(model_dir, "test_set.json"), "w") as f:
        json.dump(test_set, f)
    np.savez(os.path.join(model_dir, "test_set.npz"), images=pixels[test_idx],
             labels=labels[test_idx], logits=logits.numpy())
    return accuracy
