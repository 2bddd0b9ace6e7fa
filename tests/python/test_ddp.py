"""wino.torch under DistributedDataParallel: two processes on the gloo backend train two steps
on halves of each batch, and their gradients and parameters equal a single process training on
the whole batches."""
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import wino.torch as wt

STEPS, BATCH = 2, 8


def make_model():
    torch.manual_seed(0)
    return wt.convert(torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 4, 3, padding=1), torch.nn.Flatten(), torch.nn.Linear(4 * 8 * 8, 5)))


def data():
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(BATCH, 3, 8, 8, generator=g), torch.randint(0, 5, (BATCH,), generator=g))
            for _ in range(STEPS)]


def train(model, batches, shard=None):
    """Two SGD steps; returns the gradients of the last step and the final parameters."""
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, t in batches:
        if shard is not None:
            x, t = x[shard], t[shard]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), t).backward()
        grads = [p.grad.detach().clone() for p in model.parameters()]
        opt.step()
    return grads, [p.detach().clone() for p in model.parameters()]


def worker(rank, world, init_file, out_dir):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=world)
    model = torch.nn.parallel.DistributedDataParallel(make_model())
    half = BATCH // world
    result = train(model, data(), slice(rank * half, (rank + 1) * half))
    torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
    dist.destroy_process_group()


def test_two_processes_equal_one():
    with tempfile.TemporaryDirectory() as d:
        mp.spawn(worker, args=(2, os.path.join(d, "init"), d), nprocs=2, join=True)
        ranks = [torch.load(os.path.join(d, f"rank{r}.pt")) for r in range(2)]
    grads, params = train(make_model(), data())
    assert any(isinstance(m, wt.Conv2d) for m in make_model().modules())
    for r_grads, r_params in ranks:
        for a, b in zip(r_grads + r_params, grads + params):
            assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)
