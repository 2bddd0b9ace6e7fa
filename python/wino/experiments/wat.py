"""Winograd-aware INT8 training on Fashion-MNIST (docs/wat.md): a ResNet-20-style network trained
in FP32, then quantized to INT8 by direct quantization-aware training (QConv) and by wino's INT8
Winograd F(4,3) and F(6,3), post-training (clips at the largest value, or at the 99.9th
percentile) and with Winograd-aware training of the clipping factors (WAT); the WAT models are
deployed on wino's INT8 engines and must score what their emulation scores.

    python -m wino.experiments.wat --out results.json --plot results.png
"""
import argparse
import copy
import csv
import gzip
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import wino
from wino.torch.deploy import deploy
from wino.torch.wat import QConv2d, WinogradQuantConv2d, calibrate

DATA_DIR = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # of Fashion-MNIST's training images
TILES = (4, 6)


def load_split(data_dir, split):
    """Images (N x 1 x 28 x 28 float32, normalized) and labels (int64) of 'train' or 't10k'."""
    with gzip.open(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(images.astype(np.float32)) / 255.0 - MEAN) / STD
    return x, torch.from_numpy(labels.astype(np.int64))


def augment(x):
    """Random crops (2-pixel zero padding) and horizontal flips, on x's device."""
    n, _, h, w = x.shape
    xp = F.pad(x, (2, 2, 2, 2))
    i = torch.randint(0, 5, (n, 1, 1), device=x.device)
    j = torch.randint(0, 5, (n, 1, 1), device=x.device)
    rows = i + torch.arange(h, device=x.device).view(1, h, 1)
    cols = j + torch.arange(w, device=x.device).view(1, 1, w)
    out = xp[torch.arange(n, device=x.device).view(n, 1, 1), 0, rows, cols].unsqueeze(1)
    flip = torch.rand(n, device=x.device) < 0.5
    return torch.where(flip.view(n, 1, 1, 1), out.flip(-1), out)


class ConvBN(nn.Module):
    """The FP32 unit: a convolution without bias, batch norm, and optionally ReLU."""

    def __init__(self, cin, cout, kernel_size=3, stride=1, relu=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel_size, stride, kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = relu

    def forward(self, x):
        y = self.bn(self.conv(x))
        return torch.relu(y) if self.relu else y


class Block(nn.Module):
    """ResNet basic block; the shortcut of a downsampling block subsamples and pads channels
    with zeros (option A of He et al., as ResNet-20 on CIFAR-10)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = ConvBN(cin, cout, stride=stride, relu=True)
        self.conv2 = ConvBN(cout, cout, relu=False)
        self.stride, self.pad = stride, (cout - cin) // 2

    def forward(self, x):
        shortcut = x
        if self.stride != 1 or self.pad:
            shortcut = F.pad(x[:, :, ::self.stride, ::self.stride],
                             (0, 0, 0, 0, self.pad, self.pad))
        return torch.relu(self.conv2(self.conv1(x)) + shortcut)


class ResNet20(nn.Module):
    """3 stages of 3 basic blocks, 16/32/64 channels, on 1 x 28 x 28 images: 19 3 x 3
    convolutions (17 with stride 1, 2 with stride 2), global pooling, a linear classifier."""

    def __init__(self, classes=10, blocks=3):
        super().__init__()
        self.stem = ConvBN(1, 16)
        layers, cin = [], 16
        for stage, cout in enumerate((16, 32, 64)):
            for b in range(blocks):
                layers.append(Block(cin, cout, 2 if stage and not b else 1))
                cin = cout
        self.blocks = nn.Sequential(*layers)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


def fold(unit):
    """The FP32 unit's convolution with its batch norm folded in: weight and bias."""
    bn = unit.bn
    k = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    return unit.conv.weight * k.view(-1, 1, 1, 1), bn.bias - bn.running_mean * k


@torch.no_grad()
def qconv_model(model):
    """A copy of the FP32 model with every ConvBN folded into a QConv2d (direct INT8), the ReLU
    fused where the unit has one."""
    model = copy.deepcopy(model)
    for parent in list(model.modules()):
        for name, unit in list(parent.named_children()):
            if not isinstance(unit, ConvBN):
                continue
            conv = unit.conv
            layer = QConv2d(conv.in_channels, conv.out_channels, conv.kernel_size[0],
                            conv.stride[0], conv.padding[0], relu=unit.relu)
            w, b = fold(unit)
            layer.weight.copy_(w)
            layer.bias.copy_(b)
            setattr(parent, name, layer.to(conv.weight.device))
    return model


@torch.no_grad()
def winograd_model(model, tile_m, per_channel=False):
    """A copy of the QConv model in which every stride-1 3 x 3 QConv2d is a WinogradQuantConv2d
    F(tile_m, 3) with its weights and bias (the paper's WinoQConv: Winograd applied to the
    QConv checkpoint); the strided ones stay direct. calibrate() sets the clips."""
    model = copy.deepcopy(model)
    for parent in list(model.modules()):
        for name, q in list(parent.named_children()):
            if isinstance(q, QConv2d) and q.stride == 1 and q.kernel_size == 3:
                layer = WinogradQuantConv2d(q.in_channels, q.out_channels, tile_m=tile_m,
                                            relu=q.relu, per_channel=per_channel)
                layer.weight.copy_(q.weight)
                layer.bias.copy_(q.bias)
                setattr(parent, name, layer.to(q.weight.device))
    return model


def conv_shapes(model, device):
    """(C_in, C_out, H_out, W_out, stride) of every 3 x 3 convolution of the FP32 model."""
    shapes, hooks = [], []
    for m in model.modules():
        if isinstance(m, nn.Conv2d) and m.kernel_size == (3, 3):
            hooks.append(m.register_forward_hook(lambda mod, i, o: shapes.append(
                (mod.in_channels, mod.out_channels, o.shape[2], o.shape[3], mod.stride[0]))))
    with torch.no_grad():
        model.eval()(torch.zeros(1, 1, 28, 28, device=device))
    for h in hooks:
        h.remove()
    return shapes


def mac_savings(shapes, tile_m):
    """Direct MACs over the MACs with F(tile_m, 3) on the stride-1 layers (the paper's eq. 1
    and 6; the strided layers stay direct): for all 3 x 3 layers and for the Winograd ones."""
    direct = wino_all = direct_s1 = wino_s1 = 0
    a = tile_m + 2
    for cin, cout, h, w, stride in shapes:
        d = h * w * cout * 9 * cin
        direct += d
        if stride == 1:
            wm = math.ceil(h / tile_m) * a * math.ceil(w / tile_m) * a * cout * cin
            direct_s1, wino_s1, wino_all = direct_s1 + d, wino_s1 + wm, wino_all + wm
        else:
            wino_all += d
    return direct / wino_all, direct_s1 / wino_s1


def batches(x, y, size, shuffle=False, aug=False):
    order = torch.randperm(len(x), device=x.device) if shuffle else torch.arange(len(x),
                                                                               device=x.device)
    for i in range(0, len(x), size):
        idx = order[i:i + size]
        xb = x[idx]
        yield (augment(xb) if aug else xb), y[idx]


def train(model, data, epochs, batch_size, optimizer, log, what):
    """Epochs of cross-entropy training with a cosine learning rate (to 0)."""
    x, y = data
    steps = epochs * math.ceil(len(x) / batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps)))
    model.train()
    for epoch in range(epochs):
        t0, total, seen = time.time(), torch.zeros((), device=x.device), 0
        for xb, yb in batches(x, y, batch_size, shuffle=True, aug=True):
            loss = F.cross_entropy(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            sched.step()
            total, seen = total + loss.detach() * len(xb), seen + len(xb)
        log(f"  {what} epoch {epoch + 1}/{epochs}: loss {float(total) / max(seen, 1):.4f} "
            f"({time.time() - t0:.1f} s)")


CLIPS = ("alpha_ta", "alpha_tw", "alpha_w", "clip")


def finetune_optimizer(model, lr, clip_lr):
    """Adam without weight decay (the paper uses no L2 for WAT): the trainable parameters at lr,
    each clipping factor at clip_lr times its calibrated magnitude (they span 1e-2 to 1e2)."""
    clips, weights = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.rsplit(".", 1)[-1] in CLIPS:
            clips.append({"params": [p], "lr": clip_lr * float(p.detach().abs().mean())})
        else:
            weights.append(p)
    fused = next(model.parameters()).is_cuda  # one kernel per group instead of a dozen
    return torch.optim.Adam([{"params": weights, "lr": lr}] + clips, fused=fused or None)


def freeze_weights(model, frozen=True):
    """The paper's post-training calibration trains the clipping factors and the batch-norm
    parameters (here: the biases they are folded into) of the quantized layers, with every
    weight fixed; frozen=False makes everything trainable again."""
    for unit in model.modules():
        for name, p in unit.named_parameters(recurse=False):
            quantized = isinstance(unit, (QConv2d, WinogradQuantConv2d))
            p.requires_grad_(not frozen or name in CLIPS or (quantized and name == "bias"))
    return model


@torch.no_grad()
def evaluate(model, data, batch_size):
    """Top-1 accuracy (%) and the logits."""
    model.eval()
    x, y = data
    logits = torch.cat([model(xb) for xb, _ in batches(x, y, batch_size)])
    return 100.0 * float((logits.argmax(1) == y).float().mean()), logits


def _max_int32_bound(model):
    bounds = [m.int32_bound() for m in model.modules() if isinstance(m, WinogradQuantConv2d)]
    return max(bounds) if bounds else 0


def run_seed(seed, args, train_data, test_data, calib, device, log):
    """Every configuration for one seed: {config: accuracy}, deployment records."""
    torch.manual_seed(seed)
    acc, deployments, bounds = {}, [], {}
    t0 = time.time()
    fp32 = ResNet20().to(device)
    opt = torch.optim.SGD(fp32.parameters(), lr=args.lr, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    train(fp32, train_data, args.epochs, args.batch_size, opt, log, "fp32")
    acc["fp32"] = evaluate(fp32, test_data, args.eval_batch_size)[0]
    log(f"  fp32: {acc['fp32']:.2f}% ({time.time() - t0:.1f} s)")

    def finetune(model, what, epochs=args.finetune_epochs):
        train(model, train_data, epochs, args.batch_size,
              finetune_optimizer(model, args.finetune_lr, args.clip_lr), log, what)
        return model

    t0 = time.time()
    qconv = finetune(calibrate(qconv_model(fp32), calib), "qconv")
    acc["qconv"] = evaluate(qconv, test_data, args.eval_batch_size)[0]
    log(f"  qconv: {acc['qconv']:.2f}% ({time.time() - t0:.1f} s)")
    def record(model, key, t0):
        acc[key], logits = evaluate(model, test_data, args.eval_batch_size)
        bounds[key] = _max_int32_bound(model)
        log(f"  {key}: {acc[key]:.2f}% ({time.time() - t0:.1f} s)")
        return logits

    for m in args.tiles:
        for name, pct in (("ptq-max", 100.0), ("ptq-pct", args.percentile)):
            t0 = time.time()
            model = calibrate(winograd_model(qconv, m, args.per_channel), calib, percentile=pct)
            record(model, f"F{m}-{name}", t0)
        # the paper's post-training clipping: from the percentiles, the clips and biases
        # trained with the weights fixed
        t0 = time.time()
        model = freeze_weights(calibrate(winograd_model(qconv, m, args.per_channel), calib))
        model = freeze_weights(finetune(model, f"F({m},3) clip calibration", args.clip_epochs),
                               False)
        record(model, f"F{m}-ptq-clip", t0)
        t0 = time.time()
        model = finetune(model, f"F({m},3) WAT")
        logits = record(model, f"F{m}-wat", t0)
        deployments += deploy_and_check(model, m, acc[f"F{m}-wat"], logits, test_data, args,
                                         log)
    return acc, deployments, bounds


def deploy_on(model, device, tile_m, emulated_acc, emulated_logits, test_data, args, log):
    """The WAT model on wino's INT8 engine of device: its accuracy and whether its logits equal
    the emulation's bit for bit, or why the engine refused it."""
    t0 = time.time()
    record = {"tile": tile_m, "emulated_acc": emulated_acc, "device": device}
    x, y = test_data
    try:
        here = (x.to(device), y.to(device))
        deployed = deploy(model.to(device), here[0][:1])
        acc, logits = evaluate(deployed, here, args.eval_batch_size)
    except wino.WinoError as e:
        record["refused"] = [f"{device}: {e}"]
        log(f"  F({tile_m},3) WAT deployment on {device} refused: {e}")
        return record
    finally:
        model.to(x.device)
    same_acc, same = emulated_acc, emulated_logits.to(device)
    if torch.device(device) != x.device:
        # the emulation on the engine's device: the float layers between the integer ones
        # (residual adds, pooling, the classifier) round differently on another device
        same_acc, same = evaluate(copy.deepcopy(model).to(device), here, args.eval_batch_size)
    record.update(emulated_acc=same_acc, deployed_acc=acc,
                  identical_logits=bool(torch.equal(logits, same)), seconds=time.time() - t0)
    log(f"  F({tile_m},3) WAT deployed on wino INT8 ({device}): {acc:.2f}% "
        f"(emulated there {same_acc:.2f}%, logits identical: {record['identical_logits']})")
    return record


def deploy_and_check(model, tile_m, emulated_acc, emulated_logits, test_data, args, log):
    """The WAT model deployed on each of --deploy-device (by default the training device), and
    on the CPU where a device's engine refuses it: a record per deployment."""
    devices = args.deploy_device or [str(test_data[0].device)]
    records = []
    for device in devices:
        records.append(deploy_on(model, device, tile_m, emulated_acc, emulated_logits,
                                 test_data, args, log))
        if "refused" in records[-1] and device != "cpu" and "cpu" not in devices:
            records.append(deploy_on(model, "cpu", tile_m, emulated_acc, emulated_logits,
                                     test_data, args, log))
    return records


CONFIGS = [  # key, method, tile, clipping
    ("fp32", "FP32", "-", "-"),
    ("qconv", "INT8 direct QAT", "-", "PACT (trained)"),
] + [(f"F{m}-{k}", f"INT8 Winograd {how}", f"F({m},3)", clip)
     for m in TILES for k, how, clip in (
         ("ptq-max", "post-training", "none (max)"),
         ("ptq-pct", "post-training", "99.9th percentile"),
         ("ptq-clip", "post-training", "calibrated"),
         ("wat", "WAT", "trained"))]


def summarize(runs, shapes):
    rows = []
    for key, method, tile, clip in CONFIGS:
        if any(key not in r["acc"] for r in runs):  # a tile left out (--tiles)
            continue
        values = [r["acc"][key] for r in runs]
        m = int(tile[2]) if tile != "-" else None
        rows.append({"config": key, "method": method, "tile": tile, "clipping": clip,
                     "mac_saving": round(mac_savings(shapes, m)[0], 3) if m else 1.0,
                     "mean": statistics.mean(values),
                     "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                     "seeds": values})
    return rows


def print_table(rows, deployments, out=sys.stdout):
    n = len(rows[0]["seeds"])
    print(f"\n{'method':<28} {'tile':<7} {'Winograd clipping':<18} {'MAC saving':>10}  "
          f"top-1 % (mean +- std, {n} seed{'s' if n > 1 else ''})", file=out)
    for r in rows:
        print(f"{r['method']:<28} {r['tile']:<7} {r['clipping']:<18} {r['mac_saving']:>9.2f}x"
              f"  {r['mean']:6.2f} +- {r['std']:.2f}", file=out)
    for d in deployments:
        if "deployed_acc" in d:
            print(f"{'  deployed on wino INT8':<28} F({d['tile']},3) {d['device']:<18} "
                  f"{'':>10}  {d['deployed_acc']:6.2f} (emulated {d['emulated_acc']:.2f}, "
                  f"logits identical: {d['identical_logits']})", file=out)
        else:
            print(f"  F({d['tile']},3) WAT not deployed: {'; '.join(d['refused'])}", file=out)


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        n = len(rows[0]["seeds"])
        w.writerow(["config", "method", "tile", "clipping", "mac_saving", "top1_mean",
                    "top1_std"] + [f"top1_seed{i}" for i in range(n)])
        for r in rows:
            w.writerow([r["config"], r["method"], r["tile"], r["clipping"], r["mac_saving"],
                        f"{r['mean']:.2f}", f"{r['std']:.2f}"] + [f"{v:.2f}" for v in r["seeds"]])


def plot(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path}")
        return
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = [f"{r['method']}\n{r['tile']} {r['clipping']}".replace(" - -", "") for r in rows]
    ax.bar(range(len(rows)), [r["mean"] for r in rows], yerr=[r["std"] for r in rows],
           capsize=3, color=["#777" if r["tile"] == "-" else "#4a7" if "WAT" in r["method"]
                             else "#c84" for r in rows])
    ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("top-1 accuracy (%)")
    low = min(r["mean"] - r["std"] for r in rows)
    ax.set_ylim(max(0.0, low - 5), 100)
    ax.set_title("ResNet-20 on Fashion-MNIST: INT8 Winograd with and without WAT")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m wino.experiments.wat", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=4, help="FP32 training epochs (default 4)")
    p.add_argument("--clip-epochs", type=int, default=1,
                   help="epochs of the post-training clip calibration (clips and biases "
                        "trained, weights fixed; default 1)")
    p.add_argument("--finetune-epochs", type=int, default=4,
                   help="QAT / WAT fine-tuning epochs (default 4)")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--eval-batch-size", type=int, default=1000)
    p.add_argument("--lr", type=float, default=0.1, help="FP32 SGD learning rate")
    p.add_argument("--finetune-lr", type=float, default=1e-3,
                   help="fine-tuning Adam rate (default 1e-3; docs/wat.md compares 1e-4 and 3e-4)")
    p.add_argument("--clip-lr", type=float, default=1e-3,
                   help="clipping factors' Adam rate, relative to their calibrated values")
    p.add_argument("--percentile", type=float, default=99.9,
                   help="calibration percentile of the clipped configurations (default 99.9)")
    p.add_argument("--tiles", type=int, nargs="+", choices=TILES, default=list(TILES),
                   help="the Winograd tiles F(m,3) to quantize to (default 4 6)")
    p.add_argument("--per-channel", action="store_true",
                   help="one alpha_tw per output channel (default: one per layer, the paper's)")
    p.add_argument("--calib-images", type=int, default=512,
                   help="training images the calibration sees (default 512)")
    p.add_argument("--seeds", type=int, default=3, help="how many seeds (default 3)")
    p.add_argument("--first-seed", type=int, default=0,
                   help="the first seed (default 0): seeds first .. first + N - 1")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--deploy-device", nargs="+", default=None, metavar="DEVICE",
                   help="where the deployed model runs, each in turn (e.g. cpu cuda; "
                        "default: --device)")
    p.add_argument("--limit", type=int, default=0,
                   help="train on the first N training images and test on the first N test "
                        "images (a quick check); 0: all")
    p.add_argument("--data-dir", default=DATA_DIR)
    p.add_argument("--out", default=None, help="results JSON (and a CSV beside it)")
    p.add_argument("--plot", default=None, help="bar chart PNG (needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="print only the table")
    p.add_argument("--merge", nargs="+", metavar="JSON",
                   help="no training: the runs of these --out files as one table (with --out "
                        "and --plot)")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error("--seeds must be at least 1")
    for i, d in enumerate(args.deploy_device or []):
        try:
            wanted = torch.device(d)
        except RuntimeError:
            p.error(f"--deploy-device: {d!r} is not a device")
        if wanted.type not in ("cpu", "cuda") or (wanted.type == "cuda" and
                                                   not torch.cuda.is_available()):
            p.error(f"--deploy-device: no wino INT8 engine on {d!r} here (cpu, or cuda with a GPU)")
        if wanted.type == "cuda" and wanted.index is None:  # as the training tensors name it
            wanted = torch.device("cuda", torch.cuda.current_device())
        args.deploy_device[i] = str(wanted)
    return args


def write_results(args, runs, shapes, device, elapsed, quiet=False):
    """The summary table, JSON + CSV (--out) and plot (--plot) of the runs so far."""
    rows = summarize(runs, shapes)
    results = {
        "args": vars(args), "wino": wino.__version__, "torch": torch.__version__,
        "host": platform.node(),
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "seconds": elapsed, "summary": rows, "runs": runs,
        "mac_savings": {f"F({m},3)": dict(zip(("all_3x3", "winograd_layers"),
                                               mac_savings(shapes, m))) for m in TILES},
        "conv_shapes": shapes,
    }
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        write_csv(os.path.splitext(args.out)[0] + ".csv", rows)
        if not quiet:
            print(f"results written to {args.out} and {os.path.splitext(args.out)[0]}.csv")
    return rows


def merge(args):
    """--merge: the runs of earlier result files (e.g. one seed per machine) as one table."""
    runs, seconds = [], 0.0
    for path in args.merge:
        with open(path) as f:
            earlier = json.load(f)
        runs += earlier["runs"]
        seconds += earlier["seconds"]
        device = earlier["device"]
    shapes = conv_shapes(ResNet20(), torch.device("cpu"))
    rows = write_results(args, runs, shapes, torch.device("cpu"), seconds)
    print_table(rows, [d for r in runs for d in r["deployments"]])
    print(f"\n{len(runs)} seed(s) from {len(args.merge)} file(s), {seconds:.1f} s of runs on "
          f"{device}")
    if args.plot:
        plot(args.plot, rows)
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.merge:
        return merge(args)
    log = (lambda s: None) if args.quiet else (lambda s: print(s, flush=True))
    device = torch.device(args.device)
    if device.type == "cuda":
        device = torch.device("cuda", device.index or 0)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    args.device = str(device)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    started = time.time()
    train_x, train_y = load_split(args.data_dir, "train")
    test_x, test_y = load_split(args.data_dir, "t10k")
    if args.limit:
        train_x, train_y = train_x[:args.limit], train_y[:args.limit]
        test_x, test_y = test_x[:args.limit], test_y[:args.limit]
    train_data = (train_x.to(device), train_y.to(device))
    test_data = (test_x.to(device), test_y.to(device))
    calib = list(train_data[0][:args.calib_images].split(args.batch_size))
    shapes = conv_shapes(ResNet20().to(device), device)
    log(f"wino {wino.__version__}, torch {torch.__version__}, {args.device}; "
        f"{len(train_x)} training and {len(test_x)} test images")
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        log(f"seed {seed}")
        acc, deployments, bounds = run_seed(seed, args, train_data, test_data, calib, device,
                                            log)
        runs.append({"seed": seed, "acc": acc, "deployments": deployments,
                     "int32_bound": bounds})
        # written after every seed, so that a run cut short keeps the seeds it finished
        rows = write_results(args, runs, shapes, device, time.time() - started, quiet=True)
    print_table(rows, [d for r in runs for d in r["deployments"]])
    elapsed = time.time() - started
    print(f"\n{elapsed:.1f} s in all")
    write_results(args, runs, shapes, device, elapsed)
    if args.plot:
        plot(args.plot, rows)
    mismatched = [d for r in runs for d in r["deployments"] if d.get("identical_logits") is False]
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
