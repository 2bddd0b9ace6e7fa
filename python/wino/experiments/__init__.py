"""Experiments that run on wino's Python package: `python -m wino.experiments.wat` (Winograd-aware
INT8 training on Fashion-MNIST, docs/wat.md) and `torchrun -m wino.experiments.ddp`
(data-parallel training on wino.torch.Conv2d, docs/python.md)."""
