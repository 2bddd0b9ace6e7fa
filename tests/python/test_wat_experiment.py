"""python -m wino.experiments.wat end to end on a tiny synthetic dataset in Fashion-MNIST's
files: every configuration trains and scores, the WAT models deploy on each device asked for,
and the deployed logits equal the emulation's (the script's exit status says so)."""
import gzip
import json
import struct

import numpy as np
import pytest

pytest.importorskip("torch")

from wino.experiments import wat  # noqa: E402


def _write_split(folder, split, count, rng):
    images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=count, dtype=np.uint8)
    with gzip.open(folder / f"{split}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, count, 28, 28) + images.tobytes())
    with gzip.open(folder / f"{split}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, count) + labels.tobytes())


def test_experiment_runs_and_deploys_on_each_device(tmp_path):
    rng = np.random.default_rng(0)
    _write_split(tmp_path, "train", 64, rng)
    _write_split(tmp_path, "t10k", 32, rng)
    out = tmp_path / "wat.json"
    status = wat.main(["--data-dir", str(tmp_path), "--device", "cpu", "--deploy-device", "cpu",
                       "cpu", "--tiles", "4", "--seeds", "1", "--epochs", "1",
                       "--finetune-epochs", "1", "--batch-size", "32", "--calib-images", "32",
                       "--quiet", "--out", str(out)])
    assert status == 0
    result = json.loads(out.read_text())
    acc = result["runs"][0]["acc"]
    assert set(acc) == {"fp32", "qconv", "F4-ptq-max", "F4-ptq-pct", "F4-ptq-clip", "F4-wat"}
    assert all(0.0 <= a <= 100.0 for a in acc.values())
    deployed = result["runs"][0]["deployments"]
    assert [d["device"] for d in deployed] == ["cpu", "cpu"]
    for d in deployed:
        assert d["identical_logits"] is True
        assert d["deployed_acc"] == acc["F4-wat"]
    assert (tmp_path / "wat.csv").read_text().startswith("config,method")


@pytest.mark.parametrize("device", ["tpu", "nonsense:x"])
def test_unknown_deploy_device_is_refused_before_training(device, capsys):
    with pytest.raises(SystemExit) as e:
        wat.parse_args(["--deploy-device", device])
    assert e.value.code == 2
    assert "--deploy-device" in capsys.readouterr().err


def test_cuda_deploy_device_needs_a_gpu():
    import torch
    if torch.cuda.is_available():
        assert wat.parse_args(["--deploy-device", "cuda", "cpu"]).deploy_device == [
            f"cuda:{torch.cuda.current_device()}", "cpu"]
    else:
        with pytest.raises(SystemExit):
            wat.parse_args(["--deploy-device", "cuda"])
